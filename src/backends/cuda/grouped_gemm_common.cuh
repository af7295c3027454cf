// Device helpers shared by the grouped GEMM's kernels (grouped_gemm.cu: mma.sync, any sm_80+;
// grouped_gemm_sm90.cu: WGMMA + TMA, sm_90a): the epilogue's reads of the bias and its rounded
// stores (its activation: activate.cuh). Internal linkage: each file has its own copy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "activate.cuh"
#include "element_f32.cuh"
#include "gexec/ir/dtype.hpp"
#include "gexec/ir/op.hpp"

namespace gexec::cuda {
namespace {

// Two adjacent columns (i even, N even: 4- or 8-byte aligned), each rounded once.
__device__ __forceinline__ void store2(void* y, DType t, int64_t i, float v0, float v1) {
  switch (t) {
    case DType::f16: store_pair(static_cast<__half*>(y) + i, v0, v1); break;
    case DType::bf16: store_pair(static_cast<__nv_bfloat16*>(y) + i, v0, v1); break;
    default: store_pair(static_cast<float*>(y) + i, v0, v1); break;
  }
}

}  // namespace
}  // namespace gexec::cuda
