// The cuBLASLt FP8 product kernel (fp8_gemm.cpp); what it supports is in fp8_caps.cpp.
#pragma once

#include <memory>

#include "cuda_device.hpp"

namespace gexec::cuda {

Result<std::unique_ptr<Kernel>> make_fp8_gemm(CudaDevice& device, const Graph& g, const Op& op, const Binding& b,
                                              const KernelOptions& options);

}  // namespace gexec::cuda
