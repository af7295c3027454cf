// The CUDA FP8 conversions (f8_convert.hpp). The CAST computes as the reference does: the real
// value in double (stored x scale, real_value.cuh), divided by Y's scale in double, rounded once
// with the shared codec (include/gexec/ir/f8.hpp), so that its bytes equal the reference's.
#include "f8_convert.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "check.hpp"
#include "gexec/ir/f8.hpp"
#include "real_value.cuh"

namespace gexec::cuda {
namespace {

using Side = F8Side;

__device__ void store_real(const Side& s, int64_t storage, int64_t logical, double v) {
  if (s.scale) v /= s.scale[s.axis < 0 ? 0 : s.axis == 0 ? logical / s.cols : logical % s.cols];
  switch (DType(s.dtype)) {
    // One rounding from double, as the reference's (round.hpp gives the same bits on both sides).
    case DType::f16: static_cast<uint16_t*>(s.data)[storage] = rng::round_to_f16_bits(v); break;
    case DType::bf16: static_cast<uint16_t*>(s.data)[storage] = rng::round_to_bf16_bits(v); break;
    case DType::f32: static_cast<float*>(s.data)[storage] = float(v); break;
    case DType::f8e4m3: static_cast<uint8_t*>(s.data)[storage] = f8::encode(v, f8::e4m3()); break;
    case DType::f8e5m2: static_cast<uint8_t*>(s.data)[storage] = f8::encode(v, f8::e5m2()); break;
  }
}

// amax as the bits of a non-negative float: their integer order is the floats' order.
__global__ void f8_cast(Side x, Side y, int64_t n, unsigned int* amax) {
  float local = 0;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < n; l += int64_t(gridDim.x) * blockDim.x) {
    const double v = load_real(x, storage_of(x, l), l);
    if (fabs(v) > local) local = float(fabs(v));  // NaN compares false: left out
    store_real(y, storage_of(y, l), l, v);
  }
  if (amax) {
    for (int off = 16; off > 0; off /= 2) local = fmaxf(local, __shfl_down_sync(0xffffffffu, local, off));
    if ((threadIdx.x & 31) == 0) atomicMax(amax, __float_as_uint(local));
  }
}

__global__ void transpose_u8(const uint8_t* in, uint8_t* out, int64_t rows, int64_t cols) {
  __shared__ uint8_t tile[32][33];
  const int64_t r0 = int64_t(blockIdx.y) * 32, c0 = int64_t(blockIdx.x) * 32;
  // Read a tile of in ([cols, rows]) along its rows, write it along out's rows.
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

__global__ void pack_u8(const uint8_t* in, bool transposed, int64_t rows, int64_t cols, uint8_t* out, int64_t rows_p,
                        int64_t cols_p, int64_t batch, bool repeat_rows) {
  const int64_t per = rows_p * cols_p, n = per * batch;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t z = i / per, c = i % cols_p;
    int64_t r = (i % per) / cols_p;
    if (repeat_rows && r >= rows) r = rows - 1;
    const uint8_t* m = in + z * rows * cols;
    out[i] = r >= 0 && r < rows && c < cols ? m[transposed ? c * rows + r : r * cols + c] : uint8_t(0);
  }
}

}  // namespace

Status launch_f8_cast(const F8Side& x, const F8Side& y, int64_t n, void* amax, cudaStream_t stream) {
  if (amax) GEXEC_CUDA_TRY(cudaMemsetAsync(amax, 0, sizeof(float), stream));
  if (n <= 0) return {};
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 132 * 16);
  f8_cast<<<unsigned(blocks), threads, 0, stream>>>(x, y, n, static_cast<unsigned int*>(amax));
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_transpose_u8(const void* in, void* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return {};
  const dim3 block(32, 8);
  const dim3 grid(unsigned((cols + 31) / 32), unsigned((rows + 31) / 32));
  transpose_u8<<<grid, block, 0, stream>>>(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), rows, cols);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_pack_u8(const void* in, bool transposed, int64_t rows, int64_t cols, void* out, int64_t rows_p,
                      int64_t cols_p, int64_t batch, bool repeat_rows, cudaStream_t stream) {
  const int64_t n = rows_p * cols_p * batch;
  if (n <= 0) return {};
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 132 * 16);
  pack_u8<<<unsigned(blocks), threads, 0, stream>>>(static_cast<const uint8_t*>(in), transposed, rows, cols,
                                                     static_cast<uint8_t*>(out), rows_p, cols_p, batch, repeat_rows);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
