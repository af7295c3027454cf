// f8 codes widened to bf16 for gexec's grouped GEMM: every e4m3 and e5m2 value is a bf16 value
// (at most 3 significand bits, exponents within bf16's range), so the widening is exact and the
// tensor-wise scales apply in the product's f32 epilogue (as alpha), where they are exact too.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gexec/ir/dtype.hpp"
#include "gexec/status.hpp"

namespace gexec::cuda {

// dst[i] = the bf16 bits of the f8 code src[i] (dtype f8e4m3 or f8e5m2), i < n; NaN stays NaN.
Status launch_widen_f8(const uint8_t* src, DType f8, uint16_t* dst, int64_t n, cudaStream_t stream);

}  // namespace gexec::cuda
