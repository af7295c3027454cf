// A tensor element's real value on the device, as include/gexec/ir/real_value.hpp's load_real
// computes it on the host: the stored value in double, times the f8 scale in double.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "f8_convert.hpp"
#include "gexec/ir/f8.hpp"

namespace gexec::cuda {

// The scale of logical (row-major) element `logical` of one side: 1 where it has none.
__device__ inline double side_scale(const F8Side& s, int64_t logical) {
  if (s.block_s) {
    const int64_t r = logical / s.cols, c = logical % s.cols, block_cols = (s.cols + s.bc - 1) / s.bc;
    return double(s.block_s[(r / s.br) * block_cols + c / s.bc]);
  }
  if (s.scale) return s.scale[s.axis < 0 ? 0 : s.axis == 0 ? logical / s.cols : logical % s.cols];
  return 1.0;
}

__device__ inline double load_real(const F8Side& s, int64_t storage, int64_t logical) {
  double v = 0;
  switch (DType(s.dtype)) {
    case DType::f16: v = __half2float(static_cast<const __half*>(s.data)[storage]); break;
    case DType::bf16: v = __bfloat162float(static_cast<const __nv_bfloat16*>(s.data)[storage]); break;
    case DType::f32: v = static_cast<const float*>(s.data)[storage]; break;
    case DType::f8e4m3: v = f8::decode(static_cast<const uint8_t*>(s.data)[storage], f8::e4m3()); break;
    case DType::f8e5m2: v = f8::decode(static_cast<const uint8_t*>(s.data)[storage], f8::e5m2()); break;
    case DType::i32: v = static_cast<const int32_t*>(s.data)[storage]; break;
  }
  return v * side_scale(s, logical);
}

// Where logical (row-major) element l of a rows x cols tensor is stored.
__device__ inline int64_t storage_of(const F8Side& s, int64_t l) {
  return s.colmajor ? (l % s.cols) * s.rows + l / s.cols : l;
}

}  // namespace gexec::cuda
