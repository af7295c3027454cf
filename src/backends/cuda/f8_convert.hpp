// The CUDA FP8 conversions: the f8 CAST kernel (quantize, dequantize, requantize, with amax) and
// the byte transpose that puts an FP8 operand into the K-contiguous form cuBLASLt needs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec::cuda {

// CAST where X or Y is f8 (kernel table: cuda.f8_cast; f8_cast.cpp); sm_count sizes the quantizing
// kernel's grid.
Result<std::unique_ptr<Kernel>> make_f8_cast_kernel(const Graph& g, const Op& op, const Binding& b,
                                                    cudaStream_t stream, int sm_count);

// One side of an f8 CAST: its bytes, dtype, layout and scales (a device array of doubles: one
// value, or one per row (axis 0) or column (axis 1); null for dtypes other than f8), or a block
// scale: S (f32, row-major [ceil(rows / br), ceil(cols / bc)]) on the device.
struct F8Side {
  void* data = nullptr;
  int dtype = 0;  // DType
  bool colmajor = false;
  int64_t rows = 1, cols = 1;
  int axis = -1;
  const double* scale = nullptr;
  const float* block_s = nullptr;
  int64_t br = 0, bc = 0;
};

// y = x, n elements by logical index, through real values; amax (a device float), where given,
// is zeroed and then receives max |real value of x|.
Status launch_f8_cast(const F8Side& x, const F8Side& y, int64_t n, void* amax, cudaStream_t stream);

// The quantizing CAST: S of every block of y (y.br x y.bc; y.block_s is ignored) from x's real
// values, amax / the largest finite f8 value in f32 (1 for a block of zeros), written to s, and y
// = round(x / S). Rows of 1 x (8..256) blocks of a row-major f16/bf16/f32 x take one pass with
// vector loads; any other form a pass per block for its amax, then one for the values.
Status launch_f8_quantize_blocks(const F8Side& x, const F8Side& y, float* s, int sm_count, cudaStream_t stream);

// One operand's block scales in the layout cuBLASLt reads: out[o * ld + i] = s[o * so + i * si]
// for i < inner (1 for inner <= i < ld), o < outer (fp8_plan.hpp's ScaleArrangement).
Status launch_arrange_scales(const float* s, float* out, int64_t outer, int64_t ld, int64_t inner, int64_t so,
                             int64_t si, cudaStream_t stream);

// out[r * cols + c] = in[c * rows + r] for one-byte elements: in is [cols, rows] row-major.
Status launch_transpose_u8(const void* in, void* out, int64_t rows, int64_t cols, cudaStream_t stream);

// out[z * rows_p * cols_p + r * cols_p + c] for z < batch, r < rows_p, c < cols_p: the element
// (r, c) of matrix z of the rows x cols byte matrices `in` (each stored [rows, cols] row-major, or
// [cols, rows] where `transposed`, one after the other), 0 beyond it; with `repeat_rows`, rows from
// `rows` on repeat row rows - 1 (their columns beyond `cols` still 0). The padded, K-contiguous
// copy of an FP8 operand whose sizes are not multiples of 16, or of a batch.
Status launch_pack_u8(const void* in, bool transposed, int64_t rows, int64_t cols, void* out, int64_t rows_p,
                      int64_t cols_p, int64_t batch, bool repeat_rows, cudaStream_t stream);

}  // namespace gexec::cuda
