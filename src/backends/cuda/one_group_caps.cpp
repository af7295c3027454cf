// What the one-group GEMM supports, beside its code (one_group_kernel.cpp): GEMM_BIAS_ACT run by
// gexec's grouped GEMM as a single group of all M rows, so that the activations cuBLASLt has no
// epilogue for (the erf GELU, SiLU) are applied in the product's own epilogue instead of by a
// second kernel reading C back. f16/bf16 A [M,K] row-major and B [N,K] (trans_b), or a constant B
// [K,N] copied transposed once; C row-major, f16/bf16/f32; bias and alpha; no residual.
//
// When it is chosen: only where it runs on WGMMA (sm_90, K % 64 == 0, N % 128 == 0, M >= 64), the
// activation is one cuBLASLt lacks, and M is at least min_rows for that activation. Measured on an
// H100 (2026-12-07, f16, N 16384, K 4096, B [N,K], `gexec gemm --iters 30`, us) against cuBLASLt's
// product with the tail kernel that applies the bias and the activation after it:
//   rows               1024            2048            4096
//   SiLU, this kernel  194.7           384.1           775.0
//   SiLU, cuBLASLt     198.0           394.1           814.9
//   erf GELU, this     210.0           406.5           803.8
//   erf GELU, cuBLASLt 197.2           394.5           813.9
// (the erf GELU's epilogue costs this kernel about 40 us at 4096 rows over the bias alone; in that
// run cuBLASLt's tail kernel applied the bias alone, a fault since fixed: the same bytes moved).
// Another H100 with the fix: erf GELU 814.7 against 832.8 at 4096 rows, cuBLASLt 205 at 1024; SiLU
// 197.5 against 200.8 (1024) and 780.1 against 825.0 (4096); docs/performance.md.
// Elsewhere cuBLASLt's product (and its tail) is as fast or faster; `--kernel
// OP=cuda.gemm_one_group` takes this kernel wherever it can run, on mma.sync where WGMMA does not
// fit. Compiled into the core without CUDA headers, so that the dry-run shows its verdict.
#include <string>

#include "gemm_view.hpp"
#include "grouped_fit.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

constexpr const char* kName = "cuda.gemm_one_group";
// The fewest rows where it was measured faster than cuBLASLt and its tail kernel (above).
constexpr int64_t min_rows(Act act) { return act == Act::silu ? 1024 : 4096; }

Verdict check_one_group(const Graph& g, const Op& op, const DeviceCaps& caps, const KernelOptions& options) {
  Verdict v;
  const auto s = accepted_gemm_shape(g, op, v);
  if (!s) return v;
  const Tensor& a = g.tensor(op.inputs[0]);
  const Tensor& b = g.tensor(op.inputs[1]);
  if (s->batch != 1 || a.rank() != 2) return v.rejected = "a batched product (it takes rank-2 A and C)", v;
  if (s->trans_a) return v.rejected = "trans_a: A must be [M,K] row-major", v;
  if (s->layout_a != Layout::rowmajor || s->layout_b != Layout::rowmajor || s->layout_c != Layout::rowmajor)
    return v.rejected = "a colmajor operand: A, B and C must be row-major", v;
  if (s->has_residual) return v.rejected = "a residual: its epilogue adds none", v;
  if ((a.dtype != DType::f16 && a.dtype != DType::bf16) || a.dtype != b.dtype)
    return v.rejected = "A and B must be both f16 or both bf16", v;
  if (s->k % 8 != 0 || s->n % 8 != 0)
    return v.rejected = "K = " + std::to_string(s->k) + ", N = " + std::to_string(s->n) +
                        ": both must be multiples of 8 (16-byte rows)", v;
  if (s->m > INT32_MAX) return v.rejected = "M beyond int32", v;
  const bool b_once = !s->trans_b && b.constant;  // B [K,N] copied to [N,K] once, before the runs
  // The grouped GEMM plan's rule (grouped_fit.hpp) for one group of M rows, W [N,K] as copied.
  const bool wgmma = cuda::grouped_wgmma_fits(caps.cc, s->trans_b || b_once, s->k, s->n, a.dtype) &&
                     s->m >= cuda::kWgmmaMinAvgRows;
  const Act act = op.attrs.act;
  if (!options.is_forced(op, kName)) {
    if (!wgmma)
      return v.rejected = "chosen only where it runs on WGMMA (" + cuda::one_group_wgmma_rule_text(a.dtype) +
                          ", B [N,K] or a constant); cuBLASLt runs the rest", v;
    if (cuda::lt_has_epilogue(act))
      return v.rejected = "cuBLASLt's epilogue applies this activation (or none is asked): its product is the faster", v;
    if (s->m < min_rows(act))
      return v.rejected = "M = " + std::to_string(s->m) + " is below " + std::to_string(min_rows(act)) +
                          " rows, where cuBLASLt's product and the tail kernel that applies the " +
                          std::string(act_name(act)) + " were measured as fast or faster", v;
  } else {
    v.notes.push_back("forced by --kernel");
  }
  v.notes.push_back(std::string("one group of the grouped GEMM: ") +
                    (wgmma ? std::string("WGMMA + TMA (sm_90a)")
                           : "mma.sync (WGMMA takes " + cuda::one_group_wgmma_rule_text(a.dtype) + ")") +
                    ", bias and " + std::string(act_name(act)) + " in its epilogue");
  if (wgmma && b_once)
    v.notes.push_back("B [K,N] is a constant: copied transposed into [N,K] once, before the runs (" +
                      std::to_string(s->n * s->k * int64_t(dtype_size(b.dtype)) >> 20) + " MiB more)");
  return v;
}

}  // namespace

std::vector<KernelDef> cuda_one_group_kernel_defs() {
  KernelDef d = declare_kernel(kName, OpType::GEMM_BIAS_ACT, Backend::cuda, KernelImpl::cuda_grouped_gemm, 105, 3,
                               "GEMM_BIAS_ACT on gexec's grouped GEMM as one group (WGMMA fed by TMA on sm_90): the erf "
                               "GELU and SiLU, which cuBLASLt has no epilogue for, in the product's epilogue; f32 "
                               "accumulation in order");
  d.inputs[0] = d.inputs[1] = {DType::f16, DType::bf16};
  d.transposes = true;  // trans_b; a transposed A is refused by the check
  d.acts = {Act::none, Act::relu, Act::gelu, Act::gelu_erf, Act::silu};
  d.align_bytes = 16;
  d.min_cc = 80;  // its mma.sync kernel where WGMMA does not fit (forced)
  d.check = check_one_group;
  return {d};
}

}  // namespace gexec
