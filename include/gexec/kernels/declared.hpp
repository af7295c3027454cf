// The declarations of each backend's kernels, each defined in a *_caps.cpp beside the kernel,
// and the list the kernel table is assembled from.
#pragma once

#include <vector>

#include "gexec/kernels/kernel_def.hpp"

namespace gexec {

std::vector<KernelDef> cublaslt_kernel_defs();        // src/backends/cuda/cublaslt_caps.cpp
std::vector<KernelDef> cuda_elementwise_kernel_defs(); // src/backends/cuda/elementwise_caps.cpp
std::vector<KernelDef> cpu_kernel_defs();             // src/backends/cpu/cpu_caps.cpp

#if GEXEC_HAVE_CPU
inline constexpr bool kCpuBuilt = true;
#else
inline constexpr bool kCpuBuilt = false;
#endif

// One line per file of declarations: a new family of kernels adds its line here. The CUDA
// declarations are always listed, so that a dry-run selects for a GPU on any machine; the CPU's
// only where its backend is built.
struct KernelDeclarations {
  std::vector<KernelDef> (*defs)();
  bool built;
};
inline constexpr KernelDeclarations kKernelDeclarations[] = {
    {cublaslt_kernel_defs, true},
    {cuda_elementwise_kernel_defs, true},
    {cpu_kernel_defs, kCpuBuilt},
};

}  // namespace gexec
