// The check's settings for FP8: f8 outputs' atol in real units, and the accumulator of products
// with fast accumulation.
#include <algorithm>
#include <cmath>

#include "gexec/ir/f8_rules.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

// Hopper's FP8 tensor cores with fast accumulation keep the partial sums in fewer bits than f32
// (about 14 significant bits are reported) and promote them to f32 less often: a unit roundoff
// of 2^-13 for the accumulation term of the bound. To be sharpened from measurements on the H200
// (scripts/gpu_fp8.sh prints the error that fast accumulation keeps, K = 1024 to 16384).
double fast_accum_unit_roundoff() { return 0x1p-13; }

bool has_fast_accum(const Graph& g) {
  return std::any_of(g.ops.begin(), g.ops.end(),
                     [&g](const Op& op) { return op.attrs.fast_accum && is_f8_product(g, op); });
}

Tolerance output_tolerance(const Tensor& t) {
  Tolerance tol = default_tolerance(t.dtype);
  if (is_f8(t.dtype)) tol.atol *= *std::max_element(t.scale.values.begin(), t.scale.values.end());
  return tol;
}

}  // namespace gexec
