// f16, bf16 and f32 elements read as f32 (exactly) or written from it (rounded once): typed (one
// value, or two adjacent ones in one store), and one element of a device array whose dtype is
// known at run time. The epilogues' bias and residual reads and stores of the skinny and grouped
// GEMMs, and the quantizing CAST's values coded one by one. Internal linkage: each file has its
// own copy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gexec/ir/dtype.hpp"

namespace gexec::cuda {
namespace {

__device__ __forceinline__ float as_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float as_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float as_f32(float v) { return v; }

// x and y as two adjacent 16-bit elements of type T, each rounded once: the 32-bit word that holds
// them (x in the lower half, the earlier address).
__device__ __forceinline__ uint32_t pack_pair(__half, float x, float y) {
  const __half2 v = __floats2half2_rn(x, y);
  return *reinterpret_cast<const uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t pack_pair(__nv_bfloat16, float x, float y) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// x and y into c[0] and c[1], each rounded once: one 4- or 8-byte store (c aligned to the pair).
template <class T>
__device__ __forceinline__ void store_pair(T* c, float x, float y) {
  *reinterpret_cast<uint32_t*>(c) = pack_pair(T{}, x, y);
}
__device__ __forceinline__ void store_pair(float* c, float x, float y) { *reinterpret_cast<float2*>(c) = make_float2(x, y); }

__device__ __forceinline__ float load_f32(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::f16: return as_f32(static_cast<const __half*>(p)[i]);
    case DType::bf16: return as_f32(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store_f32(void* p, DType t, int64_t i, float v) {
  switch (t) {
    case DType::f16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case DType::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

}  // namespace
}  // namespace gexec::cuda
