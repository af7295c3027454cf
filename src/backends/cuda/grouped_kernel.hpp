// The Kernels of the grouped GEMM's family (KernelImpl::cuda_grouped_gemm): a GROUPED_GEMM its
// declaration accepted (grouped_kernel.cpp), and a GEMM_BIAS_ACT run as one group (one_group_kernel.cpp).
#pragma once

#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec::cuda {

class CudaDevice;

Result<std::unique_ptr<Kernel>> make_grouped_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                  const Op& op, const Binding& binding);
Result<std::unique_ptr<Kernel>> make_one_group_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                    const Op& op, const Binding& binding);

}  // namespace gexec::cuda
