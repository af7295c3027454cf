// What the cuBLASLt GEMM kernels support, beside their code (src/backends/cuda/cublaslt_gemm.cpp).
// Compiled into the core without CUDA headers, so that selection and dry-runs need no GPU.
#include <string>

#include "gemm_plan.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

// The plan (gemm_plan.hpp) decides; its notes say what runs beyond the one cuBLASLt call.
Verdict check_gemm(const Graph& g, const Op& op, const DeviceCaps&, const KernelOptions& options) {
  cuda::GemmPlan p = cuda::plan_gemm(g, op, options);
  Verdict v;
  v.rejected = std::move(p.rejected);
  v.notes = std::move(p.notes);
  return v;
}

KernelDef gemm_def(std::string kernel_name, OpType op, std::string summary) {
  KernelDef d = declare_kernel(std::move(kernel_name), op, Backend::cuda, KernelImpl::cublaslt_gemm, 100,
                               op == OpType::GEMM_BIAS_ACT ? 4 : 2, std::move(summary));
  d.colmajor = true;
  d.transposes = true;
  d.batched = true;
  d.acts = op == OpType::GEMM_BIAS_ACT ? std::vector<Act>{Act::none, Act::relu, Act::silu, Act::gelu_erf, Act::gelu} : std::vector<Act>{};
  // Tensor-core kernels read 16-byte vectors; the preference passes the actual alignment too.
  d.align_bytes = 16;
  // bf16 tensor cores (and the bf16 GEMMs cuBLASLt offers) start with Ampere, sm_80.
  d.min_cc = 80;
  d.check = check_gemm;
  return d;
}

}  // namespace

std::vector<KernelDef> cublaslt_kernel_defs() {
  return {
      gemm_def("cublaslt.gemm_bias_act", OpType::GEMM_BIAS_ACT,
               "cuBLASLt GEMM with the bias and activation in its epilogue (RELU_BIAS, GELU_BIAS, ...), a "
               "residual as its C times beta"),
      gemm_def("cublaslt.matmul", OpType::MATMUL, "cuBLASLt GEMM, alpha * op(A) * op(B)"),
  };
}

}  // namespace gexec
