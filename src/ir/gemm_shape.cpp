// The geometry of MATMUL and GEMM_BIAS_ACT, read from their operand shapes and attributes.
#include "gexec/ir/gemm_shape.hpp"

#include <array>

namespace gexec {
namespace {

std::optional<GemmShape> fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return std::nullopt;
}

// "A is [64,80] so K=80" or "A is [80,64] with trans_a so K=80".
std::string operand(const char* label, const Tensor& t, bool trans, const char* flag) {
  std::string s = std::string(label) + " is " + shape_str(t.shape);
  if (trans) s += std::string(" with ") + flag;
  return s;
}

}  // namespace

std::optional<GemmShape> gemm_shape(const Graph& g, const Op& op, std::string* why) {
  const std::string type(op_type_name(op.type));
  auto in_range = [&](TensorId id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
  if (op.type != OpType::MATMUL && op.type != OpType::GEMM_BIAS_ACT) {
    return fail(why, type + " is not a matrix product");
  }
  const Arity ar = op_arity(op.type);
  if (int(op.inputs.size()) < ar.min_inputs || int(op.inputs.size()) > ar.max_inputs ||
      int(op.outputs.size()) < ar.outputs || int(op.outputs.size()) > ar.most_outputs()) {
    return fail(why, type + " has the wrong number of inputs or outputs");
  }
  for (TensorId id : op.inputs)
    if (!in_range(id)) return fail(why, type + " reads a tensor id out of range");
  if (!in_range(op.outputs[0])) return fail(why, type + " writes a tensor id out of range");

  const Tensor& a = g.tensor(op.inputs[0]);
  const Tensor& b = g.tensor(op.inputs[1]);
  const Tensor& c = g.tensor(op.outputs[0]);
  GemmShape s;
  s.trans_a = op.attrs.trans_a;
  s.trans_b = op.attrs.trans_b;
  s.alpha = op.attrs.alpha;
  s.layout_a = a.layout;
  s.layout_b = b.layout;
  s.layout_c = c.layout;
  s.has_residual = op.type == OpType::GEMM_BIAS_ACT && op.attrs.residual;
  s.beta = s.has_residual ? op.attrs.beta : 0.0;
  s.has_bias = op.inputs.size() == (s.has_residual ? 4u : 3u);
  if (s.has_residual && op.inputs.size() < 3)
    return fail(why, type + " with residual needs inputs [A, B, R] or [A, B, Bias, R]; it has " +
                         std::to_string(op.inputs.size()));
  if (!s.has_residual && op.inputs.size() == 4)
    return fail(why, type + " takes 4 inputs only with \"residual\": true ([A, B, Bias, R])");
  if (op.type == OpType::GEMM_BIAS_ACT && !op.attrs.residual && op.attrs.beta != 1.0)
    return fail(why, type + " has beta but no residual; beta scales R, which needs \"residual\": true");

  if (a.rank() != 2 && a.rank() != 3)
    return fail(why, type + " needs A of rank 2 or 3; A is " + shape_str(a.shape));
  const bool batched = a.rank() == 3;
  if (batched) {
    if (b.rank() != 2 && b.rank() != 3)
      return fail(why, type + " with a batched A " + shape_str(a.shape) + " needs B of rank 2 or 3; B is " +
                           shape_str(b.shape));
    if (c.rank() != 3)
      return fail(why, type + " with a batched A " + shape_str(a.shape) + " needs C of rank 3; C is " +
                           shape_str(c.shape));
    s.batch = a.shape[0];
    s.b_batched = b.rank() == 3;
    if (s.b_batched && b.shape[0] != s.batch)
      return fail(why, type + " batch sizes disagree: A is " + shape_str(a.shape) + " so batch=" +
                           std::to_string(s.batch) + ", B is " + shape_str(b.shape) + " so batch=" +
                           std::to_string(b.shape[0]));
    if (c.shape[0] != s.batch)
      return fail(why, type + " batch sizes disagree: A is " + shape_str(a.shape) + " so batch=" +
                           std::to_string(s.batch) + ", C is " + shape_str(c.shape) + " so batch=" +
                           std::to_string(c.shape[0]));
  } else {
    if (b.rank() != 2)
      return fail(why, type + " with a rank-2 A " + shape_str(a.shape) + " needs B of rank 2; B is " +
                           shape_str(b.shape));
    if (c.rank() != 2)
      return fail(why, type + " with a rank-2 A " + shape_str(a.shape) + " needs C of rank 2; C is " +
                           shape_str(c.shape));
  }
  for (const Tensor* t : {&a, &b, &c})
    if (t->rank() == 3 && t->layout != Layout::rowmajor)
      return fail(why, type + ": rank-3 tensor \"" + t->name + "\" must be rowmajor");

  // The last two dimensions are the matrix; transposition swaps them.
  auto rows = [](const Tensor& t) { return t.shape[t.shape.size() - 2]; };
  auto cols = [](const Tensor& t) { return t.shape[t.shape.size() - 1]; };
  s.m = s.trans_a ? cols(a) : rows(a);
  s.k = s.trans_a ? rows(a) : cols(a);
  const int64_t kb = s.trans_b ? cols(b) : rows(b);
  s.n = s.trans_b ? rows(b) : cols(b);
  if (s.k != kb)
    return fail(why, type + " shapes disagree: " + operand("A", a, s.trans_a, "trans_a") + " so K=" +
                         std::to_string(s.k) + ", " + operand("B", b, s.trans_b, "trans_b") + " so K=" +
                         std::to_string(kb));
  if (rows(c) != s.m || cols(c) != s.n)
    return fail(why, type + " shapes disagree: op(A) gives M=" + std::to_string(s.m) + " and op(B) gives N=" +
                         std::to_string(s.n) + ", so C should be [" + std::to_string(s.m) + "," +
                         std::to_string(s.n) + "] per batch entry, but C is " + shape_str(c.shape));
  if (s.has_bias) {
    if (!in_range(op.inputs[2])) return fail(why, type + " reads a tensor id out of range");
    const Tensor& bias = g.tensor(op.inputs[2]);
    if (bias.rank() != 1 || bias.shape[0] != s.n)
      return fail(why, type + " bias must be [" + std::to_string(s.n) + "] (N=" + std::to_string(s.n) +
                           "); Bias is " + shape_str(bias.shape));
  }
  if (s.has_residual) {
    if (!in_range(op.inputs.back())) return fail(why, type + " reads a tensor id out of range");
    const Tensor& r = g.tensor(op.inputs.back());
    if (r.shape != c.shape)
      return fail(why, type + " residual R must have C's shape " + shape_str(c.shape) + "; R is " + shape_str(r.shape));
  }
  if (op.attrs.mnk) {
    const auto& w = *op.attrs.mnk;
    if (w[0] != s.m || w[1] != s.n || w[2] != s.k)
      return fail(why, type + " mnk [" + std::to_string(w[0]) + "," + std::to_string(w[1]) + "," +
                           std::to_string(w[2]) + "] disagrees with the shapes, which give [" +
                           std::to_string(s.m) + "," + std::to_string(s.n) + "," + std::to_string(s.k) + "]");
  }
  return s;
}

}  // namespace gexec
