// The transposed copy (transpose.hpp): 32 x 32 tiles through shared memory, so that both the reads
// of `in` and the writes of `out` run along rows.
#include <cuda_runtime.h>

#include <string>

#include "check.hpp"
#include "transpose.hpp"

namespace gexec::cuda {
namespace {

template <class T>
__global__ void transpose_tiles(const T* in, T* out, int64_t rows, int64_t cols) {
  __shared__ T tile[32][33];  // 33: a column of the tile falls in 32 different banks
  const int64_t r0 = int64_t(blockIdx.y) * 32, c0 = int64_t(blockIdx.x) * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;
    if (c < cols && r < rows) tile[i][threadIdx.x] = in[c * rows + r];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = tile[threadIdx.x][i];
  }
}

}  // namespace

Status launch_transpose(const void* in, void* out, int64_t rows, int64_t cols, int elem_bytes, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return {};
  if (elem_bytes != 1 && elem_bytes != 2)
    return runtime_error("transposed copy of " + std::to_string(elem_bytes) + "-byte elements (it takes 1 or 2)");
  if ((rows + 31) / 32 > 65535) return runtime_error("transposed copy of " + std::to_string(rows) + " rows: too many");
  const dim3 block(32, 8);
  const dim3 grid(unsigned((cols + 31) / 32), unsigned((rows + 31) / 32));
  if (elem_bytes == 1)
    transpose_tiles<<<grid, block, 0, stream>>>(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), rows, cols);
  else
    transpose_tiles<<<grid, block, 0, stream>>>(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), rows, cols);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
