// GROUPED_GEMM's shapes and offsets, checked in one place for the loader, the reference and the kernels.
#include "gexec/ir/grouped_shape.hpp"

namespace gexec {

std::optional<GroupedShape> grouped_shape(const Graph& g, const Op& op, std::string* why) {
  auto fail = [&](std::string w) -> std::optional<GroupedShape> {
    if (why) *why = "GROUPED_GEMM " + std::move(w);
    return std::nullopt;
  };
  if (op.inputs.size() < 3 || op.inputs.size() > 4 || op.outputs.size() != 1)
    return fail("takes X, W, offsets and optionally a bias, and writes Y");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& w = g.tensor(op.inputs[1]);
  const Tensor& off = g.tensor(op.inputs[2]);
  const Tensor& y = g.tensor(op.outputs[0]);
  GroupedShape s;
  s.trans_b = op.attrs.trans_b;
  s.alpha = op.attrs.alpha;
  s.act = op.attrs.act;
  s.has_bias = op.inputs.size() == 4;
  if (x.rank() != 2) return fail("X \"" + x.name + "\" must be [T, K]; it is " + shape_str(x.shape));
  if (w.rank() != 3)
    return fail("W \"" + w.name + "\" must be " + (s.trans_b ? "[G, N, K]" : "[G, K, N]") + "; it is " + shape_str(w.shape));
  s.tokens = x.shape[0], s.k = x.shape[1], s.groups = w.shape[0];
  s.n = s.trans_b ? w.shape[1] : w.shape[2];
  const int64_t wk = s.trans_b ? w.shape[2] : w.shape[1];
  if (wk != s.k)
    return fail("W \"" + w.name + "\" " + shape_str(w.shape) + " has K = " + std::to_string(wk) + " but X " +
                shape_str(x.shape) + " has K = " + std::to_string(s.k) + (s.trans_b ? " (W is [G, N, K] with trans_b)" : " (W is [G, K, N]; [G, N, K] needs trans_b)"));
  if (off.rank() != 1 || off.shape[0] != s.groups)
    return fail("offsets \"" + off.name + "\" must be [" + std::to_string(s.groups) + "] (one per group of W); it is " +
                shape_str(off.shape));
  if (off.dtype != DType::i32)
    return fail("offsets \"" + off.name + "\" must be i32; it is " + std::string(dtype_name(off.dtype)));
  if (s.has_bias) {
    const Tensor& b = g.tensor(op.inputs[3]);
    if (b.rank() != 2 || b.shape[0] != s.groups || b.shape[1] != s.n)
      return fail("bias \"" + b.name + "\" must be [" + std::to_string(s.groups) + ", " + std::to_string(s.n) +
                  "] (G, N); it is " + shape_str(b.shape));
  }
  if (y.rank() != 2 || y.shape[0] != s.tokens || y.shape[1] != s.n)
    return fail("output \"" + y.name + "\" must be [" + std::to_string(s.tokens) + ", " + std::to_string(s.n) +
                "] (T, N); it is " + shape_str(y.shape));
  for (const Tensor* t : {&x, &y})
    if (t->layout != Layout::rowmajor) return fail("\"" + t->name + "\" must be rowmajor");
  return s;
}

std::string offsets_problem(const int32_t* offsets, int64_t groups, int64_t tokens) {
  int64_t prev = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t o = offsets[g];
    if (o < prev || o > tokens)
      return "offsets[" + std::to_string(g) + "] = " + std::to_string(o) +
             (o > tokens ? " exceeds the " + std::to_string(tokens) + " tokens of X"
                         : " is below " + (g == 0 ? std::string("0") : "offsets[" + std::to_string(g - 1) + "] = " + std::to_string(prev))) +
             "; offsets are the groups' cumulative row ends: non-decreasing, 0 to T";
    prev = o;
  }
  return {};
}

}  // namespace gexec
