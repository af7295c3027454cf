// What the skinny GEMM (skinny_gemm.cu, skinny_gemm_sm90.cu) supports, beside its code: decode-shaped
// products, M <= 128 rows of f16/bf16 against a weight stored [N,K] (trans_b: tensor cores) or [K,N]
// (f32 FMAs), with the GEMM_BIAS_ACT epilogue. It is offered before cuBLASLt and taken where its cost
// model (skinny_cost.hpp) says it is faster; `--kernel OP=cuda.skinny_gemm` takes it wherever it can
// run, `--autotune` times both.
// Compiled into the core without CUDA headers, so that the dry-run shows its verdict.
#include <string>

#include "gexec/kernels/declared.hpp"
#include "skinny_cost.hpp"
#include "skinny_plan.hpp"

namespace gexec {
namespace {

Verdict check_skinny(const std::string& name, const Graph& g, const Op& op, const DeviceCaps& caps,
                     const KernelOptions& options) {
  const cuda::SkinnyPlan p = cuda::plan_skinny(g, op, caps.sm_count, caps.cc);
  Verdict v;
  if (!p.rejected.empty()) return v.rejected = p.rejected, v;
  const cuda::SkinnyCost cost = cuda::skinny_cost(p, caps.sm_count);
  if (options.is_forced(op, name)) {
    v.notes.push_back("forced by --kernel; " + cost.describe());
  } else if (!cost.skinny_wins()) {
    v.rejected = cost.describe() + ": cuBLASLt is expected to be as fast or faster";
    return v;
  } else {
    v.notes.push_back(cost.describe());
  }
  v.notes.push_back(std::to_string(p.ctas()) + " CTAs; " + cuda::skinny_order(p));
  return v;
}

KernelDef skinny_def(std::string name, OpType op) {
  KernelDef d = declare_kernel(name, op, Backend::cuda, KernelImpl::cuda_skinny_gemm, 110,
                               op == OpType::GEMM_BIAS_ACT ? 4 : 2,
                               "decode-shaped products (M <= 128, f16/bf16 weight [N,K] on tensor cores: WGMMA fed "
                               "by TMA on sm_90, mma.sync elsewhere; [K,N] on f32 FMAs): the weight read once, K split "
                               "to fill the SMs, partial sums added in f32 in a fixed order; bias, ReLU/GELU/SiLU, "
                               "residual and alpha/beta in its epilogue");
  d.inputs[0] = d.inputs[1] = {DType::f16, DType::bf16};
  d.transposes = true;  // trans_b; a transposed A is refused by the check
  d.acts = op == OpType::GEMM_BIAS_ACT ? std::vector<Act>{Act::none, Act::relu, Act::silu, Act::gelu_erf, Act::gelu} : std::vector<Act>{};
  d.align_bytes = 16;  // 16-byte loads of the weight
  d.min_cc = 80;       // mma.sync m16n8k16 with f16 and bf16 operands
  d.check = [name](const Graph& g, const Op& o, const DeviceCaps& caps, const KernelOptions& options) {
    return check_skinny(name, g, o, caps, options);
  };
  return d;
}

}  // namespace

std::vector<KernelDef> cuda_skinny_kernel_defs() {
  return {skinny_def("cuda.skinny_gemm_bias_act", OpType::GEMM_BIAS_ACT), skinny_def("cuda.skinny_matmul", OpType::MATMUL)};
}

}  // namespace gexec
