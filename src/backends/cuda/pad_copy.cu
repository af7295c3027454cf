// The block copy of pad_copy.hpp. A warp moves 32 runs of 16 bytes of one column at a time,
// staged in shared memory: an aligned side is read or written as one 16-byte vector per lane, a
// misaligned side one element per lane with consecutive lanes on consecutive elements, so both
// sides are coalesced. (Lanes that each wrote their own 16-byte run element by element made the
// copy out of the padded D 3x slower than the copies in, 72 against 22 us at 4095x4097 f16.)
#include "pad_copy.hpp"

#include <algorithm>
#include <string>

#include "check.hpp"

namespace gexec::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMaxGridY = 65535;

template <class T, bool kSrcVec, bool kDstVec>
__global__ void pad_copy_kernel(T* dst, int64_t ld_dst, const T* src, int64_t ld_src, int64_t rows, int64_t cols) {
  constexpr int kRun = 16 / sizeof(T);  // elements in one lane's 16 bytes
  constexpr int kSeg = 32 * kRun;       // elements one warp moves at a time
  __shared__ uint4 stage[kThreads];
  const int lane = threadIdx.x % 32;
  T* seg = reinterpret_cast<T*>(stage + (threadIdx.x - lane));  // this warp's kSeg elements
  const int64_t segs = (rows + kSeg - 1) / kSeg;
  const int64_t first = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32, step = int64_t(gridDim.x) * kWarps;
  for (int64_t c = blockIdx.y; c < cols; c += gridDim.y) {
    const T* s = src + c * ld_src;
    T* d = dst + c * ld_dst;
    for (int64_t g = first; g < segs; g += step) {  // the same g across the warp
      const int64_t r0 = g * kSeg, mine = r0 + int64_t(lane) * kRun;
      if constexpr (kSrcVec) {
        // An aligned column's run starting below `rows` lies within its leading dimension.
        if (mine < rows) stage[threadIdx.x] = *reinterpret_cast<const uint4*>(s + mine);
#pragma unroll
        for (int j = 0; j < kRun; ++j)
          if (mine + j >= rows) seg[lane * kRun + j] = T(0);
      } else {
#pragma unroll
        for (int j = 0; j < kRun; ++j) {
          const int64_t r = r0 + j * 32 + lane;
          seg[j * 32 + lane] = r < rows ? s[r] : T(0);
        }
      }
      __syncwarp();
      if constexpr (kDstVec) {
        if (mine < rows) *reinterpret_cast<uint4*>(d + mine) = stage[threadIdx.x];
      } else {
#pragma unroll
        for (int j = 0; j < kRun; ++j) {
          const int64_t r = r0 + j * 32 + lane;
          if (r < rows) d[r] = seg[j * 32 + lane];
        }
      }
      __syncwarp();  // the next segment overwrites the stage
    }
  }
}

bool vec_aligned(const void* p, int64_t ld, int elem_bytes) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld * elem_bytes % 16 == 0;
}

template <class T>
void launch(void* dst, int64_t ld_dst, const void* src, int64_t ld_src, int64_t rows, int64_t cols, cudaStream_t st) {
  constexpr int64_t kSeg = 32 * 16 / sizeof(T);
  const int64_t segs = (rows + kSeg - 1) / kSeg;
  const dim3 grid(unsigned(std::min<int64_t>((segs + kWarps - 1) / kWarps, 1024)),
                  unsigned(std::min<int64_t>(cols, kMaxGridY)));
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  const bool sv = vec_aligned(src, ld_src, sizeof(T)), dv = vec_aligned(dst, ld_dst, sizeof(T));
  if (sv && dv) pad_copy_kernel<T, true, true><<<grid, kThreads, 0, st>>>(d, ld_dst, s, ld_src, rows, cols);
  else if (sv) pad_copy_kernel<T, true, false><<<grid, kThreads, 0, st>>>(d, ld_dst, s, ld_src, rows, cols);
  else if (dv) pad_copy_kernel<T, false, true><<<grid, kThreads, 0, st>>>(d, ld_dst, s, ld_src, rows, cols);
  else pad_copy_kernel<T, false, false><<<grid, kThreads, 0, st>>>(d, ld_dst, s, ld_src, rows, cols);
}

}  // namespace

Status launch_pad_copy(void* dst, int64_t ld_dst, const void* src, int64_t ld_src, int64_t rows, int64_t cols,
                       int elem_bytes, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return {};
  switch (elem_bytes) {
    case 2: launch<uint16_t>(dst, ld_dst, src, ld_src, rows, cols, stream); break;
    case 4: launch<uint32_t>(dst, ld_dst, src, ld_src, rows, cols, stream); break;
    default: return runtime_error("pad copy of " + std::to_string(elem_bytes) + "-byte elements is not supported");
  }
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
