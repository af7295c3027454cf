// One plain cuBLASLt f16 product on caller-owned buffers, with the heuristic's first algorithm:
// the bare library call that the peak measurement and gexec_bench_launch time, outside any graph.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "raii.hpp"

namespace gexec::cuda {

// D (m x n) = X (m x k) * Y (k x n), all f16 and column-major with leading dimensions m, k and m,
// accumulated in f32; with `relu_bias` (f16, m elements) the RELU_BIAS epilogue adds it and ReLU.
class BareGemm {
 public:
  static Result<BareGemm> create(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, const void* relu_bias,
                                 size_t workspace_bytes);
  // Enqueues one product; `workspace` holds at least the workspace_bytes given to create().
  Status run(const void* x, const void* y, void* d, void* workspace, cudaStream_t stream) const;

 private:
  cublasLtHandle_t lt_ = nullptr;
  size_t workspace_bytes_ = 0;
  MatmulDesc desc_;
  MatrixLayout x_, y_, d_;
  cublasLtMatmulHeuristicResult_t algo_{};
};

}  // namespace gexec::cuda
