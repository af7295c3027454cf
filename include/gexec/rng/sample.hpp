// Element values drawn from Philox, in arithmetic that gives the same bits on the host and the
// device: only IEEE double +, -, *, /, sqrt, explicit fma and exact scaling (no libm log/cos,
// whose last bits differ between glibc and CUDA), then one rounding to the tensor's dtype.
#pragma once

#include <cmath>
#include <cstdint>

#include "gexec/ir/hd.hpp"
#include "gexec/rng/philox.hpp"

namespace gexec::rng {

// Uniform in (0, 1): 53 random bits, never 0 or 1.
GEXEC_HD inline double unit_open(uint32_t hi, uint32_t lo) {
  uint64_t bits = (uint64_t(hi) << 21) ^ uint64_t(lo >> 11);  // 53 bits
  return (double(bits) + 0.5) * (1.0 / 9007199254740992.0);  // 2^-53
}

// Natural logarithm for x > 0, accurate to a few ulp, deterministic: x = m * 2^e with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(f), f = (m-1)/(m+1), |f| < 0.172, series to f^25.
GEXEC_HD inline double det_log(double x) {
  int e = 0;
  // frexp-free exponent extraction so the code is identical everywhere
  while (x >= 1.4142135623730951) { x *= 0.5; ++e; }
  while (x < 0.7071067811865476) { x *= 2.0; --e; }
  double f = (x - 1.0) / (x + 1.0);
  double f2 = f * f;
  double s = 1.0 / 25.0;
  for (int d = 23; d >= 1; d -= 2) s = fma(s, f2, 1.0 / double(d));
  return fma(double(e), 0.6931471805599453, 2.0 * f * s);
}

// A standard normal for element `index` by Marsaglia's polar method: each Philox block gives
// one (u, v) pair; a rejected pair moves on to the next block along the counter's third word.
GEXEC_HD inline double normal(uint64_t key, uint64_t index) {
  for (uint32_t attempt = 0;; ++attempt) {
    U32x4 r = philox4x32(U32x4{{uint32_t(index), uint32_t(index >> 32), attempt, 0x6E6F726Du}},
                         uint32_t(key), uint32_t(key >> 32));
    double u = 2.0 * unit_open(r.v[0], r.v[1]) - 1.0;
    double v = 2.0 * unit_open(r.v[2], r.v[3]) - 1.0;
    double s = fma(u, u, v * v);
    if (s > 0.0 && s < 1.0) return u * sqrt(-2.0 * det_log(s) / s);
  }
}

// Uniform in [low, high).
GEXEC_HD inline double uniform(uint64_t key, uint64_t index, double low, double high) {
  U32x4 r = philox4x32(U32x4{{uint32_t(index), uint32_t(index >> 32), 0u, 0x756E6966u}}, uint32_t(key),
                       uint32_t(key >> 32));
  double t = unit_open(r.v[0], r.v[1]);
  const double span = high - low;
  // A range wider than a double holds (-1e308 to 1e308: span infinite, span - span NaN) takes
  // each end weighted apart, else every draw would be infinite.
  if (!(span - span == 0)) return (1 - t) * low + t * high;
  return fma(t, span, low);
}

}  // namespace gexec::rng
