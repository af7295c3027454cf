// The float64 reference engine's kernels (reference_widen.hpp). Every product and sum is rounded
// on its own (__dmul_rn, __dadd_rn), as the host's code, compiled without fused multiply-adds,
// rounds it: the device's operands are the host's bit for bit.
#include "reference_widen.hpp"

#include <algorithm>

#include "check.hpp"
#include "real_value.cuh"

namespace gexec::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return unsigned(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535)); }

__global__ void widen(F8Side src, int64_t n, double* x, double* ax, double* sq) {
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < n; l += int64_t(gridDim.x) * blockDim.x) {
    const double v = load_real(src, storage_of(src, l), l);
    if (x) x[l] = v;
    if (ax) ax[l] = fabs(v);
    if (sq) sq[l] = __dmul_rn(v, v);
  }
}

__global__ void derive(const double* x, const double* c, int64_t n, double* ax, double* sq, double* p) {
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < n; l += int64_t(gridDim.x) * blockDim.x) {
    const double v = x[l], v2 = __dmul_rn(v, v);
    if (ax) ax[l] = fabs(v);
    if (sq) sq[l] = v2;
    if (p) p[l] = c ? __dadd_rn(v2, c[l]) : v2;
  }
}

__global__ void square_add(const double* part, double* total, int64_t n, bool first) {
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < n; l += int64_t(gridDim.x) * blockDim.x) {
    const double s = __dmul_rn(part[l], part[l]);
    total[l] = first ? s : __dadd_rn(total[l], s);
  }
}

}  // namespace

Status launch_widen(const F8Side& src, int64_t n, double* x, double* ax, double* sq, cudaStream_t stream) {
  if (n <= 0) return {};
  widen<<<blocks_for(n), kThreads, 0, stream>>>(src, n, x, ax, sq);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_derive(const double* x, const double* c, int64_t n, double* ax, double* sq, double* p,
                     cudaStream_t stream) {
  if (n <= 0) return {};
  derive<<<blocks_for(n), kThreads, 0, stream>>>(x, c, n, ax, sq, p);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_square_add(const double* part, double* total, int64_t n, bool first, cudaStream_t stream) {
  if (n <= 0) return {};
  square_add<<<blocks_for(n), kThreads, 0, stream>>>(part, total, n, first);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
