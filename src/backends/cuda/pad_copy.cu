// The block copy of pad_copy.hpp: one thread per element of a column (consecutive threads read and
// write consecutive addresses, so every access is coalesced whatever the pitches), columns spread
// over the grid's second dimension.
#include "pad_copy.hpp"

#include <algorithm>
#include <string>

#include "check.hpp"

namespace gexec::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGridY = 65535;

template <class T>
__global__ void pad_copy_kernel(T* dst, int64_t ld_dst, const T* src, int64_t ld_src, int64_t rows, int64_t cols) {
  for (int64_t c = blockIdx.y; c < cols; c += gridDim.y) {
    const T* s = src + c * ld_src;
    T* d = dst + c * ld_dst;
    for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x)
      d[r] = s[r];
  }
}

}  // namespace

Status launch_pad_copy(void* dst, int64_t ld_dst, const void* src, int64_t ld_src, int64_t rows, int64_t cols,
                       int elem_bytes, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return {};
  const dim3 grid(unsigned(std::min<int64_t>((rows + kThreads - 1) / kThreads, 64)),
                  unsigned(std::min<int64_t>(cols, kMaxGridY)));
  switch (elem_bytes) {
    case 2:
      pad_copy_kernel<<<grid, kThreads, 0, stream>>>(static_cast<uint16_t*>(dst), ld_dst,
                                                     static_cast<const uint16_t*>(src), ld_src, rows, cols);
      break;
    case 4:
      pad_copy_kernel<<<grid, kThreads, 0, stream>>>(static_cast<uint32_t*>(dst), ld_dst,
                                                     static_cast<const uint32_t*>(src), ld_src, rows, cols);
      break;
    default:
      return runtime_error("pad copy of " + std::to_string(elem_bytes) + "-byte elements is not supported");
  }
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
