// The grouped GEMM as a Kernel: its plan made once, a workspace for the tile map and a status word
// the device writes each run, read back after the run (after_run) so that bad offsets, which are
// data, fail the run with their index and value instead of being read past. f8 X and W run on the
// FP8 WGMMA kernel where the plan takes them (a Hopper, W [G,N,K], K and N multiples of 128);
// elsewhere they are widened to bf16 first (exactly: f8_widen.hpp), W once where it is a constant.
// Either way their tensor-wise scales multiply alpha. Block scales (X 1x128, W 128x128) run on the
// FP8 kernel only, which applies them per k step; their S come with the binding's scales.
#include <algorithm>
#include <string>

#include "check.hpp"
#include "cuda_device.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/grouped_shape.hpp"
#include "grouped_gemm.hpp"
#include "grouped_kernel.hpp"
#include "f8_widen.hpp"
#include "raii.hpp"

namespace gexec::cuda {
namespace {

// An f8 operand's bf16 copy: its dtype, count and whether it is widened once (a constant).
struct Widened {
  DType f8 = DType::f16;  // f16: not f8, read as it is
  int64_t count = 0;
  bool once = false;
  DeviceMemory copy;
  bool on() const { return is_f8(f8); }
};

class GroupedGemm final : public Kernel {
 public:
  GroupedGemm(CudaDevice& device, GroupedGemmPlan plan, const Binding& b, Widened x, Widened w, int sx_slot,
              int sw_slot)
      : device_(&device), plan_(std::move(plan)), x_(std::move(x)), w_(std::move(w)), sx_slot_(sx_slot),
        sw_slot_(sw_slot) {
    bind(b);
  }
  // A run may still be in flight on the stream: the workspace must outlive it.
  ~GroupedGemm() override { (void)cudaStreamSynchronize(device_->stream()); }

  Status prepare() override {
    auto ws = DeviceMemory::allocate(size_t(plan_.workspace_bytes()));
    if (!ws) return ws.error().with("grouped GEMM workspace");
    workspace_ = std::move(*ws);
    auto st = DeviceMemory::allocate(2 * sizeof(int32_t));
    if (!st) return st.error().with("grouped GEMM status");
    status_ = std::move(*st);
    for (Widened* wd : {&x_, &w_}) {
      if (!wd->on()) continue;
      auto c = DeviceMemory::allocate(size_t(wd->count) * 2);
      if (!c) return c.error().with("grouped GEMM: bf16 copy of an f8 operand");
      wd->copy = std::move(*c);
    }
    if (w_.on() && w_.once) GEXEC_TRY(widen(w_, raw_w_));
    return {};
  }
  Status run() override {
    if (x_.on()) GEXEC_TRY(widen(x_, raw_x_));
    if (w_.on() && !w_.once) GEXEC_TRY(widen(w_, raw_w_));
    GroupedOperands o = ops_;
    if (x_.on()) o.x = x_.copy.get();
    if (w_.on()) o.w = w_.copy.get();
    o.workspace = workspace_.get();
    o.status = static_cast<int32_t*>(status_.get());
    return launch_grouped_gemm(plan_, o, device_->stream());
  }
  Status after_run() override {
    int32_t st[2] = {0, 0};
    GEXEC_CUDA_TRY(cudaMemcpyAsync(st, status_.get(), sizeof st, cudaMemcpyDeviceToHost, device_->stream()));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(device_->stream()));
    if (st[0] == 0) return {};
    // The device names the first bad group and its value; the message is the CPU's and the reference's.
    const int64_t bad = st[0] - 1;
    std::vector<int32_t> ends(size_t(bad + 1), 0);
    GEXEC_CUDA_TRY(cudaMemcpyAsync(ends.data(), ops_.offsets, ends.size() * sizeof(int32_t), cudaMemcpyDeviceToHost,
                                   device_->stream()));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(device_->stream()));
    std::string why = offsets_problem(ends.data(), int64_t(ends.size()), plan_.tokens);
    if (why.empty()) why = "offsets[" + std::to_string(bad) + "] = " + std::to_string(st[1]) + " is invalid";
    return runtime_error(why);
  }
  std::string algo_description() const override { return describe(plan_); }
  // f32 accumulation along K in order, the epilogue in f32 rounded once: the default; the FP8
  // tensor cores' partial sums of each 128 of K in fewer bits, promoted to f32.
  Precision precision() const override { return is_f8(plan_.in) ? fp8_tensor_core_precision(false) : Precision{}; }
  bool move_operands(const Binding& b) override {
    if (b.inputs.size() != inputs_ || b.outputs.size() != 1) return false;
    if (plan_.block_scales && b.scales.size() <= size_t(std::max(sx_slot_, sw_slot_))) return false;
    for (const void* p : b.inputs)
      if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
    if (reinterpret_cast<uintptr_t>(b.outputs[0]) % 16 != 0) return false;
    bind(b);
    return true;
  }

