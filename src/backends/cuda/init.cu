// Drawing graph inputs on the device with the host's own arithmetic (rng/*.hpp), so that the
// bits equal generate_input()'s. Built with --fmad=false: a contracted a*b+c would change them.
#include "elementwise.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "check.hpp"

namespace gexec::cuda {
namespace {

template <DType T>
__global__ void fill_random_kernel(void* dst, int64_t n, rng::DrawParams p) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = rng::draw(p, uint64_t(i));
    if constexpr (T == DType::f16) static_cast<uint16_t*>(dst)[i] = round_to_f16_bits(v);
    else if constexpr (T == DType::bf16) static_cast<uint16_t*>(dst)[i] = round_to_bf16_bits(v);
    else static_cast<float*>(dst)[i] = round_to_f32(v);
  }
}

}  // namespace

Status launch_fill_random(void* dst, DType t, int64_t n, const rng::DrawParams& p, cudaStream_t stream) {
  if (n < 0) return runtime_error("drawing " + std::to_string(n) + " elements");
  if (n == 0) return Status::success();
  if (!dst) return runtime_error("drawing into a null buffer");
  constexpr int threads = 256;
  const int blocks = int(std::clamp<int64_t>((n + threads - 1) / threads, 1, 4096));
  switch (t) {
    case DType::f16: fill_random_kernel<DType::f16><<<blocks, threads, 0, stream>>>(dst, n, p); break;
    case DType::bf16: fill_random_kernel<DType::bf16><<<blocks, threads, 0, stream>>>(dst, n, p); break;
    case DType::f32: fill_random_kernel<DType::f32><<<blocks, threads, 0, stream>>>(dst, n, p); break;
    default: return runtime_error("drawing an unknown dtype");
  }
  GEXEC_CUDA_TRY(cudaGetLastError());
  return Status::success();
}

}  // namespace gexec::cuda
