// exp, tanh and erf in f32 for the CPU kernels, without libm's calls: glibc's tanhf and erff took
// 14 to 16 ns an element (a 64 x 1024 GELU epilogue was most of a small MLP's time) and no loop
// that calls them vectorizes. These are branch-free polynomials, within 2.5 ulps of the true value
// over all of f32 (tests/unit/test_cpu_f32_math.cpp sweeps them against libm's double results),
// inside the bounds the check allows libm's f32 functions (verify/bound.hpp's kTanhF32U, kErfF32U
// and kGeluF32Ulps). The coefficients are computed from their definitions, not written as digits.
// Every polynomial step is an explicit fused multiply-add (madd): one rounding instead of two, and
// one instruction where the CPU has FMA. The backend is built without contraction, so that code
// built for any CPU gives the same bits: with FMA the loops (cpu_unary.cpp's clones for x86-64-v3
// and v4) inline the instruction; the baseline build calls libm's fmaf, which is exact everywhere
// and itself runs the instruction on a CPU that has it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gexec::cpu::f32 {

namespace detail {

inline float madd(float a, float b, float c) { return std::fma(a, b, c); }
inline double madd(double a, double b, double c) { return std::fma(a, b, c); }

constexpr double factorial(int n) { return n <= 1 ? 1.0 : n * factorial(n - 1); }
constexpr double kTwoOverSqrtPi = 1.1283791670955126;

// Bernoulli numbers B_2, B_4, ..., B_16 (exact rationals).
constexpr double kBernoulli[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6, -3617.0 / 510};
// tanh's Maclaurin coefficient of x^(2n-1): 2^(2n) (2^(2n) - 1) B_2n / (2n)!.
constexpr float tanh_coef(int n) {
  const double p = double(int64_t(1) << (2 * n));
  return float(p * (p - 1) * kBernoulli[n - 1] / factorial(2 * n));
}
// erf's Maclaurin coefficient of x^(2n+1): 2 / sqrt(pi) (-1)^n / (n! (2n + 1)).
constexpr double erf_coef(int n) { return kTwoOverSqrtPi * (n % 2 ? -1 : 1) / (factorial(n) * (2 * n + 1)); }

inline float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// 2^n for n in [-126, 127], from its exponent bits.
inline float pow2(int32_t n) { return from_bits(uint32_t(n + 127) << 23); }

// erfc(a) exp(a^2) on [0.5, 4.5] as a Chebyshev series of degree 12 in t = 1 / (1 + a) mapped onto
// [-1, 1] (relative error below 1e-10; in a itself degree 16 reached only 2e-9), its coefficients
// interpolated at start-up from double erfc and exp (f32_math.cpp). No table lookup: loops of it
// vectorize.
constexpr int kErfcDegree = 12;
constexpr double kErfcLow = 0.5, kErfcHigh = 4.5;
constexpr double kTLow = 1 / (1 + kErfcHigh), kTHigh = 1 / (1 + kErfcLow);
struct ErfcSeries {
  ErfcSeries();
  float c[kErfcDegree + 1];
};
extern const ErfcSeries kErfc;

}  // namespace detail

// e^x. x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two so that n ln2_hi is exact), e^r by its
// Taylor polynomial of degree 7 (truncation below 6e-9 relative), scaled by 2^n in two factors so
// that results below f32's normal range round once, as subnormals, to 0 at the end.
inline float exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;   // ln 2 in its leading 16 bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = 1.42860682030941723e-6f;  // ln 2 - kLn2Hi
  // Compares and adding 1.5 * 2^23 (which rounds to an integer in the current rounding mode, to
  // nearest), not fmin, fmax and nearbyint: those are calls into libm without SSE4.1.
  constexpr float kRound = 12582912.0f;
  const float xc = x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x == x ? x : 0.0f;
  using detail::madd;
  const float n = madd(xc, kLog2e, kRound) - kRound;
  const float r = madd(-n, kLn2Lo, madd(-n, kLn2Hi, xc));
  float p = 1.0f / 5040;
  p = madd(p, r, 1.0f / 720), p = madd(p, r, 1.0f / 120), p = madd(p, r, 1.0f / 24), p = madd(p, r, 1.0f / 6);
  p = madd(p, r, 0.5f), p = madd(p, r, 1.0f), p = madd(p, r, 1.0f);
  const int32_t ni = int32_t(n), half = ni / 2;
  float y = p * detail::pow2(half) * detail::pow2(ni - half);
  y = x > 88.72283935546875f ? std::numeric_limits<float>::infinity() : y;  // beyond f32: inf
  y = x < -103.972084045410156f ? 0.0f : y;  // below half the least subnormal: 0
  return x != x ? x : y;
}

