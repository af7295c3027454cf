// The collectives of a sharded run's CPU ranks (--tp N on the CPU backend): each rank's kernel
// hands its buffers to the device's HostCommunicator, which computes the collective in host memory
// once every rank has called (communicator.hpp). A test double for NCCL, run on every CI run.
#include <string>

#include "cpu_kernels.hpp"

namespace gexec::cpu {
namespace {

class CollectiveKernel final : public Kernel {
 public:
  CollectiveKernel(HostCommunicator& comm, int rank, CollectiveCall call) : comm_(comm), rank_(rank), call_(std::move(call)) {}
  Status prepare() override { return {}; }
  Status run() override { return comm_.contribute(rank_, call_); }
  bool move_operands(const Binding& b) override {
    call_.in = b.inputs[0];
    call_.out = b.outputs[0];
    return true;
  }

 private:
  HostCommunicator& comm_;
  int rank_;
  CollectiveCall call_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_collective_kernel(const Graph& g, const Op& op, const Binding& binding,
                                                       Communicator* comm, int rank) {
  auto* host = dynamic_cast<HostCommunicator*>(comm);
  GEXEC_TRY(check_collective_comm(op, host, "a host communicator (the CPU ranks)"));
  const Tensor& x = g.tensor(op.inputs[0]);
  return std::unique_ptr<Kernel>(
      new CollectiveKernel(*host, rank, {op.type, x.dtype, x.shape, op.attrs.axis, binding.inputs[0], binding.outputs[0]}));
}

}  // namespace gexec::cpu
