// The erfc series of f32_math.hpp: g(a) = erfc(a) exp(a^2) interpolated at the Chebyshev nodes of
// u in [-1, 1] (t = 1 / (1 + a) mapped onto u), in double: c_k = (2 / N) sum_j g(a_j) T_k(u_j),
// with c_0 halved, so that g = sum_k c_k T_k(u).
#include "f32_math.hpp"

#include <numbers>

namespace gexec::cpu::f32::detail {

ErfcSeries::ErfcSeries() : c{} {
  constexpr int kNodes = 64;
  double sums[kErfcDegree + 1] = {};
  for (int j = 0; j < kNodes; ++j) {
    const double theta = std::numbers::pi * (j + 0.5) / kNodes, u = std::cos(theta);
    const double t = kTLow + (u + 1) * (kTHigh - kTLow) / 2, a = 1 / t - 1;
    const double g = std::erfc(a) * std::exp(a * a);
    for (int k = 0; k <= kErfcDegree; ++k) sums[k] += 2.0 / kNodes * g * std::cos(k * theta);  // T_k(cos x) = cos kx
  }
  for (int k = 0; k <= kErfcDegree; ++k) c[k] = float(k == 0 ? sums[k] / 2 : sums[k]);
}

const ErfcSeries kErfc;

}  // namespace gexec::cpu::f32::detail