// tanh: the Maclaurin series to x^15 below |x| = 0.4 (truncation below 3e-10 relative), else
// (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.45, where nothing cancels.
inline float tanh(float x) {
  using detail::madd, detail::tanh_coef;
  const float a = std::fabs(x), s = a * a;
  float p = tanh_coef(8);
  p = madd(p, s, tanh_coef(7)), p = madd(p, s, tanh_coef(6)), p = madd(p, s, tanh_coef(5));
  p = madd(p, s, tanh_coef(4)), p = madd(p, s, tanh_coef(3)), p = madd(p, s, tanh_coef(2));
  const float small = madd(a * s, p, a);
  // (1 - e) / (1 + e) as if from the exact 1 - e and 1 + e: their roundings are recovered exactly
  // (Fast2Sum: 1 >= e), and one Newton step from the exact remainder of the quotient corrects
  // for them and for the quotient's own rounding. The quotient in double did the same at twice
  // the cost (half the lanes, two conversions).
  const float e = exp(-2.0f * a);
  const float num = 1.0f - e, den = 1.0f + e;
  const float num_lo = (1.0f - num) - e, den_lo = e - (den - 1.0f);  // exact: 1 - e = num + num_lo
  const float inv = 1.0f / den, q = num * inv;
  const float rem = madd(-q, den, num);  // num - q den, exact
  const float large = madd(madd(-q, den_lo, rem + num_lo), inv, q);
  const float t = a < 0.4f ? small : large;
  return x != x ? x : std::copysign(t, x);
}

// erfc(a) for a >= 0.5: exp(-a^2) times the series (Clenshaw's recurrence); 0 from 4.5
// on (erfc(4.5) = 2e-10: below every f32 ulp of 1 - erfc, and 1/10^4 of a GELU tail's 4 ulps of
// |x|). exp(-a^2) is off by the rounding of a^2, 2^-24 a^2 relative: 1e-6 of erfc at most, where
// erfc is below 2e-10 against 1. Any other a (below 0.5, NaN) gives a value the callers do not use.
inline float erfc_from_half(float a) {
  using namespace detail;
  constexpr float kMid = float(kTHigh + kTLow), kScale = float(1 / (kTHigh - kTLow));
  const float t = 1.0f / (1.0f + a);
  const float u = (2 * t - kMid) * kScale, u2 = 2 * u;
  float b1 = 0, b2 = 0;
#pragma GCC unroll 12  // whole: a loop left inside the element's loop keeps that from vectorizing
  for (int k = kErfcDegree; k >= 1; --k) {
    const float b0 = madd(u2, b1, kErfc.c[k] - b2);
    b2 = b1, b1 = b0;
  }
  const float y = exp(-a * a) * madd(u, b1, kErfc.c[0] - b2);
  return a >= float(kErfcHigh) ? 0.0f : y;
}

// erf's Maclaurin series to x^15, for |x| below 0.5 (truncation below 1e-9). In double: in f32
// the rounding of 2 / sqrt(pi) and of the sum near 1 came to 2.5 ulps of a result just below 0.5.
inline float erf_small(float x) {
  using detail::erf_coef, detail::madd;
  const double s = double(x) * x;
  double p = erf_coef(7);
  p = madd(p, s, erf_coef(6)), p = madd(p, s, erf_coef(5)), p = madd(p, s, erf_coef(4));
  p = madd(p, s, erf_coef(3)), p = madd(p, s, erf_coef(2)), p = madd(p, s, erf_coef(1));
  p = madd(p, s, erf_coef(0));
  return float(x * p);
}

// erf: the series below |x| = 0.5, else +-(1 - erfc(|x|)). Both are computed and one is chosen,
// without a branch: random signs and sizes mispredicted it, and loops of it vectorize.
inline float erf(float x) {
  const float a = std::fabs(x), big = std::copysign(1.0f - erfc_from_half(a), x), small = erf_small(x);
  const float y = a < 0.5f ? small : big;
  return x != x ? x : y;
}

// 1 + erf(x), without cancellation in a GELU's negative tail: erfc(|x|) itself for x <= -0.5.
// Below |x| = 0.5 the series in f32: next to 1, its few ulps of erf(x) (at most 0.52) are a
// fraction of an ulp of the sum, and the loop stays in f32 lanes (the double series halves them).
inline float one_plus_erf(float x) {
  using detail::erf_coef, detail::madd;
  const float s = x * x;
  float p = float(erf_coef(7));
  p = madd(p, s, float(erf_coef(6))), p = madd(p, s, float(erf_coef(5))), p = madd(p, s, float(erf_coef(4)));
  p = madd(p, s, float(erf_coef(3))), p = madd(p, s, float(erf_coef(2))), p = madd(p, s, float(erf_coef(1)));
  p = madd(p, s, float(erf_coef(0)));
  const float e = erfc_from_half(std::fabs(x)), small = madd(x, p, 1.0f);
  const float y = x <= -0.5f ? e : x >= 0.5f ? 2.0f - e : small;
  return x != x ? x : y;
}

}  // namespace gexec::cpu::f32
