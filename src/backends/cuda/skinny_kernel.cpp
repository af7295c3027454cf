// The skinny GEMM as a Kernel: its plan made once, a workspace for the split-K sums, one or two
// launches per run, and rebinding for cold-L2 timing (rotating operand sets).
#include <string>

#include "cuda_device.hpp"
#include "gexec/kernels/precision.hpp"
#include "raii.hpp"
#include "skinny_gemm.hpp"

namespace gexec::cuda {
namespace {

class SkinnyGemm final : public Kernel, public Tunable {
 public:
  SkinnyGemm(CudaDevice& device, SkinnyPlan plan, const Binding& b) : device_(&device), plan_(std::move(plan)) {
    bind(b);
  }
  // A run may still be in flight on the stream: the workspace must outlive it.
  ~SkinnyGemm() override { (void)cudaStreamSynchronize(device_->stream()); }

  Status prepare() override {
    if (plan_.workspace_bytes() > 0 && !workspace_.get()) {
      auto ws = DeviceMemory::allocate(size_t(plan_.workspace_bytes()));
      if (!ws) return ws.error().with("skinny GEMM workspace");
      workspace_ = std::move(*ws);
    }
    return {};
  }
  Status run() override {
    SkinnyOperands o = ops_;
    o.workspace = workspace_.get();
    return launch_skinny_gemm(plan_, o, device_->stream());
  }
  std::string algo_description() const override {
    if (plan_.wgmma)
      return "skinny [N,K] weight on WGMMA + TMA, " + std::to_string(plan_.ctas()) + " CTAs of " +
             std::to_string(plan_.block_n) + " weight rows x " + std::to_string(plan_.row_tile) + " rows of A, " +
             std::to_string(plan_.stages) + " stages; " + skinny_order(plan_);
    return "skinny " + std::string(plan_.nk ? "[N,K]" : "[K,N]") + " weight, " + std::to_string(plan_.ctas()) +
           " CTAs (" + std::to_string(plan_.row_tiles) + " row tiles of " + std::to_string(plan_.row_tile) + " x " +
           std::to_string(plan_.col_blocks) + " column blocks x " + std::to_string(plan_.splits) + " K splits); " +
           skinny_order(plan_);
  }
  Tunable* tunable() override { return this; }
  // f32 accumulation of K products in a fixed order (skinny_order): within the f32 bound over the
  // whole of K that the default declares; the epilogue in f32, rounded once; GELU through expf.
  Precision precision() const override { return {}; }
  bool move_operands(const Binding& b) override { return rebind(b); }

  int variant_count() const override { return 1; }
  int selected_variant() const override { return 0; }
  Status select_variant(int i) override {
    return i == 0 ? Status{} : runtime_error("the skinny GEMM has one variant");
  }
  std::string variant_name(int) const override { return "skinny"; }
  std::string signature() const override { return {}; }
  // Every operand moves: the plan holds no address.
  bool rebind(const Binding& b) override {
    if (b.inputs.size() != inputs_ || b.outputs.size() != 1) return false;
    for (const void* p : b.inputs)
      if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
    bind(b);
    return true;
  }

 private:
  void bind(const Binding& b) {
    inputs_ = b.inputs.size();
    ops_.a = b.inputs[0];
    ops_.w = b.inputs[1];
    ops_.bias = plan_.shape.has_bias ? b.inputs[2] : nullptr;
    ops_.res = plan_.shape.has_residual ? b.inputs.back() : nullptr;
    ops_.c = b.outputs[0];
  }

  CudaDevice* device_;
  SkinnyPlan plan_;
  SkinnyOperands ops_;
  size_t inputs_ = 0;
  DeviceMemory workspace_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_skinny_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                 const Op& op, const Binding& binding) {
  SkinnyPlan plan = plan_skinny(g, op, device.caps().sm_count, device.caps().cc);
  if (!plan.rejected.empty()) return runtime_error("kernel " + def.name + " for op " + op.name + ": " + plan.rejected);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != 1 || binding.inputs.size() < 2)
    return runtime_error("kernel " + def.name + " was bound to " + std::to_string(binding.inputs.size()) +
                         " inputs and " + std::to_string(binding.outputs.size()) + " outputs");
  return std::unique_ptr<Kernel>(new SkinnyGemm(device, std::move(plan), binding));
}

}  // namespace gexec::cuda
