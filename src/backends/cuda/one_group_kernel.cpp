// The one-group GEMM as a Kernel (one_group_caps.cpp says what it takes and when it is chosen):
// a GEMM_BIAS_ACT planned as a grouped GEMM of one group owning all M rows (offsets = {M}, on the
// device), run by launch_grouped_gemm, whose epilogue applies the bias and any activation. A
// constant B [K,N] is copied transposed into [N,K] once in prepare(), the layout its WGMMA kernel
// reads; a B [K,N] that is not constant runs on its mma.sync kernel as it is.
#include <string>

#include "check.hpp"
#include "cuda_device.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "grouped_gemm.hpp"
#include "grouped_kernel.hpp"
#include "raii.hpp"
#include "transpose.hpp"

namespace gexec::cuda {
namespace {

class OneGroupGemm final : public Kernel {
 public:
  OneGroupGemm(CudaDevice& device, GroupedGemmPlan plan, const Binding& b, bool transpose_b)
      : device_(&device), plan_(std::move(plan)), transpose_b_(transpose_b) {
    bind(b);
  }
  // A run may still be in flight on the stream: the buffers must outlive it.
  ~OneGroupGemm() override { (void)cudaStreamSynchronize(device_->stream()); }

  Status prepare() override {
    auto ws = DeviceMemory::allocate(size_t(plan_.workspace_bytes()));
    if (!ws) return ws.error().with("one-group GEMM workspace");
    workspace_ = std::move(*ws);
    auto st = DeviceMemory::allocate(2 * sizeof(int32_t));
    if (!st) return st.error().with("one-group GEMM status");
    status_ = std::move(*st);
    auto off = DeviceMemory::allocate(sizeof(int32_t));
    if (!off) return off.error().with("one-group GEMM offsets");
    offsets_ = std::move(*off);
    const int32_t rows = int32_t(plan_.tokens);
    GEXEC_CUDA_TRY(cudaMemcpyAsync(offsets_.get(), &rows, sizeof rows, cudaMemcpyHostToDevice, device_->stream()));
    if (transpose_b_) {
      const size_t bytes = size_t(plan_.n * plan_.k) * dtype_size(plan_.in);
      auto t = DeviceMemory::allocate(bytes);
      if (!t) return t.error().with("one-group GEMM: B copied transposed");
      b_nk_ = std::move(*t);
      GEXEC_TRY(launch_transpose(ops_.w, b_nk_.get(), plan_.n, plan_.k, int(dtype_size(plan_.in)), device_->stream()));
      ops_.w = b_nk_.get();
    }
    // `rows` above lives on this stack frame: the copy must have read it before returning.
    GEXEC_CUDA_TRY(cudaStreamSynchronize(device_->stream()));
    return {};
  }
  Status run() override {
    GroupedOperands o = ops_;
    o.offsets = static_cast<const int32_t*>(offsets_.get());
    o.workspace = workspace_.get();
    o.status = static_cast<int32_t*>(status_.get());
    return launch_grouped_gemm(plan_, o, device_->stream());
  }
  std::string algo_description() const override {
    return describe(plan_) + (transpose_b_ ? ", B copied transposed once" : "");
  }
  // f32 accumulation along K in order, the epilogue in f32 rounded once: the default.
  Precision precision() const override { return {}; }
  // A, the bias and C move; B only where it is read in place (its transposed copy was made from the old one).
  bool move_operands(const Binding& b) override {
    if (b.inputs.size() != inputs_ || b.outputs.size() != 1) return false;
    if (transpose_b_ && b.inputs[1] != raw_b_) return false;
    for (const void* p : b.inputs)
      if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
    if (reinterpret_cast<uintptr_t>(b.outputs[0]) % 16 != 0) return false;
    const void* w = ops_.w;
    bind(b);
    if (transpose_b_) ops_.w = w;
    return true;
  }

 private:
  void bind(const Binding& b) {
    inputs_ = b.inputs.size();
    ops_.x = b.inputs[0];
    ops_.w = raw_b_ = b.inputs[1];
    ops_.bias = plan_.has_bias ? b.inputs[2] : nullptr;
    ops_.y = b.outputs[0];
  }

  CudaDevice* device_;
  GroupedGemmPlan plan_;
  bool transpose_b_;
  GroupedOperands ops_;
  const void* raw_b_ = nullptr;  // B as bound
  size_t inputs_ = 0;
  DeviceMemory workspace_, status_, offsets_, b_nk_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_one_group_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                    const Op& op, const Binding& binding) {
  std::string why;
  const auto s = gemm_shape(g, op, &why);
  if (!s) return runtime_error("kernel " + def.name + " for op " + op.name + ": " + why);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != 1)
    return runtime_error("kernel " + def.name + " was bound to the wrong number of buffers");
  const Tensor& a = g.tensor(op.inputs[0]);
  GroupedGemmPlan shape;
  shape.tokens = s->m, shape.k = s->k, shape.n = s->n, shape.groups = 1;
  shape.in = shape.in_w = a.dtype;
  shape.out = g.tensor(op.outputs[0]).dtype;
  shape.has_bias = s->has_bias;
  if (s->has_bias) shape.bias = g.tensor(op.inputs[2]).dtype;
  shape.act = op.attrs.act;
  shape.alpha = float(s->alpha);
  shape.sm_count = device.caps().sm_count;
  shape.cc = device.caps().cc;
  // B [K,N] is [G=1,K,N] as it is; a constant one is copied to [N,K] where that puts it on WGMMA.
  shape.trans_b = s->trans_b;
  bool transpose_b = false;
  if (!s->trans_b && fixed_before_runs(g, op.inputs[1])) {
    GroupedGemmPlan t = shape;
    t.trans_b = true;
    if (plan_grouped_gemm(t).wgmma) shape.trans_b = transpose_b = true;
  }
  GroupedGemmPlan plan = plan_grouped_gemm(shape);
  if (!plan.rejected.empty()) return runtime_error("kernel " + def.name + " for op " + op.name + ": " + plan.rejected);
  return std::unique_ptr<Kernel>(new OneGroupGemm(device, std::move(plan), binding, transpose_b));
}

}  // namespace gexec::cuda
