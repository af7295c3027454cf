// Rounding a double to f16, bf16 or f32 bits, round to nearest even, once (no double rounding),
// in arithmetic that gives the same bits on the host and the device.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gexec/rng/hd.hpp"

namespace gexec::rng {

// Rounds v to a binary format with `digits` significand bits (hidden bit included) and
// smallest normal exponent `emin`; the result is exact in float. Overflow is left to the caller.
GEXEC_HD inline double round_to_grid(double v, int digits, int emin) {
  if (v == 0.0 || !(v == v)) return v;
  int e = 0;
  frexp(v, &e);  // |v| = f * 2^e with f in [0.5, 1)
  e -= 1;        // 2^e <= |v| < 2^(e+1)
  if (e < emin) e = emin;
  double q = ldexp(1.0, e - (digits - 1));  // the spacing of the grid around v
  return rint(v / q) * q;                   // rint rounds half to even in the default mode
}

GEXEC_HD inline uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
#endif
}

// v already on the f16 grid (exact in float): its f16 bits; beyond the largest f16, infinity.
GEXEC_HD inline uint16_t f16_bits_exact(double v) {
  uint32_t x = f32_bits(float(v));
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return uint16_t(sign | 0x7E00u);  // NaN
  if (a >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520: rounds to infinity
  if (a >= 0x38800000u) {                                 // normal f16: exponent >= -14
    uint32_t e = (a >> 23) - 127 + 15;
    return uint16_t(sign | (e << 10) | ((a >> 13) & 0x3FFu));
  }
  // subnormal f16: v is a multiple of 2^-24
  return uint16_t(sign | uint16_t(fabs(v) * 16777216.0));
}

GEXEC_HD inline uint16_t round_to_f16_bits(double v) {
  if (fabs(v) >= 65520.0) return uint16_t((v < 0 ? 0x8000u : 0u) | 0x7C00u);
  return f16_bits_exact(round_to_grid(v, 11, -14));
}

GEXEC_HD inline uint16_t round_to_bf16_bits(double v) {
  if (!(v == v)) return 0x7FC0u;
  double r = round_to_grid(v, 8, -126);
  if (fabs(r) > 3.3895313892515355e38) return uint16_t((v < 0 ? 0x8000u : 0u) | 0x7F80u);
  return uint16_t(f32_bits(float(r)) >> 16);  // r is exact in float, so its top half is bf16
}

GEXEC_HD inline float round_to_f32(double v) { return float(v); }

}  // namespace gexec::rng
