// The check's tolerance for outputs of FP8 ops: f8 outputs in real units, fast accumulation.
#include <algorithm>
#include <cmath>

#include "gexec/ir/f8_rules.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

// Hopper's FP8 tensor cores with fast accumulation keep the partial sums of a product in fewer
// bits than f32 (about 14 significant bits are reported) and promote them to f32 less often. Relative to
// sum |a b| that is 2^-13 per partial sum; 2^-7 leaves room for the roughly K/32 partial-sum
// additions of K up to a few thousand at random signs. Measured bounds belong here.
double fast_accum_rtol() { return std::ldexp(1.0, -7); }

Tolerance output_tolerance(const Graph& g, TensorId id) {
  const Tensor& t = g.tensor(id);
  Tolerance tol = default_tolerance(t.dtype);
  if (is_f8(t.dtype)) tol.atol *= *std::max_element(t.scale.values.begin(), t.scale.values.end());
  for (const Op& op : g.ops) {
    if (std::find(op.outputs.begin(), op.outputs.end(), id) == op.outputs.end()) continue;
    if (op.attrs.fast_accum && is_f8_product(g, op)) tol.rtol = std::max(tol.rtol, fast_accum_rtol());
  }
  return tol;
}

}  // namespace gexec
