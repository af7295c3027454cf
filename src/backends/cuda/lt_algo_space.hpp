// cuBLASLt's whole algorithm space for one product, beyond the heuristic's answer: every algorithm
// id (cublasLtMatmulAlgoGetIds), each tile and split-K count its capabilities allow, each vetted by
// cublasLtMatmulAlgoCheck, added as candidates for --autotune (`--algo-space all`). Every candidate
// is still checked against the reference when tuned (autotune.cpp), which the split-K wrong-result
// bug of cuBLASLt 13.1 on Hopper (docs/design.md) makes necessary.
#pragma once

#include <cublasLt.h>

#include "lt_algo.hpp"

namespace gexec::cuda {

// The split-K counts tried where an algorithm supports split-K (1: no split).
inline constexpr int kAlgoSpaceSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
// At most this many candidates are added per product: the autotuner times what it is given.
inline constexpr int kAlgoSpaceMax = 1024;

struct AlgoSpaceTypes {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F, a = CUDA_R_16F, b = CUDA_R_16F, c = CUDA_R_16F, d = CUDA_R_16F;
};

// Adds to `c` the configurations cublasLtMatmulAlgoCheck accepts for the product the descriptors
// describe, skipping those already there (by LtCandidates::name); reduction in the compute type
// only (allow_compute_type_reductions_only's rule). Returns how many were added.
int add_algo_space(cublasLtHandle_t handle, const AlgoSpaceTypes& types, const MatmulDesc& desc, const MatrixLayout& a,
                   const MatrixLayout& b, const MatrixLayout& cl, const MatrixLayout& d, LtCandidates& c);

}  // namespace gexec::cuda
