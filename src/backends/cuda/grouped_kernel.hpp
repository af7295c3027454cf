// The Kernel for a GROUPED_GEMM the grouped GEMM's declaration accepted (KernelImpl::cuda_grouped_gemm).
#pragma once

#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec::cuda {

class CudaDevice;

Result<std::unique_ptr<Kernel>> make_grouped_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                  const Op& op, const Binding& binding);

}  // namespace gexec::cuda
