// What the CUDA FP8 kernels support, beside their code (fp8_gemm.cpp, f8_convert.cu): cuBLASLt
// FP8 products and the f8 CAST. Compiled into the core without CUDA headers.
#include <string>

#include "fp8_plan.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

// cuBLASLt's block scale modes (VEC128_32F, BLK128x128_32F) are Hopper's.
constexpr const char* kBlockScaleArch =
    "block scales run on CUDA through cuBLASLt's Hopper modes (1x128, 128x128), used on sm_90 only, where "
    "they were measured; run with --backend cpu";

// min_cc (89) covers the device; the plan says what the shapes, layouts and scales need.
Verdict check_fp8_gemm(const Graph& g, const Op& op, const DeviceCaps& caps, const KernelOptions&) {
  Verdict v;
  if (g.tensor(op.inputs[0]).scale.is_block() && caps.cc != 90) {
    v.rejected = kBlockScaleArch;
    return v;
  }
  cuda::Fp8Plan p = cuda::plan_fp8(g, op);
  v.rejected = p.rejected;
  if (v.ok()) v.notes = std::move(p.notes);
  return v;
}

Verdict check_f8_cast(const Graph& g, const Op& op, const DeviceCaps&, const KernelOptions&) {
  Verdict v;
  if (!is_f8(g.tensor(op.inputs[0]).dtype) && !is_f8(g.tensor(op.outputs[0]).dtype))
    v.rejected = "neither side is f8 (cuda.cast converts those)";
  return v;
}

}  // namespace

std::vector<KernelDef> cuda_fp8_kernel_defs() {
  const std::vector<DType> f8 = {DType::f8e4m3, DType::f8e5m2};
  const std::vector<DType> all(std::begin(kAllDTypes), std::end(kAllDTypes));
  auto gemm = [&](std::string name, OpType op, std::string summary) {
    // Priority above the f16/bf16/f32 GEMM, which takes no f8 anyway.
    KernelDef d = declare_kernel(std::move(name), op, Backend::cuda, KernelImpl::cublaslt_fp8_gemm, 110,
                                 op == OpType::GEMM_BIAS_ACT ? 3 : 2, std::move(summary));
    d.inputs[0] = d.inputs[1] = f8;  // a bias keeps f16/bf16/f32
    d.outputs = all;  // C, and the f32 amax
    d.colmajor = true;
    d.transposes = true;
    d.batched = true;  // strided batches; B shared or one per entry
    if (op == OpType::GEMM_BIAS_ACT) d.acts = {Act::none, Act::relu, Act::gelu};
    d.align_bytes = 16;
    d.min_cc = 89;
    d.check = check_fp8_gemm;
    return d;
  };
  // Priority above cuda.cast, which converts the other dtypes.
  KernelDef cast = declare_kernel("cuda.f8_cast", OpType::CAST, Backend::cuda, KernelImpl::cuda_f8_cast, 20, 1,
                                  "CAST to or from f8: quantize (real / scale, nearest even, saturating) or "
                                  "dequantize, per-tensor, per-row/column or block scales, the amax, and S of each "
                                  "block where the CAST computes it (one pass over X for rows of 1xN blocks)");
  cast.inputs = {all};
  cast.outputs = all;
  cast.colmajor = true;
  cast.min_cc = 70;
  cast.check = check_f8_cast;
  return {
      gemm("cublaslt.fp8_gemm_bias_act", OpType::GEMM_BIAS_ACT,
           "cuBLASLt FP8 GEMM (TN) with scales, amax, fast accumulation and the BIAS/RELU_BIAS/GELU_BIAS epilogues"),
      gemm("cublaslt.fp8_matmul", OpType::MATMUL, "cuBLASLt FP8 GEMM (TN) with scales, amax, fast accumulation"),
      cast,
  };
}

}  // namespace gexec
