// The one set of f16/bf16 conversions: the exact widenings to float, and the roundings to f16 and
// bf16 bits (round to nearest even; overflow gives infinity, NaN stays NaN), GEXEC_HD so that
// the device computes the bits the host does. Two roundings, each for its input:
// - float_to_f16 / float_to_bf16 round a float (what the kernels compute in f32) by integer
//   arithmetic on its bits, cheap in the CPU kernels' loops, and keep a NaN's payload;
// - round_to_f16_bits / round_to_bf16_bits round a double (the reference's values, drawn
//   inputs, real values divided by a scale) once, not twice through float.
// They agree on every float that is not a NaN (tests/unit/test_rng.cpp checks it). The dtype-level
// loads and stores that use them are in dtype.hpp (load_as_float, store_from_float, store_rounded).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gexec/ir/hd.hpp"

namespace gexec {

GEXEC_HD inline float f32_from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, 4);
  return f;
#endif
}

GEXEC_HD inline uint32_t bits_from_f32(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
#endif
}

// Exact widening conversions.
GEXEC_HD inline float bf16_to_float(uint16_t h) { return f32_from_bits(uint32_t(h) << 16); }

GEXEC_HD inline float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (mant << 13));  // inf, NaN keeps payload
  if (exp != 0) return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return f32_from_bits(sign);
  // Subnormal half: normalise the mantissa; every f16 subnormal is a normal float.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return f32_from_bits(sign | uint32_t(112 - e) << 23 | ((mant & 0x3ffu) << 13));
}

// A float rounded to f16 bits.
GEXEC_HD inline uint16_t float_to_f16(float f) {
  const uint32_t x = bits_from_f32(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // quiet NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: infinity
  const int exp = int(abs >> 23) - 127;
  if (exp >= -14) {
    // Normal half: drop 13 mantissa bits with round-to-nearest-even; a carry into the
    // exponent is the correct result (it can reach at most the largest finite half).
    uint32_t v = abs - (112u << 23);
    v += 0xfffu + ((v >> 13) & 1u);
    return uint16_t(sign | (v >> 13));
  }
  if (exp < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // Subnormal half: value = mant * 2^-24 with the implicit bit made explicit.
  const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
  const int shift = -exp - 1;  // 14..24 bits to drop
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return uint16_t(sign | q);
}

// A float rounded to bf16 bits.
GEXEC_HD inline uint16_t float_to_bf16(float f) {
  const uint32_t x = bits_from_f32(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u);  // keep NaN a NaN
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(rounded >> 16);
}

GEXEC_HD inline uint64_t bits_from_f64(double d) {
#if defined(__CUDA_ARCH__)
  return uint64_t(__double_as_longlong(d));
#else
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
#endif
}

GEXEC_HD inline double f64_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)b);
#else
  double d;
  std::memcpy(&d, &b, 8);
  return d;
#endif
}

// floor(log2 |v|) of a finite non-zero v (frexp's exponent less one), read from its bits where v
// is normal: the reference calls it for every element it rounds or bounds, and frexp is a call.
GEXEC_HD inline int floor_log2(double v) {
  const int biased = int((bits_from_f64(v) >> 52) & 0x7ffu);
  if (biased != 0) return biased - 1023;
  int e = 0;
  frexp(v, &e);  // subnormal
  return e - 1;
}

// 2^e, exactly; built from its bits in double's normal range (ldexp is a call).
GEXEC_HD inline double pow2(int e) {
  if (e >= -1022 && e <= 1023) return f64_from_bits(uint64_t(e + 1023) << 52);
  return ldexp(1.0, e);
}

// Rounds v to a binary format with `digits` significand bits (hidden bit included) and
// smallest normal exponent `emin`; the result is exact in float. Overflow is left to the caller.
// (The f8 codec, f8.hpp, rounds through it too.)
GEXEC_HD inline double round_to_grid(double v, int digits, int emin) {
  if (v == 0.0 || !(v == v)) return v;
  int e = floor_log2(v);  // 2^e <= |v| < 2^(e+1)
  if (e < emin) e = emin;
  double q = pow2(e - (digits - 1));  // the spacing of the grid around v
  return rint(v / q) * q;                   // rint rounds half to even in the default mode
}

// v already on the f16 grid (exact in float): its f16 bits; beyond the largest f16, infinity.
GEXEC_HD inline uint16_t f16_bits_exact(double v) {
  uint32_t x = bits_from_f32(float(v));
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

// A double rounded to f16 bits, once.
GEXEC_HD inline uint16_t round_to_f16_bits(double v) {
  if (fabs(v) >= 65520.0) return uint16_t((v < 0 ? 0x8000u : 0u) | 0x7C00u);
  return f16_bits_exact(round_to_grid(v, 11, -14));
}

// A double rounded to bf16 bits, once.
GEXEC_HD inline uint16_t round_to_bf16_bits(double v) {
  if (!(v == v)) return 0x7FC0u;
  double r = round_to_grid(v, 8, -126);
  if (fabs(r) > 3.3895313892515355e38) return uint16_t((v < 0 ? 0x8000u : 0u) | 0x7F80u);
  return uint16_t(bits_from_f32(float(r)) >> 16);  // r is exact in float, so its top half is bf16
}

GEXEC_HD inline float round_to_f32(double v) { return float(v); }

}  // namespace gexec
