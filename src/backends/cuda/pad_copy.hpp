// Copies a column-major block between buffers of different leading dimensions (the padded GEMM's
// copies in and out). cudaMemcpy2DAsync does the same but runs far below the memory bandwidth when
// a pitch is not a multiple of 16 bytes, which is exactly the case padding exists for.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gexec/status.hpp"

namespace gexec::cuda {

// dst[r + c * ld_dst] = src[r + c * ld_src] for r < rows, c < cols; elements of elem_bytes (2 or 4).
// Where dst's columns start on 16-byte boundaries (ld_dst and dst aligned), the rows from `rows`
// up to the next 16 bytes are written with zeros; nothing else outside the block is touched.
Status launch_pad_copy(void* dst, int64_t ld_dst, const void* src, int64_t ld_src, int64_t rows, int64_t cols,
                       int elem_bytes, cudaStream_t stream);

}  // namespace gexec::cuda
