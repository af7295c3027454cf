// The declarations of each backend's kernels, each defined in a *_caps.cpp beside the kernel,
// and the list the kernel table is assembled from.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/kernels/kernel_def.hpp"

namespace gexec {

// What most declarations start from: every input position and the output take f16, bf16 and
// f32; the caller sets what differs (layouts, transposes, alignment, checks, ...).
inline KernelDef declare_kernel(std::string name, OpType op, Backend backend, KernelImpl impl, int priority,
                                size_t inputs, std::string summary) {
  const std::vector<DType> floats = {DType::f16, DType::bf16, DType::f32};
  KernelDef d;
  d.name = std::move(name);
  d.op = op;
  d.backend = backend;
  d.impl = impl;
  d.priority = priority;
  d.inputs.assign(inputs, floats);
  d.outputs = floats;
  d.summary = std::move(summary);
  return d;
}

// For a GEMM declaration's check: the product's shape, or nothing with the reason in v.rejected.
inline std::optional<GemmShape> accepted_gemm_shape(const Graph& g, const Op& op, Verdict& v) {
  auto s = gemm_shape(g, op, &v.rejected);
  if (!s && v.rejected.empty()) v.rejected = "not a product";
  return s;
}

std::vector<KernelDef> cublaslt_kernel_defs();        // src/backends/cuda/cublaslt_caps.cpp
std::vector<KernelDef> cuda_elementwise_kernel_defs(); // src/backends/cuda/elementwise_caps.cpp
std::vector<KernelDef> cuda_fp8_kernel_defs();       // src/backends/cuda/fp8_caps.cpp
std::vector<KernelDef> cuda_fused_kernel_defs();       // src/backends/cuda/fused_caps.cpp
std::vector<KernelDef> cuda_skinny_kernel_defs();     // src/backends/cuda/skinny_caps.cpp
std::vector<KernelDef> cuda_grouped_kernel_defs();    // src/backends/cuda/grouped_caps.cpp
std::vector<KernelDef> cuda_one_group_kernel_defs();  // src/backends/cuda/one_group_caps.cpp
std::vector<KernelDef> cuda_nccl_kernel_defs();       // src/backends/cuda/nccl_caps.cpp
std::vector<KernelDef> cpu_kernel_defs();             // src/backends/cpu/cpu_caps.cpp

#if GEXEC_HAVE_CPU
inline constexpr bool kCpuBuilt = true;
#else
inline constexpr bool kCpuBuilt = false;
#endif

// NCCL (the collectives of a sharded run on CUDA), where CMake found it.
#if GEXEC_HAVE_NCCL
inline constexpr bool kNcclBuilt = true;
#else
inline constexpr bool kNcclBuilt = false;
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
    {cuda_fp8_kernel_defs, true},
    {cuda_fused_kernel_defs, true},
    {cuda_skinny_kernel_defs, true},
    {cuda_grouped_kernel_defs, true},
    {cuda_one_group_kernel_defs, true},
    {cuda_nccl_kernel_defs, true},
    {cpu_kernel_defs, kCpuBuilt},
};

}  // namespace gexec
