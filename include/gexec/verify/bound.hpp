// The error bound of the check: what a correct kernel may differ from the reference by, per
// element and normwise, built from the roundings that really happen (docs in README "The check").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gexec/ir/dtype.hpp"
#include "gexec/ir/rounding.hpp"
#include "gexec/kernels/precision.hpp"

namespace gexec {

// Unit roundoff (half an ulp, relative) of a dtype: 2^-p for a p-bit significand.
inline double unit_roundoff(DType t) {
  switch (t) {
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    case DType::f8e4m3: return 0x1p-4;
    case DType::f8e5m2: return 0x1p-3;
    case DType::f32: break;
    case DType::i32: return 0.0;  // integers: no arithmetic op writes one
  }
  return 0x1p-24;
}

// The spacing of the dtype's values at |x| (at 0 and below the normal range: the subnormal spacing).
// For f8, x is a real value (stored x scale): the spacing of the grid scaled by a power of two is
// the same relative spacing, and doubling it covers a scale that is not one; the subnormal range
// moves with the scale, so it is left to atol (one subnormal step times the scale).
inline double ulp_of(DType t, double x) {
  if (is_f8(t)) {
    if (x == 0 || !std::isfinite(x)) return 0.0;
    return 2 * pow2(floor_log2(x) - f8_format(t).mant_bits);
  }
  const int digits = t == DType::f16 ? 11 : t == DType::bf16 ? 8 : 24;
  const int emin = t == DType::f16 ? -14 : -126;
  int e = emin;
  if (x != 0 && std::isfinite(x)) e = std::max(floor_log2(x), emin);
  return pow2(e - (digits - 1));
}

// The constants of the bound. Every term below is a variance (the mean square of device - ref)
// or a multiple of one; the check and its measured ratios are in README "The check".
namespace bound {

// A rounding to a dtype is off by a uniform fraction of an ulp: variance ulp^2 / 12.
// An output is rounded twice, by the reference and by the device: ulp^2 / 6 (output_rounding_var).
// An intermediate is rounded by the reference, and by a device only where it stores it: fused
// kernels skip it and store a later tensor instead (one device rounding for the reference's
// two or three of a MATMUL -> BIAS_ADD -> act chain), and a device that stores it too rounds
// nearly the same value where the errors before it are small, the same way. 1.5 roundings per
// intermediate (ulp^2 / 8) is the count of a fused chain of two (3 roundings for 2 tensors),
// and more than that of longer chains. floor: as output_rounding_var's.
inline double rounding_var(DType t, double x, double floor = 0.0) {
  const double q = std::max(ulp_of(t, x), floor);
  return q * q / 8;
}
// floor: the grid's spacing below its normal range where ulp_of leaves it out (f8's subnormal
// step in real units, compare.hpp's subnormal_step).
inline double output_rounding_var(DType t, double x, double floor = 0.0) {
  const double q = std::max(ulp_of(t, x), floor);
  return q * q / 6;
}

// One rounding only (a bias converted to the output dtype once, by the kernel alone).
inline double single_rounding_var(DType t, double x) {
  const double q = ulp_of(t, x);
  return q * q / 12;
}

// Accumulation of K products in a float with unit roundoff u, in any order: each of the K
// additions (and each product) rounds a partial sum bounded by sum_k |a_k b_k| (= mag) with a
// relative error of at most u, of variance at most u^2 / 3; so the variance of the total is at
// most (K + 1) u^2 mag^2 / 3. A worst case (all K errors of one sign, K u mag) does not occur
// with round to nearest on data that is not adversarial; the tail factor below covers the spread.
inline double accumulation_var(double u, int64_t k, double mag) { return double(k + 1) * u * u * mag * mag / 3; }

// Blocked accumulation (Precision::accumulate_block = b > 0, shorter than K): each block's sum,
// over magnitudes mag_j (sum_sq = sum_j mag_j^2), carries accumulation_var(u, b, mag_j); the sum
// of the blocks, and anything else, an f32 accumulation over the whole of K.
inline double block_accumulation_var(double u, int64_t b, double sum_sq, int64_t k, double mag) {
  return double(b + 1) * u * u * sum_sq / 3 + accumulation_var(0x1p-24, k, mag);
}

// Whether a K-term product under `p` takes the block model (a block shorter than K); where it
// does, the reference sums the blocks' squared magnitudes for product_accumulation_var.
inline bool blocked_accumulation(const Precision& p, int64_t k) {
  return p.accumulate_block > 0 && p.accumulate_block < k;
}

// The accumulation term of a K-term product of magnitude mag under `p`: blocked (block_sq, the
// blocks' squared magnitudes, alpha included) or over the whole of K. The full and the sampled
// reference both take it, so that they bound alike.
inline double product_accumulation_var(const Precision& p, int64_t k, double mag, double block_sq) {
  return blocked_accumulation(p, k) ? block_accumulation_var(p.accumulate_u, p.accumulate_block, block_sq, k, mag)
                                    : accumulation_var(p.accumulate_u, k, mag);
}

// A product's epilogue (every backend's: cuBLASLt's and the CPU's) adds the bias and the residual
// in f32, each addition rounding a partial sum bounded by the result's scale (|alpha| sum |a b| +
// |bias| + |beta R|): of variance at most u^2 scale^2 / 3 each, which matters where they cancel
// (an f32 result far below its scale).
inline double epilogue_var(int additions, double scale) { return additions * 0x1p-48 * scale * scale / 3; }

// A product's alpha (and a residual's beta) reaches every kernel as an f32 (cuBLASLt's scale type,
// OpenBLAS's sgemm): alpha * sum becomes fl32(alpha) * sum, a relative error of
// |fl32(c) - c| / |c| on every element alike. It is at most 2^-24, well inside the accumulation
// term, for a c in f32's normal range, but a c below it (an alpha of -1e-40, f32 subnormal) keeps
// only the bits above 2^-149: 5e-6 relative for 1e-40. The error is systematic, the same sign over
// the whole product, so it is carried as variance E^2 with E = |fl32(c) - c| / |c| * mag (mag:
// |c| times the magnitudes it multiplies), as approx_gelu_var does. 0 where c is an f32.
inline double coefficient_var(double c, double mag) {
  const double f = double(float(c));
  if (f == c || c == 0 || !std::isfinite(f)) return 0.0;
  const double e = std::fabs(f - c) / std::fabs(c) * mag;
  return e * e;
}

// TF32 input rounding: each f32 operand is rounded to 11 significant bits, an error of at most
// 2^-11 |a|, uniform, variance at most 2^-22 a^2 / 3; through the product, sum_k a_k^2 b_k^2
// (= sq) times that per rounded operand.
inline double tf32_var(int rounded_operands, double sq) { return rounded_operands * 0x1p-22 * sq / 3; }

// GELU evaluated in f32 (tanhf or erff within 2 ulps, and the few roundings of its argument's
// cubic and of the products around it): an error of up to about 4 f32 ulps of |x|, treated as
// a uniform error of that size; it matters only for f32 results.
constexpr double kGeluF32Ulps = 4.0;
inline double gelu_eval_var(double x) {
  const double e = kGeluF32Ulps * 0x1p-24 * std::fabs(x);
  return e * e / 3;
}

// SIGMOID, TANH, ERF and POW evaluated in f32 by the backend's libm (sigmoid as 1 / (1 + expf(-x))):
// a relative error of at most k f32 unit roundoffs (2^-24) of the result, treated as a uniform
// error of that size, as gelu_eval_var. The documented maximum errors, in ulps of the result
// (one ulp is at most 2 unit roundoffs): CUDA (Programming Guide, "Mathematical Functions",
// single precision) expf 2, tanhf 2, erff 2, powf 4, x / y 0 (IEEE, nvcc's and NVRTC's default
// -prec-div=true); glibc on x86-64 ("Known Maximum Errors in Math Functions") at most as large.
// Sigmoid: expf's error shrunk by e / (1 + e) < 1, then the rounding of the sum and of the
// quotient: 4 + 1 + 1 unit roundoffs. Each k below is twice the documented worst case in unit
// roundoffs, a margin for toolkits whose tables differ; only f32 results see it.
constexpr double kSigmoidF32U = 12.0, kTanhF32U = 8.0, kErfF32U = 8.0, kPowF32U = 16.0;
inline double libm_eval_var(double r, double k) {
  if (!std::isfinite(r)) return 0.0;  // an infinity or NaN is matched by value (compare.cpp)
  const double e = k * 0x1p-24 * std::fabs(r);
  return e * e / 3;
}

// GELU through an approximate tanh (Precision::gelu_tanh_rel = r): tanh(u) is off by at most
// r |tanh(u)|, so 0.5 x (1 + tanh(u)) by at most E = 0.5 |x| |tanh(u)| r, which near the
// cancellation 1 + tanh(u) (x well below 0) is large against the result. The error is a
// deterministic function of u, the same sign over many elements, not a random rounding: it is
// carried as variance E^2 (not E^2 / 3), so that the normwise rule allows it at its worst in
// every element at once, and the per-element kTail sigmas cover E with room. 0 when r is 0.
inline double approx_gelu_var(double x, double r) {
  if (r == 0) return 0.0;
  const double c = 0.7978845608028654;  // sqrt(2 / pi)
  const double e = 0.5 * std::fabs(x) * std::fabs(std::tanh(c * (x + 0.044715 * x * x * x))) * r;
  return e * e;
}

// Per element: |got - ref| <= atol + kOutputUlps * ulp(ref) + kTail * sqrt(var).
// The output's own two roundings (device and reference) are taken at their worst: two
// roundings to nearest of values that differ by less than an ulp land at most one step apart,
// and a step next to ref is at most ulp(ref) (the spacing at |ref|, or the smaller one below a
// power of two). A correct kernel whose value before rounding is a hair from the reference's
// reaches that step exactly, so one ulp alone would leave no margin: the 0.25 is the margin, and
// it bounds the ratio of a lone rounding step at 0.8.
constexpr double kOutputUlps = 1.25;
// A variance that came out NaN (an infinite one times 0, or infinite terms of both signs, where
// an operand is an infinity or its error unbounded) says nothing about the error: it is infinite,
// so that the element is counted as unbounded (compare.cpp), never compared against a NaN bound.
inline double known_var(double var) { return std::isnan(var) ? std::numeric_limits<double>::infinity() : var; }
// The errors carried from intermediates, the accumulation and TF32 are sums of many independent
// rounding errors: kTail standard deviations (6 sigma: 2e-9 per element for a normal spread,
// less for these bounded ones; for a handful of terms, more than their worst case).
constexpr double kTail = 6.0;
// RELU passes an error through only where its input may be positive: where the reference's
// input is below -kTail standard deviations of its error, a correct device's is negative too and
// both give 0 exactly.
inline double relu_var(double x, double var) { return x < -kTail * std::sqrt(known_var(var)) ? 0.0 : known_var(var); }
// Normwise: ||got - ref||_F <= kNorm(N) * sqrt(sum var_i), the sum of the variances of all N
// elements including the output's roundings. For independent errors ||e||^2 / sum var behaves as
// a chi-square of N_eff degrees of freedom over N_eff, where N_eff = (sum var_i)^2 / sum var_i^2
// is N for equal variances and 1 where one element holds them all (an output whose largest
// element dwarfs the rest: one rounding step there is the whole error). kNorm is the square root
// of its quantile at the per-element rule's tail, kTail sigma (Wilson-Hilferty's cube-root normal
// approximation, (1 - 2/(9n) + kTail sqrt(2/(9n)))^3), so that the sum of squares is held to the
// same odds as each element: 6.85 at N_eff = 1 (no tighter than one element's 6 sigma, which a
// correct kernel's single element reached in a few of a million generated graphs when this was
// 3.1), 2.20 at 16, 1.04 at 10^4. kNormMargin covers the variances that are not upper bounds
// (the ulp-uniform model of a rounding).
constexpr double kNormMargin = 1.25;
inline double norm_factor(double n_eff) {
  const double c = 2.0 / (9.0 * std::max(n_eff, 1.0));
  const double q = 1.0 - c + kTail * std::sqrt(c);
  return kNormMargin * std::sqrt(q * q * q);
}
// equal_pairs: sum of var_i var_j over pairs i != j whose errors are one error (compare.cpp's
// equal-value estimate), which counts them as a single element.
inline double effective_count(double var_sum, double var_sq_sum, double equal_pairs = 0.0) {
  const double d = var_sq_sum + equal_pairs;
  return d > 0 ? var_sum * var_sum / d : 1.0;
}

}  // namespace bound
}  // namespace gexec
