// For --autotune: one product's kernel and the other family's kernel for it, as one Kernel whose
// variants are both families' (the skinny GEMM's and cuBLASLt's candidates), so that the autotuner
// times them all and keeps the fastest that passes the check. The selected kernel's default stays
// variant 0, the other family's default is variant 1 (within any --autotune-top), then the rest.
#pragma once

#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec::cuda {

class CudaDevice;

// `primary` (the selected kernel) with `other`; both must be Tunable. Their precisions are merged,
// so the check's bound holds whichever variant is chosen.
std::unique_ptr<Kernel> make_gemm_alternatives(std::unique_ptr<Kernel> primary, std::unique_ptr<Kernel> other);

// The other family's kernel for op (skinny <-> cuBLASLt) where --autotune asked for it
// (KernelOptions::tune_alternatives), nothing was forced, and that kernel can run the op; else null.
Result<std::unique_ptr<Kernel>> make_alternative_gemm(CudaDevice& device, const KernelDef& selected, const Graph& g,
                                                      const Op& op, const Binding& binding, const KernelOptions& options);

}  // namespace gexec::cuda
