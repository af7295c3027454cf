// The CUDA kernel family for FUSED_ELEMENTWISE groups, which also runs MUL and SILU as one-step groups.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec::cuda {

// The kernel for a FUSED_ELEMENTWISE op (cuda.fused_elementwise), or a MUL or SILU (cuda.mul,
// cuda.silu), by its KernelDef name.
Result<std::unique_ptr<Kernel>> make_fused_elementwise_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                              const Binding& b, cudaStream_t stream);

bool is_fused_elementwise_kernel(const KernelDef& def);

}  // namespace gexec::cuda
