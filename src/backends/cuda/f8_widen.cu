// f8 codes to bf16 (f8_widen.hpp): a grid-stride loop, one code per thread and step.
#include "f8_widen.hpp"

#include "check.hpp"
#include "gexec/ir/f8.hpp"
#include "gexec/ir/rounding.hpp"

namespace gexec::cuda {
namespace {

// f8::decode gives the exact value; round_to_bf16_bits of it is exact too (it is a bf16 value).
template <bool E5M2>
__global__ void widen_f8_kernel(const uint8_t* src, uint16_t* dst, int64_t n) {
  const f8::Format fmt = E5M2 ? f8::e5m2() : f8::e4m3();
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = round_to_bf16_bits(f8::decode(src[i], fmt));
}

}  // namespace

Status launch_widen_f8(const uint8_t* src, DType f8, uint16_t* dst, int64_t n, cudaStream_t stream) {
  if (!is_f8(f8)) return runtime_error("widening: " + std::string(dtype_name(f8)) + " is not an f8 dtype");
  if (n <= 0) return {};
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65535LL * 8);
  if (f8 == DType::f8e5m2)
    widen_f8_kernel<true><<<unsigned(blocks), threads, 0, stream>>>(src, dst, n);
  else
    widen_f8_kernel<false><<<unsigned(blocks), threads, 0, stream>>>(src, dst, n);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
