// The declarations of each backend's kernels, each defined in a *_caps.cpp beside the kernel.
#pragma once

#include <vector>

#include "gexec/kernels/kernel_def.hpp"

namespace gexec {

std::vector<KernelDef> cublaslt_kernel_defs();        // src/backends/cuda/cublaslt_caps.cpp
std::vector<KernelDef> cuda_elementwise_kernel_defs(); // src/backends/cuda/elementwise_caps.cpp
std::vector<KernelDef> cuda_fused_kernel_defs();       // src/backends/cuda/fused_caps.cpp
std::vector<KernelDef> cpu_kernel_defs();             // src/backends/cpu/cpu_caps.cpp (GEXEC_HAVE_CPU)

}  // namespace gexec
