// What gexec reads of cuBLASLt's algorithms and asks of its heuristic, shared by the cuBLASLt GEMM
// and the FP8 product: configuration attributes, split-K, the reduction schemes it allows.
#pragma once

#include <cublasLt.h>

#include <cstdint>

#include "raii.hpp"

namespace gexec::cuda {

// One configuration attribute of an algorithm, read into a zeroed 64-bit value (they are 16 or 32
// bits wide; all little-endian); 0 when it cannot be read.
inline uint64_t algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  // cuBLASLt wants the attribute's exact size: asked first with an empty buffer, else tried.
  size_t size = 0;
  const bool asked = cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size) == CUBLAS_STATUS_SUCCESS &&
                     size > 0 && size <= sizeof(uint64_t);
  for (size_t s : {asked ? size : size_t(4), size_t(4), size_t(2), size_t(8)}) {
    uint64_t v = 0;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, s, &written) == CUBLAS_STATUS_SUCCESS) return v;
  }
  return 0;
}

// A split-K algorithm's reduction step stores the product in D's dtype, and a bias and activation
// are applied to that (seen on the H200 with the BIAS epilogue as well as GELU's): one rounding
// more than the graph's GEMM_BIAS_ACT, which the kernels declare (Precision::product_rounded).
inline bool splits_k(const cublasLtMatmulAlgo_t& algo) { return algo_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) > 1; }

// Split-K partial sums reduced in the compute type (f32) only: the INPLACE and OUTPUT_TYPE schemes
// round every partial sum to D's dtype and add them in it, which on the H200 put small f16 results
// of a 127x65x33 product off by up to 9% (errors of about ulp(partial sum)).
inline Status allow_compute_type_reductions_only(const MatmulPreference& pref) {
  return set_attribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                       uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
}

}  // namespace gexec::cuda
