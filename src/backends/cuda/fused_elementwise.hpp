// The CUDA kernel for FUSED_ELEMENTWISE groups.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec::cuda {

// The kernel for a FUSED_ELEMENTWISE op (cuda.fused_elementwise, KernelImpl::cuda_fused_elementwise).
Result<std::unique_ptr<Kernel>> make_fused_elementwise_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                              const Binding& b, cudaStream_t stream);

}  // namespace gexec::cuda
