// TMA tensor maps for gexec's Hopper kernels (grouped_gemm_sm90.cu, skinny_gemm_sm90.cu): a 2D
// rowmajor tensor read in boxes of whole 128-byte rows in the 128-byte swizzle, which WGMMA's
// K-major shared-memory descriptors read (sm90_async.cuh, desc_sw128).
#pragma once

#include <cuda.h>  // CUtensorMap: a type only, libcuda is not linked

#include <cstdint>
#include <string>

#include "gexec/ir/dtype.hpp"
#include "gexec/status.hpp"

namespace gexec::cuda {

// The K extent of a box: one 128-byte swizzle row.
constexpr int kTmaRowBytes = 128;

// `rows` x `cols` elements of `t` (16-bit or f8; f8 codes go as bytes, TMA only moves them) at
// `ptr`, cols contiguous, read in boxes of `box_rows` x 128 bytes; box elements past the tensor's
// edges read zeros. `who` names the kernel in the error (the driver's entry point missing, or the
// encode refusing the shape or address).
Status encode_tma_map(CUtensorMap* map, DType t, const void* ptr, uint64_t rows, uint64_t cols, uint32_t box_rows,
                      const std::string& who);

}  // namespace gexec::cuda
