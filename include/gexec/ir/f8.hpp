// The two OCP FP8 formats: exact decoding of every code and rounding of a double to a code
// (round to nearest even, saturating to the largest finite value, NaN stays NaN), in arithmetic
// that gives the same bits on the host and the device.
#pragma once

#include <cmath>
#include <cstdint>

#include "gexec/ir/hd.hpp"
#include "gexec/ir/rounding.hpp"

namespace gexec::f8 {

// E4M3 "fn": bias 7, 3 mantissa bits, no infinities, S.1111.111 is NaN; largest finite 448.
// E5M2: bias 15, 2 mantissa bits, IEEE-like (S.11111.00 is infinity, S.11111.xx NaN); 57344.
struct Format {
  int mant_bits, bias;
  double max_finite;
  bool has_inf;
};
// Functions rather than variables where device code needs them (a constexpr variable has no
// device address).
GEXEC_HD constexpr Format e4m3() { return {3, 7, 448.0, false}; }
GEXEC_HD constexpr Format e5m2() { return {2, 15, 57344.0, true}; }
inline constexpr Format kE4M3 = e4m3();
inline constexpr Format kE5M2 = e5m2();

// The code's value; exact in float (and so in double).
GEXEC_HD inline double decode(uint8_t code, Format f) {
  const bool neg = (code & 0x80u) != 0;
  const int exp_bits = 7 - f.mant_bits;
  const int e = (code >> f.mant_bits) & ((1 << exp_bits) - 1);
  const int m = code & ((1 << f.mant_bits) - 1);
  const int e_all = (1 << exp_bits) - 1;
  double v;
  if (f.has_inf && e == e_all) {
    v = m == 0 ? HUGE_VAL : NAN;
  } else if (!f.has_inf && e == e_all && m == (1 << f.mant_bits) - 1) {
    v = NAN;
  } else if (e == 0) {
    v = ldexp(double(m), 1 - f.bias - f.mant_bits);  // subnormal
  } else {
    v = ldexp(double((1 << f.mant_bits) | m), e - f.bias - f.mant_bits);
  }
  return neg ? -v : v;
}

// The code nearest v, ties to even; beyond the largest finite value (infinities included) the
// largest finite value of v's sign; NaN gives the format's NaN with v's sign.
GEXEC_HD inline uint8_t encode(double v, Format f) {
  const uint8_t sign = copysign(1.0, v) < 0 ? 0x80u : 0x00u;  // -0 and -NaN keep their sign
  if (v != v) return uint8_t(sign | 0x7Fu);  // a NaN code in both formats
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  double r = fabs(v) > f.max_finite ? f.max_finite : round_to_grid(fabs(v), f.mant_bits + 1, emin);
  if (r > f.max_finite) r = f.max_finite;  // a round up past the largest finite value saturates too
  if (r == 0.0) return sign;
  int e = 0;
  frexp(r, &e);
  e -= 1;  // 2^e <= r < 2^(e+1)
  if (e < emin) return uint8_t(sign | uint8_t(ldexp(r, f.mant_bits - emin)));  // subnormal: r / 2^(emin-mant)
  const int m = int(ldexp(r, f.mant_bits - e)) - (1 << f.mant_bits);
  return uint8_t(sign | uint8_t(((e + f.bias) << f.mant_bits) | m));
}

// Two multipliers that bracket x / S: x times lo is below |x / S| and x times hi above it (in
// magnitude), for every finite x with |x / S| <= the largest f8 value, where S is from 2^-100 to
// 2^100. Each of 1 / S, the nudge by 2^-20 and the product rounds once to nearest (2^-24 each), so
// the nudge outweighs the three roundings (products below 2^-126, where rounding is not relative,
// are far below half the least f8 subnormal: they, and x / S, code as zero). The conversion to f8
// is monotonic, so where x times lo and x times hi take the same code, x / S between them takes it
// too, and the quantizing CUDA CAST keeps that code; only values within about 2^-20 of a midpoint
// (and exact ties: bf16 inputs put a few in a thousand there) differ and need quotient_code.
// tests/unit/test_f8.cpp checks it.
struct ReciprocalBracket {
  float lo, hi;
};
GEXEC_HD inline ReciprocalBracket reciprocal_bracket(float s) {
  const float r = 1.0f / s;
  return {r * (1.0f - 0x1p-20f), r * (1.0f + 0x1p-20f)};
}
GEXEC_HD inline bool reciprocal_bracket_holds(float s) { return s >= 0x1p-100f && s <= 0x1p100f; }

// The code of x / S (S > 0) from q, x times the f32 reciprocal of S, with integer operations that
// give the same bits on the host and the device; -1 where q is neither zero nor an f8 normal (f8
// subnormals, NaN, infinity: the caller divides exactly). More than 4 ulps from a midpoint between
// two codes, q rounds as x / S does; next to the midpoint M, the sign of |x| - M S, exact in an FMA
// (the two are within a few ulps), says on which side x / S lies, and 0 that it is M: a tie, to the
// even code. Beyond the largest finite value, that value.
GEXEC_HD inline int quotient_code(float x, float s, float q, Format f) {
  const uint32_t bits = bits_from_f32(q), a = bits & 0x7FFFFFFFu, sign = (bits >> 24) & 0x80u;
  if (a == 0) return int(sign);  // |x / S| below 2^-126 or so: far below half the least subnormal
  const int m = f.mant_bits, sh = 23 - m, e_all = (1 << (7 - m)) - 1;
  const int emin = 1 - f.bias, emax = e_all - f.bias - (f.has_inf ? 1 : 0);
  if (a < uint32_t(127 + emin) << 23 || a >= uint32_t(127 + emax + 1) << 23) return -1;
  const uint32_t low = a & ((1u << sh) - 1u), mid = 1u << (sh - 1);
  const uint32_t lo_code = (a >> sh) - (uint32_t(127 - f.bias) << m);  // q truncated toward zero
  uint32_t code;
  if ((low > mid ? low - mid : mid - low) > 4u) {
    code = lo_code + (low > mid ? 1u : 0u);
  } else {
    const float midpoint = f32_from_bits((a & ~((1u << sh) - 1u)) | mid);
    const float d = fmaf(-midpoint, s, fabsf(x));
    code = lo_code + ((d > 0.0f || (d == 0.0f && (lo_code & 1u))) ? 1u : 0u);
  }
  const uint32_t max_code = f.has_inf ? (uint32_t(e_all) << m) - 1u : (uint32_t(e_all) << m | ((1u << m) - 1u)) - 1u;
  return int(sign | (code < max_code ? code : max_code));
}

// The scale of a block whose largest |value| is amax, for codes in format f: amax over the largest
// finite value, divided in f32; 1 for a block of zeros (or of NaNs, left out of the amax); the
// least positive float where the quotient underflows. Shared by the host and the device, so that
// both compute S to the same bits.
GEXEC_HD inline float block_scale(float amax, Format f) {
  if (!(amax > 0)) return 1.0f;
  const float s = amax / float(f.max_finite);
  return s > 0 ? s : 0x1p-149f;
}

}  // namespace gexec::f8
