// The bare cuBLASLt product (bare_gemm.hpp): descriptors, layouts and the heuristic's first choice.
#include "bare_gemm.hpp"

namespace gexec::cuda {

Result<BareGemm> BareGemm::create(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, const void* relu_bias,
                                  size_t workspace_bytes) {
  BareGemm g;
  g.lt_ = lt;
  g.workspace_bytes_ = workspace_bytes;
  auto desc = make_matmul_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (!desc) return desc.error();
  if (relu_bias) {
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_RELU_BIAS)));
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, relu_bias));
  }
  auto x = make_matrix_layout(CUDA_R_16F, uint64_t(m), uint64_t(k), m);
  if (!x) return x.error();
  auto y = make_matrix_layout(CUDA_R_16F, uint64_t(k), uint64_t(n), k);
  if (!y) return y.error();
  auto d = make_matrix_layout(CUDA_R_16F, uint64_t(m), uint64_t(n), m);
  if (!d) return d.error();
  auto pref = make_preference();
  if (!pref) return pref.error();
  GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(workspace_bytes)));
  int found = 0;
  GEXEC_CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(lt, desc->get(), x->get(), y->get(), d->get(), d->get(),
                                                  pref->get(), 1, &g.algo_, &found));
  if (found < 1) return runtime_error("cuBLASLt has no algorithm for the bare f16 product");
  g.desc_ = std::move(*desc);
  g.x_ = std::move(*x);
  g.y_ = std::move(*y);
  g.d_ = std::move(*d);
  return g;
}

Status BareGemm::run(const void* x, const void* y, void* d, void* workspace, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  // beta is 0, so C is not read: D is passed for it.
  GEXEC_CUBLAS_TRY(cublasLtMatmul(lt_, desc_.get(), &alpha, x, x_.get(), y, y_.get(), &beta, d, d_.get(), d,
                                  d_.get(), &algo_.algo, workspace, workspace_bytes_, stream));
  return {};
}

}  // namespace gexec::cuda
