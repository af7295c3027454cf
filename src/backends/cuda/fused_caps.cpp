// The declaration of the CUDA FUSED_ELEMENTWISE kernel (fused_elementwise.cu). Compiled into the
// core without CUDA headers.
#include <string>

#include "fused_program.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

// Every full-shape operand stored alike (the kernel walks them in one linear order), and a program
// that fits the kernel's registers.
Verdict same_layout(const Graph& g, const Op& op, const DeviceCaps&, const KernelOptions&) {
  Verdict v;
  const Tensor& first = g.tensor(op.outputs[0]);
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (TensorId t : *ids)
      if (g.tensor(t).numel() == first.numel() && g.tensor(t).layout != first.layout)
        v.rejected = "operands \"" + first.name + "\" and \"" + g.tensor(t).name + "\" are stored differently";
  if (v.ok()) {
    const cuda::FusedProgram p = cuda::plan_fused_program(op.attrs, int(op.inputs.size()));
    if (!p.error.empty()) v.rejected = p.error + " (the kernel keeps " + std::to_string(cuda::kFusedSlots) + " in registers)";
  }
  return v;
}

}  // namespace

std::vector<KernelDef> cuda_fused_kernel_defs() {
  KernelDef d = declare_kernel("cuda.fused_elementwise", OpType::FUSED_ELEMENTWISE, Backend::cuda,
                               KernelImpl::cuda_fused_elementwise, 10, size_t(kGroupMaxInputs),
                               "the group's steps in one launch, each rounded to its dtype; one read of each input "
                               "and one write of each output, 16-byte accesses");
  d.min_cc = 70;
  d.check = same_layout;
  return {d};
}

}  // namespace gexec
