// ALL_REDUCE, ALL_GATHER and REDUCE_SCATTER over NCCL on the device's communication stream, after
// an event of its compute stream, the first reader of the result waiting for an event of the
// communication stream (so that the ops between run beside the collective). NCCL joins and
// splits along the leading dimension only: a gather along a later axis lands in a workspace, rank
// after rank, and strided copies put each rank's slice in its place; a reduce-scatter along a later
// axis first copies each rank's slice of the input together. One process drives every device, so
// a collective's N calls go inside an NCCL group (Communicator::group_begin/end), and NCCL defers
// them until the group ends: the copies that must follow the call wait until then too.
#include "nccl_collective.hpp"

#include <functional>
#include <string>
#include <vector>

#if GEXEC_HAVE_NCCL
#include <nccl.h>
#endif

namespace gexec {

#if GEXEC_HAVE_NCCL
namespace cuda {
namespace {

#define GEXEC_NCCL_TRY(call)                                                                              \
  do {                                                                                                    \
    const ncclResult_t gexec_nccl_r_ = (call);                                                            \
    if (gexec_nccl_r_ != ncclSuccess)                                                                     \
      return runtime_error(std::string("NCCL: ") + #call + " failed: " + ncclGetErrorString(gexec_nccl_r_)); \
  } while (0)

class NcclCommunicator final : public Communicator {
 public:
  ~NcclCommunicator() override {
    for (ncclComm_t c : comms_) (void)ncclCommDestroy(c);
  }
  static Result<std::shared_ptr<Communicator>> open(const std::vector<int>& ordinals) {
    auto c = std::make_shared<NcclCommunicator>();
    c->comms_.assign(ordinals.size(), nullptr);
    GEXEC_NCCL_TRY(ncclCommInitAll(c->comms_.data(), int(ordinals.size()), ordinals.data()));
    return std::shared_ptr<Communicator>(c);
  }
  int ranks() const override { return int(comms_.size()); }
  std::string describe() const override { return nccl_build_info(); }
  Status group_begin() override {
    GEXEC_NCCL_TRY(ncclGroupStart());
    ++depth_;
    return {};
  }
  Status group_end() override {
    --depth_;
    GEXEC_NCCL_TRY(ncclGroupEnd());
    std::vector<std::function<Status()>> steps;
    steps.swap(after_);
    for (auto& f : steps) GEXEC_TRY(f());
    return {};
  }
  ncclComm_t comm(int rank) const { return comms_[size_t(rank)]; }
  // Runs f once the collectives enqueued so far are on their streams: at the group's end.
  Status then(std::function<Status()> f) {
    if (depth_ == 0) return f();
    after_.push_back(std::move(f));
    return {};
  }

 private:
  std::vector<ncclComm_t> comms_;
  int depth_ = 0;
  std::vector<std::function<Status()>> after_;
};

ncclDataType_t nccl_type(DType t) {
  return t == DType::f16 ? ncclFloat16 : t == DType::bf16 ? ncclBfloat16 : ncclFloat32;
}

class NcclCollective final : public Kernel {
 public:
  NcclCollective(CudaDevice& dev, NcclCommunicator& comm, const Graph& g, const Op& op, const Binding& b)
      : dev_(dev), comm_(comm), type_(op.type), dtype_(g.tensor(op.inputs[0]).dtype), in_(b.inputs[0]), out_(b.outputs[0]) {
    const Tensor& x = g.tensor(op.inputs[0]);
    const Tensor& whole = op.type == OpType::ALL_GATHER ? g.tensor(op.outputs[0]) : x;
    esize_ = size_t(dtype_size(dtype_));
    count_ = size_t(x.numel());
    outer_ = 1;
    for (int i = 0; i < op.attrs.axis && i < whole.rank(); ++i) outer_ *= size_t(whole.shape[size_t(i)]);
    whole_bytes_ = size_t(whole.bytes());
    ranks_ = size_t(op.attrs.ranks);
  }
  Status prepare() override {
    if (type_ != OpType::ALL_REDUCE && outer_ > 1) {
      auto m = DeviceMemory::allocate(whole_bytes_);
      if (!m) return m.error().with("the workspace of a collective along a later axis");
      ws_ = std::move(*m);
    }
    auto s = dev_.comm_stream();
    if (!s) return s.error();
    comm_stream_ = *s;
    for (Event* e : {&ready_, &done_}) {
      auto made = make_event(cudaEventDisableTiming);
      if (!made) return made.error();
      *e = std::move(*made);
    }
    return {};
  }
  // On the communication stream, after the compute stream's work so far (the product that feeds it).
  Status run() override {
    GEXEC_CUDA_TRY(cudaEventRecord(ready_.get(), dev_.stream()));
    GEXEC_CUDA_TRY(cudaStreamWaitEvent(comm_stream_, ready_.get(), 0));
    GEXEC_TRY(enqueue(comm_stream_));
    // NCCL enqueues a grouped call at the group's end: what follows it in the stream waits too.
    return comm_.then([this]() -> Status {
      GEXEC_TRY(dev_.make_current());  // the group ends on the last rank's device
      GEXEC_TRY(after(comm_stream_));
      GEXEC_CUDA_TRY(cudaEventRecord(done_.get(), comm_stream_));
      return {};
    });
  }
  Status wait_for_results() override {
    GEXEC_CUDA_TRY(cudaStreamWaitEvent(dev_.stream(), done_.get(), 0));
    return {};
  }
  // The collective itself, and the copies before it (a reduce-scatter along a later axis).
  Status enqueue(cudaStream_t s) {
    const ncclComm_t c = comm_.comm(dev_.rank());
    const ncclDataType_t t = nccl_type(dtype_);
    if (type_ == OpType::ALL_REDUCE) {
      GEXEC_NCCL_TRY(ncclAllReduce(in_, out_, count_, t, ncclSum, c, s));
      return {};
    }
    if (type_ == OpType::ALL_GATHER) {
      GEXEC_NCCL_TRY(ncclAllGather(in_, outer_ == 1 ? out_ : ws_.get(), count_, t, c, s));
      return {};
    }
    // REDUCE_SCATTER: each rank's slice made contiguous first (in is [outer][rank][chunk]).
    const void* src = in_;
    if (outer_ > 1) {
      for (size_t q = 0; q < ranks_; ++q)
        GEXEC_CUDA_TRY(cudaMemcpy2DAsync(static_cast<char*>(ws_.get()) + q * slice(), chunk(),
                                         static_cast<const char*>(in_) + q * chunk(), ranks_ * chunk(), chunk(), outer_,
                                         cudaMemcpyDeviceToDevice, s));
      src = ws_.get();
    }
    GEXEC_NCCL_TRY(ncclReduceScatter(src, out_, slice() / esize_, t, ncclSum, c, s));
    return {};
  }
  // The copies after it: a gather along a later axis lands in ws as [rank][outer][chunk]; out is
  // [outer][rank][chunk].
  Status after(cudaStream_t s) {
    if (type_ != OpType::ALL_GATHER || outer_ == 1) return {};
    for (size_t q = 0; q < ranks_; ++q)
      GEXEC_CUDA_TRY(cudaMemcpy2DAsync(static_cast<char*>(out_) + q * chunk(), ranks_ * chunk(),
                                       static_cast<const char*>(ws_.get()) + q * slice(), chunk(), chunk(), outer_,
                                       cudaMemcpyDeviceToDevice, s));
    return {};
  }
  // One rank's slice of the whole tensor along the axis: outer_ rows of chunk() bytes.
  size_t slice() const { return whole_bytes_ / ranks_; }
  size_t chunk() const { return slice() / outer_; }

  bool move_operands(const Binding& b) override {
    in_ = b.inputs[0];
    out_ = b.outputs[0];
    return true;
  }
  std::string note() const override {
    return type_ != OpType::ALL_REDUCE && outer_ > 1 ? "NCCL along the leading dimension, with strided copies through a workspace"
                                                     : "";
  }

 private:
  CudaDevice& dev_;
  NcclCommunicator& comm_;
  OpType type_;
  DType dtype_;
  void* in_;
  void* out_;
  size_t esize_ = 0, count_ = 0, outer_ = 1, whole_bytes_ = 0, ranks_ = 1;
  DeviceMemory ws_;
  cudaStream_t comm_stream_ = nullptr;
  Event ready_, done_;  // the feeding work done on the compute stream; the collective done
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_nccl_collective(CudaDevice& dev, const Graph& g, const Op& op, const Binding& b) {
  auto* comm = dynamic_cast<NcclCommunicator*>(dev.communicator());
  GEXEC_TRY(check_collective_comm(op, comm, "an NCCL communicator (the CUDA devices)"));
  return std::unique_ptr<Kernel>(new NcclCollective(dev, *comm, g, op, b));
}

}  // namespace cuda

Result<std::shared_ptr<Communicator>> open_nccl_communicator(const std::vector<int>& ordinals) {
  if (ordinals.empty()) return bad_input("a communicator needs at least one device");
  return cuda::NcclCommunicator::open(ordinals);
}

std::string nccl_build_info() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "NCCL (version unknown)";
  // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9.
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

#else  // built without NCCL: the build says so, and a sharded run on CUDA says why it cannot run.

namespace cuda {
Result<std::unique_ptr<Kernel>> make_nccl_collective(CudaDevice&, const Graph&, const Op& op, const Binding&) {
  return runtime_error("op " + op.name + ": gexec was built without NCCL (" + nccl_build_info() + ")");
}
}  // namespace cuda

Result<std::shared_ptr<Communicator>> open_nccl_communicator(const std::vector<int>&) {
  return runtime_error("a sharded run on CUDA needs NCCL: " + nccl_build_info());
}

std::string nccl_build_info() { return "none (NCCL was not found when gexec was configured)"; }

#endif

}  // namespace gexec
