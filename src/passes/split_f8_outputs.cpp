// split_f8_outputs: an f8 product whose operands have per-row or per-column scales, or whose f8 C
// has them, writes C through a bf16 intermediate (f32 where C has an amax output) and a CAST (a
// quantize with C's scales, and C's amax output).
//
// cuBLASLt's outer-vector scale mode, which applies per-row and per-column operand scales on
// Hopper, cannot also scale an f8 D, and its D scale is one value; without this split such a
// product has no CUDA kernel, while the f8 CAST applies any scale.
// The product to bf16 with vector scales and the quantize from bf16 are both kernels of their
// own. The intermediate rounding to bf16 (2^-9 relative) is far inside an f8 result's own
// rounding (2^-4 for e4m3), so the graph's reference, which rounds once, still bounds the
// result. The amax is another matter: the format takes it from the value before C's rounding,
// and the CAST takes it from its input, so a bf16 intermediate would put its rounding into the
// amax (a relative 2^-9, far beyond the product's own error, which is all the check allows).
// Where C has an amax the intermediate is f32, the product's own result, so that the amax is
// the product's as in the unsplit op. A product with a residual is left alone: its R has C's
// dtype and would need the same treatment.
#include <string>
#include <vector>

#include "fresh_names.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "passes.hpp"

namespace gexec {
namespace {

bool splits(const Graph& g, const Op& op) {
  if (!is_f8_product(g, op) || op.attrs.residual) return false;
  const Tensor& c = g.tensor(op.outputs[0]);
  const bool vector_scales =
      g.tensor(op.inputs[0]).scale.axis >= 0 || g.tensor(op.inputs[1]).scale.axis >= 0 || c.scale.axis >= 0;
  return vector_scales && is_f8(c.dtype);
}

}  // namespace

Status split_f8_outputs(Graph& g) {
  FreshNames names(g);
  std::vector<Op> ops;
  for (Op& op : g.ops) {
    if (!splits(g, op)) {
      ops.push_back(std::move(op));
      continue;
    }
    const Tensor c = g.tensor(op.outputs[0]);
    const bool amax = op.outputs.size() > 1;
    const TensorId mid = add_tensor_like(g, names, c, amax ? DType::f32 : DType::bf16);
    // C, and its amax where there is one (max |input| of the CAST).
    Op cast = make_cast(g, names, c.name, mid, op.outputs);
    op.outputs = {mid};
    pass_note("op " + op.name + ": its f8 output " + c.name + " is written as " +
              std::string(dtype_name(g.tensor(mid).dtype)) + " " + g.tensor(mid).name + " and quantized by " +
              cast.name + (amax ? " (f32, so that the amax is taken from the product's result)" : "") +
              (c.scale.axis >= 0 ? ", since cuBLASLt scales an f8 D by one value, not per row or column"
                                 : ", since cuBLASLt's per-row/column operand scales cannot also scale an f8 D"));
    ops.push_back(std::move(op));
    ops.push_back(std::move(cast));
  }
  g.ops = std::move(ops);
  return Status::success();
}

}  // namespace gexec