 private:
  Status widen(const Widened& wd, const void* src) {
    return launch_widen_f8(static_cast<const uint8_t*>(src), wd.f8, static_cast<uint16_t*>(wd.copy.get()), wd.count,
                           device_->stream());
  }
  void bind(const Binding& b) {
    inputs_ = b.inputs.size();
    ops_.x = raw_x_ = b.inputs[0];
    ops_.w = raw_w_ = b.inputs[1];
    ops_.offsets = static_cast<const int32_t*>(b.inputs[2]);
    ops_.bias = plan_.has_bias ? b.inputs[3] : nullptr;
    ops_.y = b.outputs[0];
    if (plan_.block_scales && sx_slot_ >= 0 && sw_slot_ >= 0 && b.scales.size() > size_t(std::max(sx_slot_, sw_slot_))) {
      ops_.sx = static_cast<const float*>(b.scales[size_t(sx_slot_)]);
      ops_.sw = static_cast<const float*>(b.scales[size_t(sw_slot_)]);
    }
  }

  CudaDevice* device_;
  GroupedGemmPlan plan_;
  GroupedOperands ops_;
  const void *raw_x_ = nullptr, *raw_w_ = nullptr;  // as bound; f8 ones are read through their copies
  Widened x_, w_;
  int sx_slot_ = -1, sw_slot_ = -1;  // block scales: X's and W's S among the binding's scales
  size_t inputs_ = 0;
  DeviceMemory workspace_, status_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_grouped_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                  const Op& op, const Binding& binding) {
  std::string why;
  const auto s = grouped_shape(g, op, &why);
  if (!s) return runtime_error("kernel " + def.name + " for op " + op.name + ": " + why);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != 1)
    return runtime_error("kernel " + def.name + " was bound to the wrong number of buffers");
  GroupedGemmPlan shape;
  shape.tokens = s->tokens, shape.k = s->k, shape.n = s->n, shape.groups = int(s->groups);
  shape.trans_b = s->trans_b;
  const Tensor& xt = g.tensor(op.inputs[0]);
  const Tensor& wt = g.tensor(op.inputs[1]);
  Widened x, w;
  double alpha = s->alpha;
  shape.block_scales = xt.scale.is_block() && wt.scale.is_block();
  if (is_f8(xt.dtype) && !shape.block_scales) {  // tensor-wise scales (the caps' check): they fold into alpha
    x.f8 = xt.dtype, x.count = xt.numel();
    w.f8 = wt.dtype, w.count = wt.numel(), w.once = fixed_before_runs(g, op.inputs[1]);
    if (xt.scale.values.size() != 1 || wt.scale.values.size() != 1)
      return runtime_error("kernel " + def.name + " for op " + op.name + ": f8 X and W need one scale each");
    alpha *= xt.scale.values[0] * wt.scale.values[0];
  }
  shape.in = xt.dtype, shape.in_w = wt.dtype;
  shape.cc = device.caps().cc;
  shape.mma_sync_only = def.impl == KernelImpl::cuda_grouped_gemm_mma;
  shape.out = g.tensor(op.outputs[0]).dtype;
  shape.has_bias = s->has_bias;
  if (s->has_bias) shape.bias = g.tensor(op.inputs[3]).dtype;
  shape.act = s->act;
  shape.alpha = float(alpha);
  shape.sm_count = device.caps().sm_count;
  GroupedGemmPlan plan = plan_grouped_gemm(shape);
  if (x.on() && plan.rejected.empty()) {
    x = Widened{}, w = Widened{};  // the FP8 kernel reads the codes as they are
  } else if (x.on()) {
    shape.in = shape.in_w = DType::bf16;
    plan = plan_grouped_gemm(shape);
  }
  if (!plan.rejected.empty()) return runtime_error("kernel " + def.name + " for op " + op.name + ": " + plan.rejected);
  const int sx_slot = shape.block_scales ? scale_slot(g, op, op.inputs[0]) : -1;
  const int sw_slot = shape.block_scales ? scale_slot(g, op, op.inputs[1]) : -1;
  if (shape.block_scales && (sx_slot < 0 || sw_slot < 0 || binding.scales.size() <= size_t(std::max(sx_slot, sw_slot))))
    return runtime_error("kernel " + def.name + " for op " + op.name + ": the block scales' S are not bound");
  return std::unique_ptr<Kernel>(
      new GroupedGemm(device, std::move(plan), binding, std::move(x), std::move(w), sx_slot, sw_slot));
}

}  // namespace gexec::cuda
