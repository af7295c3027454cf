// split_f8_outputs: an f8 product whose operands have per-row or per-column scales writes its f8
// C through a bf16 intermediate and a CAST (a quantize with C's scale, and C's amax output).
//
// cuBLASLt's outer-vector scale mode, which applies per-row and per-column operand scales on
// Hopper, cannot also scale an f8 D; without this split such a product has no CUDA kernel.
// The product to bf16 with vector scales and the quantize from bf16 are both kernels of their
// own. The intermediate rounding to bf16 (2^-9 relative) is far inside an f8 result's own
// rounding (2^-4 for e4m3), so the graph's reference, which rounds once, still bounds the
// result. A product with a residual is left alone: its R has C's dtype and would need the same
// treatment.
#include <string>
#include <unordered_set>
#include <vector>

#include "gexec/ir/f8_rules.hpp"
#include "passes.hpp"

namespace gexec {
namespace {

std::string fresh(const std::unordered_set<std::string>& names, const std::string& base) {
  if (!names.count(base)) return base;
  for (int i = 1;; ++i)
    if (!names.count(base + "." + std::to_string(i))) return base + "." + std::to_string(i);
}

bool splits(const Graph& g, const Op& op) {
  if (!is_f8_product(g, op) || op.attrs.residual) return false;
  const bool vector_scales =
      g.tensor(op.inputs[0]).scale.axis >= 0 || g.tensor(op.inputs[1]).scale.axis >= 0;
  return vector_scales && is_f8(g.tensor(op.outputs[0]).dtype);
}

}  // namespace

Status split_f8_outputs(Graph& g) {
  std::unordered_set<std::string> tensor_names, op_names;
  for (const Tensor& t : g.tensors) tensor_names.insert(t.name);
  for (const Op& op : g.ops) op_names.insert(op.name);
  std::vector<Op> ops;
  for (Op& op : g.ops) {
    if (!splits(g, op)) {
      ops.push_back(std::move(op));
      continue;
    }
    const Tensor c = g.tensor(op.outputs[0]);
    Tensor mid;
    mid.name = fresh(tensor_names, c.name + ".bf16");
    mid.shape = c.shape;
    mid.layout = c.layout;
    mid.dtype = DType::bf16;
    tensor_names.insert(mid.name);
    const TensorId mid_id = g.add_tensor(std::move(mid));
    Op cast;
    cast.type = OpType::CAST;
    cast.name = fresh(op_names, "CAST_" + c.name + "_" + std::string(dtype_name(c.dtype)));
    op_names.insert(cast.name);
    cast.inputs = {mid_id};
    cast.outputs = op.outputs;  // C, and its amax where there is one (max |input| of the CAST)
    op.outputs = {mid_id};
    pass_note("op " + op.name + ": its f8 output " + c.name + " is written as bf16 " + g.tensor(mid_id).name +
              " and quantized by " + cast.name + ", since cuBLASLt's per-row/column operand scales cannot also scale an "
              "f8 D");
    ops.push_back(std::move(op));
    ops.push_back(std::move(cast));
  }
  g.ops = std::move(ops);
  return Status::success();
}

}  // namespace gexec
