// What gexec's grouped GEMM supports, beside its code: GROUPED_GEMM with f16, bf16 or f8 X and W
// (f8 with tensor-wise scales: FP8 WGMMA on sm_90a where it fits, else widened to bf16; block
// scales on FP8 WGMMA only), rows of 16 bytes (K and N multiples of 8), f16/bf16/f32 Y and
// bias, every activation. Two declarations of the one kernel family: cuda.grouped_gemm takes
// the WGMMA kernel where it fits on a Hopper (grouped_gemm_sm90.cu) and the mma.sync kernel
// elsewhere (grouped_gemm.cu); cuda.grouped_gemm_mma, never chosen unless forced with --kernel,
// always the mma.sync one, to compare them. Compiled into the core without CUDA headers, so that
// the dry-run shows its verdict.
#include <string>

#include "gexec/ir/grouped_shape.hpp"
#include "gexec/kernels/declared.hpp"
#include "grouped_fit.hpp"

namespace gexec {
namespace {

Verdict check_grouped(const Graph& g, const Op& op, const DeviceCaps& caps, bool mma_only) {
  Verdict v;
  std::string why;
  const auto s = grouped_shape(g, op, &why);
  if (!s) return v.rejected = why, v;
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& w = g.tensor(op.inputs[1]);
  // The plan's rule (grouped_fit.hpp): FP8 tensor cores where the WGMMA kernel takes the shape.
  const bool fp8_wgmma = !mma_only && cuda::grouped_wgmma_fits(caps.cc, s->trans_b, s->k, s->n, DType::f8e4m3);
  if ((is_f8(x.dtype) || is_f8(w.dtype)) && x.scale.is_block()) {  // the graph's rules: both, X 1x128, W 128x128
    if (!fp8_wgmma)
      return v.rejected = "block-scaled f8 X and W run on the FP8 WGMMA kernel only: an sm_90 device, W [G, N, K] "
                          "(trans_b), K and N multiples of 128 (the CPU backend takes the others)", v;
    v.notes.push_back("block-scaled f8 X and W on FP8 WGMMA (sm_90a), each 128 of K's partial sums scaled and "
                      "promoted to f32");
  } else if (is_f8(x.dtype) || is_f8(w.dtype)) {
    for (const Tensor* t : {&x, &w})
      if (t->scale.axis >= 0 || t->scale.is_block() || t->scale.values.size() != 1)
        return v.rejected = "f8 \"" + t->name + "\" has a per-row or per-column scale; this kernel takes "
                            "tensor-wise or block scales (the CPU backend takes the others)", v;
    if (fp8_wgmma)
      v.notes.push_back("f8 X and W on FP8 WGMMA (sm_90a), partial sums promoted to f32 every 128 of K, their scales "
                        "folded into alpha");
    else
      v.notes.push_back("f8 X and W widened to bf16 (exact), " +
                        std::string(w.constant ? "W once before the runs, " : "") + "their scales folded into alpha");
  } else if (x.dtype != w.dtype) {
    return v.rejected = "X and W differ in dtype", v;
  }
  if (s->k % 8 != 0 || s->n % 8 != 0)
    return v.rejected = "K = " + std::to_string(s->k) + " and N = " + std::to_string(s->n) +
                        " must be multiples of 8 (16-byte rows)", v;
  // The plan's own choice for 16-bit operands (grouped_gemm.cu) needs the device's figures; the
  // rule it follows (f8 ones take WGMMA whatever the groups' sizes, as said above):
  if (!is_f8(x.dtype) && !mma_only && cuda::grouped_wgmma_fits(caps.cc, s->trans_b, s->k, s->n, x.dtype))
    v.notes.push_back("WGMMA + TMA on sm_90a where the groups average " + std::to_string(cuda::kWgmmaMinAvgRows) +
                      " rows or more, else mma.sync");
  return v;
}

KernelDef grouped_def(const std::string& name, int priority, bool mma_only, const std::string& summary) {
  KernelDef d = declare_kernel(name, OpType::GROUPED_GEMM, Backend::cuda,
                               mma_only ? KernelImpl::cuda_grouped_gemm_mma : KernelImpl::cuda_grouped_gemm, priority, 4,
                               summary);
  // f8 X and W (tensor-wise scales): FP8 WGMMA on a Hopper where the shape fits, else widened to
  // bf16, exactly; their scales fold into alpha.
  d.inputs[0] = d.inputs[1] = {DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2};
  d.inputs[2] = {DType::i32};
  d.transposes = true;  // trans_b: W [G, N, K]
  d.align_bytes = 16;
  d.min_cc = 80;  // mma.sync m16n8k16 with bf16 operands, cp.async
  d.check = [mma_only](const Graph& g, const Op& op, const DeviceCaps& caps, const KernelOptions& options) {
    Verdict v = check_grouped(g, op, caps, mma_only);
    if (v.ok() && mma_only && !options.is_forced(op, "cuda.grouped_gemm_mma"))
      v.rejected = "the mma.sync kernel alone runs only where --kernel forces it (cuda.grouped_gemm chooses)";
    return v;
  };
  return d;
}

}  // namespace

std::vector<KernelDef> cuda_grouped_kernel_defs() {
  return {grouped_def("cuda.grouped_gemm", 100, false,
                      "mixture-of-experts products: one persistent kernel over every group's tiles, WGMMA fed by TMA "
                      "on Hopper (sm_90a) where the shape fits, mma.sync elsewhere, f32 accumulation; the offsets read "
                      "and checked on the device; alpha, bias and ReLU/GELU/SiLU in its epilogue; rows no group owns "
                      "set to 0"),
          grouped_def("cuda.grouped_gemm_mma", 90, true,
                      "the grouped GEMM's mma.sync kernel alone (cp.async, m16n8k16), for comparison: taken only "
                      "where --kernel forces it")};
}

}  // namespace gexec
