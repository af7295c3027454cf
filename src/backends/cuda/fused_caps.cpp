// The declarations of the CUDA FUSED_ELEMENTWISE kernel family (fused_elementwise.cu), which
// runs MUL and SILU too. Compiled into the core without CUDA headers.
#include <string>

#include "fused_program.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

// Every full-shape operand stored alike: the kernel walks them in one linear order.
Verdict same_layout(const Graph& g, const Op& op, const DeviceCaps&) {
  Verdict v;
  const Tensor& first = g.tensor(op.outputs[0]);
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (TensorId t : *ids)
      if (g.tensor(t).numel() == first.numel() && g.tensor(t).layout != first.layout)
        v.rejected = "operands \"" + first.name + "\" and \"" + g.tensor(t).name + "\" are stored differently";
  if (op.type == OpType::FUSED_ELEMENTWISE && v.ok()) {
    const cuda::FusedProgram p = cuda::plan_fused_program(op.attrs, int(op.inputs.size()));
    if (!p.error.empty()) v.rejected = p.error + " (the kernel keeps " + std::to_string(cuda::kFusedSlots) + " in registers)";
  }
  return v;
}

}  // namespace

std::vector<KernelDef> cuda_fused_kernel_defs() {
  const std::vector<DType> all = {DType::f16, DType::bf16, DType::f32};
  auto def = [&](std::string name, OpType op, size_t inputs, bool colmajor, std::string summary) {
    KernelDef d;
    d.name = std::move(name);
    d.op = op;
    d.backend = Backend::cuda;
    d.priority = 10;
    d.inputs.assign(inputs, all);
    d.outputs = all;
    d.colmajor = colmajor;
    d.min_cc = 70;
    d.summary = std::move(summary);
    d.check = same_layout;
    return d;
  };
  return {
      def("cuda.fused_elementwise", OpType::FUSED_ELEMENTWISE, size_t(kGroupMaxInputs), false,
          "the group's steps in one launch, each rounded to its dtype; one read of each input and one write of "
          "each output, 16-byte accesses"),
      def("cuda.mul", OpType::MUL, 2, true, "Z = X * Y, in f32, rounded once to Z's dtype (a one-step group)"),
      def("cuda.silu", OpType::SILU, 1, true, "Y = X * sigmoid(X), in f32 (a one-step group)"),
  };
}

}  // namespace gexec
