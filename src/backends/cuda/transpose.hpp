// A matrix copied transposed: the layout a kernel needs from an operand stored the other way (the
// FP8 product's K-contiguous bytes, the one-group GEMM's [N,K] weight).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gexec/status.hpp"

namespace gexec::cuda {

// out[r * cols + c] = in[c * rows + r] for elements of elem_bytes (1 or 2): in is [cols, rows]
// row-major, out [rows, cols].
Status launch_transpose(const void* in, void* out, int64_t rows, int64_t cols, int elem_bytes, cudaStream_t stream);

}  // namespace gexec::cuda
