// What the CUDA FP8 kernels support, beside their code (fp8_gemm.cpp, f8_convert.cu): cuBLASLt
// FP8 products and the f8 CAST. Compiled into the core without CUDA headers.
#include <string>

#include "fp8_plan.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

// min_cc (89) covers the device; the plan says what the shapes, layouts and scales need.
Verdict check_fp8_gemm(const Graph& g, const Op& op, const DeviceCaps&) {
  Verdict v;
  cuda::Fp8Plan p = cuda::plan_fp8(g, op);
  v.rejected = p.rejected;
  if (v.ok()) v.notes = std::move(p.notes);
  return v;
}

Verdict check_f8_cast(const Graph& g, const Op& op, const DeviceCaps&) {
  Verdict v;
  if (!is_f8(g.tensor(op.inputs[0]).dtype) && !is_f8(g.tensor(op.outputs[0]).dtype))
    v.rejected = "neither side is f8 (cuda.cast converts those)";
  return v;
}

}  // namespace

std::vector<KernelDef> cuda_fp8_kernel_defs() {
  const std::vector<DType> f8 = {DType::f8e4m3, DType::f8e5m2};
  const std::vector<DType> all(std::begin(kAllDTypes), std::end(kAllDTypes));
  const std::vector<DType> bias = {DType::f16, DType::bf16, DType::f32};
  auto gemm = [&](std::string name, OpType op, std::string summary) {
    KernelDef d;
    d.name = std::move(name);
    d.op = op;
    d.backend = Backend::cuda;
    d.priority = 110;  // before the f16/bf16/f32 GEMM, which takes no f8 anyway
    d.inputs = op == OpType::GEMM_BIAS_ACT ? std::vector<std::vector<DType>>{f8, f8, bias}
                                           : std::vector<std::vector<DType>>{f8, f8};
    d.outputs = all;  // C, and the f32 amax
    d.colmajor = true;
    d.transposes = true;
    d.acts = op == OpType::GEMM_BIAS_ACT ? std::vector<Act>{Act::none, Act::relu, Act::gelu} : std::vector<Act>{};
    d.align_bytes = 16;
    d.min_cc = 89;
    d.summary = std::move(summary);
    d.check = check_fp8_gemm;
    return d;
  };
  KernelDef cast;
  cast.name = "cuda.f8_cast";
  cast.op = OpType::CAST;
  cast.backend = Backend::cuda;
  cast.priority = 20;  // before cuda.cast
  cast.inputs = {all};
  cast.outputs = all;
  cast.colmajor = true;
  cast.min_cc = 70;
  cast.summary = "CAST to or from f8: quantize (real / scale, nearest even, saturating) or dequantize, "
                 "per-tensor or per-row/column scales, and the amax";
  cast.check = check_f8_cast;
  return {
      gemm("cublaslt.fp8_gemm_bias_act", OpType::GEMM_BIAS_ACT,
           "cuBLASLt FP8 GEMM (TN) with scales, amax, fast accumulation and the BIAS/RELU_BIAS/GELU_BIAS epilogues"),
      gemm("cublaslt.fp8_matmul", OpType::MATMUL, "cuBLASLt FP8 GEMM (TN) with scales, amax, fast accumulation"),
      cast,
  };
}

}  // namespace gexec
