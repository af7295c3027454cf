// The FUSED_ELEMENTWISE kernel on the host: the group's own kernel generated (fused_source.hpp)
// and compiled once at set-up (nvrtc_kernel.hpp), or, where that fails, the group's program
// (fused_program.hpp) on the interpreter of fused_kernel.cuh in the instantiation for its number
// of slots; one launch per run either way.
#include "fused_elementwise.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"
#include "fault.hpp"
#include "fused_kernel.cuh"
#include "fused_program.hpp"
#include "fused_source.hpp"
#include "nvrtc_kernel.hpp"

namespace gexec::cuda {
namespace {

using fused::kThreads;
using fused::kVec;
using fused::Program;

// The narrowest instantiation that holds the program's slots.
using Launch = void (*)(Program, bool);
Launch kernel_for(int slots) {
  if (slots <= 2) return fused::fused_kernel<2>;
  if (slots <= 3) return fused::fused_kernel<3>;
  if (slots <= 4) return fused::fused_kernel<4>;
  return fused::fused_kernel<kFusedSlots>;
}

class FusedKernel final : public Kernel {
 public:
  FusedKernel(const Program& p, int slots, std::string source, cudaStream_t stream)
      : p_(p), kernel_(kernel_for(slots)), source_(std::move(source)), stream_(stream) {}
  Status prepare() override {
    // A thread per chunk: with a grid-stride loop over 16 blocks per SM the H200 ran the 4-op chain
    // on 32M elements 7% slower (52.9 against 49.4 us), too few loads in flight to hide the
    // arithmetic. Beyond kMaxBlocks (2^31 elements) the loop strides over the rest.
    static_assert(kFusedSourceVec == kVec, "both kernels take chunks of the same size");
    constexpr int64_t kMaxBlocks = int64_t(1) << 20;
    const int64_t chunks = (p_.n + kVec - 1) / kVec;
    blocks_ = int(std::clamp<int64_t>((chunks + kThreads - 1) / kThreads, 1, kMaxBlocks));
    if (compiled_ || !note_.empty()) return {};
    // A failure to compile is not an error of the run: the interpreter computes the same values.
    auto k = fault::refuse_compile() ? Result<std::shared_ptr<const NvrtcKernel>>(runtime_error("refused (GEXEC_FAULT=compile)"))
                                     : NvrtcKernel::get(source_, kFusedEntry);
    if (k) compiled_ = *k;
    else note_ = "the group's kernel was not compiled (" + k.error().message + "); it runs on the program interpreter";
    return {};
  }
  Status run() override {
    if (p_.n <= 0) return {};
    const int threads = fault::break_launch() ? 0 : kThreads;
    if (compiled_) {
      FusedParams fp;
      std::copy(p_.in, p_.in + kGroupMaxInputs, fp.in);
      std::copy(p_.out, p_.out + kGroupMaxOutputs, fp.out);
      fp.n = p_.n;
      fp.cols = p_.cols;
      fp.vec = vec();
      return compiled_->launch(dim3(unsigned(blocks_)), dim3(unsigned(threads)), &fp, stream_);
    }
    kernel_<<<blocks_, threads, 0, stream_>>>(p_, vec());
    GEXEC_CUDA_TRY(cudaGetLastError());
    return {};
  }
  std::string algo_description() const override {
    return compiled_ ? "generated kernel (compiled in " + std::to_string(int(compiled_->compile_ms() + 0.5)) + " ms)"
                     : "program interpreter";
  }
  std::string note() const override { return note_; }
  // Nothing is kept from the buffers between runs; the 16-byte path is chosen per run.
  bool move_operands(const Binding& b) override {
    if (int(b.inputs.size()) != p_.n_in || int(b.outputs.size()) != p_.n_out) return false;
    for (int i = 0; i < p_.n_in; ++i) p_.in[i] = b.inputs[size_t(i)];
    for (int k = 0; k < p_.n_out; ++k) p_.out[k] = b.outputs[size_t(k)];
    return true;
  }

 private:
  bool vec() const {
    auto aligned = [](const void* q) { return (reinterpret_cast<uintptr_t>(q) & 15u) == 0; };
    for (int i = 0; i < p_.n_in; ++i)
      if (!p_.in_bias[i] && !aligned(p_.in[i])) return false;
    for (int k = 0; k < p_.n_out; ++k)
      if (!aligned(p_.out[k])) return false;
    return true;
  }
  Program p_;
  Launch kernel_;
  std::string source_;
  std::shared_ptr<const NvrtcKernel> compiled_;
  std::string note_;
  cudaStream_t stream_;
  int blocks_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_fused_elementwise_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                              const Binding& b, cudaStream_t stream) {
  const std::string where = "kernel " + def.name + " for op " + op.name;
  if (def.impl != KernelImpl::cuda_fused_elementwise || op.type != OpType::FUSED_ELEMENTWISE)
    return runtime_error(where + ": not its kernel");
  if (auto problems = check_op(g, op); !problems.empty()) return runtime_error(where + ": " + problems[0]);
  if (b.inputs.size() != op.inputs.size() || b.outputs.size() != op.outputs.size())
    return runtime_error(where + ": the binding does not match the op's operands");
  const Tensor& first = g.tensor(op.outputs[0]);
  const Layout layout = first.layout;
  const FusedProgram prog = plan_fused_program(op.attrs, int(op.inputs.size()));
  if (!prog.error.empty()) return runtime_error(where + ": " + prog.error);
  if (int(prog.code.size()) > kFusedMaxInstrs) return runtime_error(where + ": the group's program is too long");
  Program p;
  p.n_in = int(op.inputs.size());
  p.n_out = int(op.outputs.size());
  p.n_code = int(prog.code.size());
  p.n_eager = eager_prefix(prog);
  for (size_t i = 0; i < prog.code.size(); ++i) p.code[i] = prog.code[i];
  p.n = first.numel();
  p.cols = first.shape.back();
  for (int i = 0; i < p.n_in; ++i) {
    const Tensor& t = g.tensor(op.inputs[size_t(i)]);
    if (!b.inputs[size_t(i)]) return runtime_error(where + ": an input has no buffer");
    p.in[i] = b.inputs[size_t(i)];
    p.in_t[i] = uint8_t(t.dtype);
    p.in_bias[i] = t.numel() != p.n;
    if (!p.in_bias[i] && t.layout != layout) return runtime_error(where + ": operands stored in different layouts");
  }
  for (int k = 0; k < p.n_out; ++k) {
    const Tensor& t = g.tensor(op.outputs[size_t(k)]);
    if (!b.outputs[size_t(k)]) return runtime_error(where + ": an output has no buffer");
    if (t.layout != layout) return runtime_error(where + ": operands stored in different layouts");
    p.out[k] = b.outputs[size_t(k)];
    p.out_t[k] = uint8_t(t.dtype);
  }
  std::vector<FusedOperand> operands;
  std::vector<DType> out_types;
  for (int i = 0; i < p.n_in; ++i) operands.push_back({DType(p.in_t[i]), p.in_bias[i] != 0});
  for (int k = 0; k < p.n_out; ++k) out_types.push_back(DType(p.out_t[k]));
  return std::unique_ptr<Kernel>(
      std::make_unique<FusedKernel>(p, slots_used(prog), fused_source(op.attrs, operands, out_types), stream));
}

}  // namespace gexec::cuda
