// The check's settings for FP8: f8 outputs' atol in real units, and which graphs have f8
// products (with fast accumulation), for `gexec check`'s assumed accumulator.
#include <algorithm>
#include <cmath>

#include "gexec/ir/f8_rules.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

bool has_f8_product(const Graph& g) {
  return std::any_of(g.ops.begin(), g.ops.end(), [&g](const Op& op) { return is_f8_product(g, op); });
}

bool has_fast_accum(const Graph& g) {
  return std::any_of(g.ops.begin(), g.ops.end(),
                     [&g](const Op& op) { return op.attrs.fast_accum && is_f8_product(g, op); });
}

Tolerance output_tolerance(const Tensor& t) {
  Tolerance tol = default_tolerance(t.dtype);
  // (A block scale without S's values has no largest scale: NaN, which no comparison passes.)
  if (is_f8(t.dtype))
    tol.atol *= t.scale.values.empty() ? std::nan("")
                                       : *std::max_element(t.scale.values.begin(), t.scale.values.end());
  return tol;
}

}  // namespace gexec
