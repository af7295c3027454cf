// The skinny GEMM (skinny_gemm.cu): gexec's own kernel for decode-shaped products, M <= 128 rows
// against a large f16/bf16 weight, bound by reading the weight once. Its plan and refusals are in
// skinny_plan.hpp, its declaration in skinny_caps.cpp, its cost model in skinny_cost.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "gexec/exec/device.hpp"
#include "skinny_plan.hpp"

namespace gexec::cuda {

class CudaDevice;  // cuda_device.hpp (not included: nvcc compiles this header too)

struct SkinnyOperands {
  const void* a = nullptr;     // [M,K] rowmajor
  const void* w = nullptr;     // [K,N] rowmajor, or [N,K] where plan.nk
  const void* bias = nullptr;  // [N], where the shape has one
  const void* res = nullptr;   // [M,N] rowmajor, where the shape has one
  void* c = nullptr;           // [M,N] rowmajor
  void* workspace = nullptr;   // plan.workspace_bytes(), where plan.splits > 1
};

// Enqueues the product (one launch, two where K is split) on `stream`.
Status launch_skinny_gemm(const SkinnyPlan& plan, const SkinnyOperands& ops, cudaStream_t stream);

// The Kernel for an op the skinny GEMM's declaration accepted (KernelImpl::cuda_skinny_gemm).
Result<std::unique_ptr<Kernel>> make_skinny_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                 const Op& op, const Binding& binding);

}  // namespace gexec::cuda
