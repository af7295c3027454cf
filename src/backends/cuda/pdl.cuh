// Programmatic dependent launch (sm_90): a kernel launched with launch_pdl may start while the
// kernel ahead of it on the stream is still running, so that its launch, its set-up and its CTAs'
// arrival overlap the other's last CTAs (for a product that streams its weight in 15 us, the
// microsecond or two between kernels is worth having). In exchange it must not touch global
// memory that the kernel ahead may write or read before dependency_wait() returns, in every
// thread that touches it; allow_dependents() lets the kernel behind it start as its own CTAs
// leave. A grid's completion still implies every earlier grid's, since each waited for the one
// ahead of it. Elsewhere (sm_80) both are no-ops and launch_pdl a plain launch.
#pragma once

#include <cuda_runtime.h>  // cudaLaunchKernelEx's template form

namespace gexec::cuda {

// Blocks the thread until the grid ahead of this one has completed and its writes are visible.
__device__ __forceinline__ void dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
// The grid behind this one may start once every CTA of this grid has called this or exited.
__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, smem, stream>>>(args...), as a programmatic dependent where
// `pdl` (the device is sm_90 or later: the kernel calls dependency_wait before its first access).
template <class... Params, class... Args>
cudaError_t launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, bool pdl,
                       Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl ? 1 : 0;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, static_cast<Args&&>(args)...);
  // A failed launch is also the thread's last error: taken here, or the next cudaGetLastError
  // (after some other launch, in a later run) would report it again.
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}

}  // namespace gexec::cuda
