// The reference's scalar arithmetic, shared by the full and the sampled reference so that both
// give the same bits for the same element.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>
#include <algorithm>
#include <limits>

#include "gexec/ir/real_value.hpp"
#include "gexec/ir/op.hpp"
#include "gexec/ir/tensor.hpp"
#include "gexec/ir/rounding.hpp"
#include "gexec/verify/bound.hpp"

namespace gexec::ref {

// |gelu'| peaks at 1.1289 (tanh and erf forms alike), so an error e in x moves gelu(x) by at
// most 1.13 e, and |gelu(x)| <= |x|: scale_x * 1.13 bounds both.
constexpr double kGeluSlope = 1.13;

// Where logical (row-major) element `logical` of t is stored.
inline int64_t storage_of(const Tensor& t, int64_t logical) { return storage_index(t, logical); }

// The value a device stores when it rounds v once to the dtype; exact in double.
inline double round_to(DType t, double v) {
  switch (t) {
    case DType::f16: return f16_to_float(round_to_f16_bits(v));
    case DType::bf16: return bf16_to_float(round_to_bf16_bits(v));
    case DType::f32: return round_to_f32(v);
    case DType::f8e4m3:
    case DType::f8e5m2: return f8::decode(f8::encode(v, f8_format(t)), f8_format(t));  // no scale: round_real
    case DType::i32: return double(round_to_i32(v));
  }
  return v;
}

// The scale an f8 tensor's logical element is stored with; 1 for the other dtypes.
inline double scale_of(const Tensor& t, int64_t logical) { return is_f8(t.dtype) ? t.scale_at(logical) : 1.0; }

// The real value a device stores when it rounds v once to dtype t with `scale`: for f8, v / scale
// rounded to the nearest code (saturating), times the scale again; the other dtypes have none.
inline double round_scaled(DType t, double v, double scale) {
  if (!is_f8(t)) return round_to(t, v);
  return f8::decode(f8::encode(v / scale, f8_format(t)), f8_format(t)) * scale;
}

// The same for logical element `logical` of t.
inline double round_real(const Tensor& t, int64_t logical, double v) {
  return round_scaled(t.dtype, v, scale_of(t, logical));
}

inline double gelu_tanh(double x) {
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
inline double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
inline double relu(double x) { return x < 0 ? 0.0 : x; }  // NaN passes through
inline double silu(double x) { return x / (1.0 + std::exp(-x)); }

// |silu'| peaks at 1.0998 (near x = 2.4) and |silu(x)| <= |x|: scale_x * 1.1 bounds both.
constexpr double kSiluSlope = 1.1;

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
// The slopes of SIGMOID, TANH and ERF at t: each peaks at 0 and falls with |t|.
// The slopes in exp(-|t|): sigmoid(t) (1 - sigmoid(t)) and 1 - tanh(t)^2 lose everything to
// cancellation once sigmoid or tanh rounds to 1 (|t| above 37 or 19), where the slope of a tiny
// result (sigmoid(-47) = 4e-21) is still its whole relative error: a correct kernel failed there.
inline double sigmoid_slope(double t) {
  const double e = std::exp(-std::fabs(t));
  return e / ((1.0 + e) * (1.0 + e));
}
inline double tanh_slope(double t) {
  const double e = std::exp(-2.0 * std::fabs(t));
  return 4.0 * e / ((1.0 + e) * (1.0 + e));
}
inline double erf_slope(double t) { return 2.0 / std::sqrt(std::numbers::pi) * std::exp(-t * t); }
// The |x'| nearest 0 that a device may see for a value x whose error has variance var (kTail
// standard deviations away): where those slopes are steepest, so that slope(nearest) * error
// bounds the error of the result (their values saturate, and an error there vanishes).
inline double nearest_to_zero(double x, double var) {
  return std::max(0.0, std::fabs(x) - bound::kTail * std::sqrt(var));
}
// var carried through a slope s: a saturated value (s == 0) carries nothing, even an infinite var.
inline double through_slope(double var, double s) { return s == 0 ? 0.0 : var * s * s; }

// (Elem is below.) The real numbers the kernels use for a constant operand (Attrs::constant):
// its nearest f32, the type they compute in (graph-format.md).
inline double constant_value(double c) { return round_to_f32(c); }

// A value with its error scale and variance (bound.hpp); `rounded` when the op that made it
// rounded it (to `dtype`), which adds that rounding's variance to what it carries into readers.
// ulp_floor: an f8 tensor's subnormal step in real units (compare.hpp's subnormal_step), which
// ulp_of leaves out; 0 for other dtypes.
struct Elem {
  double value = 0, scale = 0, var = 0;
  bool rounded = false;
  DType dtype = DType::f32;
  double ulp_floor = 0;
  double carried() const { return var + (rounded ? bound::rounding_var(dtype, value, ulp_floor) : 0.0); }
};

// A constant operand as a value: exact, of the scale of its own magnitude.
inline Elem constant_elem(double c) {
  const double v = constant_value(c);
  return {v, std::fabs(v), 0.0, false, DType::f32};
}

inline bool exact_cast(DType x, DType y) { return x == y || y == DType::f32; }

// The dtype a product's epilogue may convert its bias to before adding it: the output's, except
// that cuBLASLt's FP8 kernels read a bf16 bias with an f32 output (fp8_plan.hpp), so that an f32
// or f16 bias loses bits there that an f32 output would otherwise keep.
inline DType bias_read_dtype(bool f8_product, DType out) {
  return f8_product && out == DType::f32 ? DType::bf16 : out;
}

// One elementwise op (or FUSED_ELEMENTWISE step) on x (and y: the second operand or the bias
// element, of dtype y_dtype), rounded to `out`: the one place both references compute it, so that
// their bits agree, and a group's steps compute exactly what the separate ops would.
// MUL's scale is the product of its operands' scales, which bounds |x y| and an error in either;
// its variance is var(x) y^2 + x^2 var(y) + var(x) var(y). SILU is treated like GELU: its slope
// is below kSiluSlope, and its f32 evaluation error is that of an exp and a division.
// SUB is ADD's rules. DIV x / y: the divisor a device sees is at least m = |y| - kTail sd(y) in
// magnitude, so the error (ex y - x ey) / (y y') is at most (|ex| + |r| |ey|) / m: variance
// (var(x) + r^2 var(y)) / m^2, scale scale(x) / m; where m <= 0 the divisor's error may reach 0
// and nothing bounds the quotient (variance infinite: compare.cpp counts the element as unbounded
// and does not compare it, as the reference vouches for no value there), except for an exact divisor of 0, whose result (an infinity
// or NaN) compare.cpp matches by value. SIGMOID, TANH, ERF: the slope at the |x'| nearest 0 that
// x's error reaches (nearest_to_zero) times x's error, plus the f32 evaluation error
// (bound::libm_eval_var); their results are bounded by 1. POW by the constant p (y's value):
// C's pow (a negative base with a non-integer exponent gives NaN, as powf), slope |p| |x'|^(p-1)
// at its steepest over |x| +- kTail sd(x) (the far end for p >= 1, the near end for p < 1, which
// is unbounded where that reaches 0), plus the evaluation error; p = 0 gives 1, exactly.
// gelu_tanh_rel: the relative error of the kernel's tanh (Precision::gelu_tanh_rel).
inline Elem elementwise(OpType t, GeluApprox approx, DType out, DType x_dtype, DType y_dtype, const Elem& x,
                        const Elem& y, double gelu_tanh_rel, double out_scale = 1.0) {
  double r = x.value, rs = x.scale, var = x.carried();
  switch (t) {
    case OpType::BIAS_ADD: {
      r = x.value + y.value, rs = x.scale + y.scale;
      // Fused into a product's epilogue, a bias may be converted to the output dtype (inexactly
      // where that dtype does not hold every value of the bias's: f32 to f16, f16 to bf16).
      const bool converted = !exact_cast(y_dtype, out);
      var += y.carried() + (converted ? bound::single_rounding_var(out, y.value) : 0.0);
      break;
    }
    case OpType::ADD: r = x.value + y.value, rs = x.scale + y.scale, var += y.carried(); break;
    case OpType::SUB: r = x.value - y.value, rs = x.scale + y.scale, var += y.carried(); break;
    case OpType::DIV: {
      const double vy = y.carried(), m = std::fabs(y.value) - bound::kTail * std::sqrt(vy);
      r = x.value / y.value;
      if (m > 0) {
        rs = x.scale / m, var = (var + r * r * vy) / (m * m);
      } else {
        rs = std::numeric_limits<double>::infinity();
        var = vy == 0 && var == 0 ? 0.0 : std::numeric_limits<double>::infinity();
      }
      break;
    }
    case OpType::SIGMOID: {
      const double s = sigmoid_slope(nearest_to_zero(x.value, var));
      r = sigmoid(x.value), rs = 1.0;
      var = through_slope(var, s) + bound::libm_eval_var(r, bound::kSigmoidF32U);
      break;
    }
    case OpType::TANH: {
      const double s = tanh_slope(nearest_to_zero(x.value, var));
      r = std::tanh(x.value), rs = std::min(1.0, x.scale);
      var = through_slope(var, s) + bound::libm_eval_var(r, bound::kTanhF32U);
      break;
    }
    case OpType::ERF: {
      const double s = erf_slope(nearest_to_zero(x.value, var));
      r = std::erf(x.value), rs = std::min(1.0, x.scale * erf_slope(0.0));
      var = through_slope(var, s) + bound::libm_eval_var(r, bound::kErfF32U);
      break;
    }
    case OpType::POW: {
      const double p = y.value;
      r = std::pow(x.value, p);
      if (p == 0) {
        rs = 1.0, var = 0.0;
        break;
      }
      const double sd = bound::kTail * std::sqrt(var);
      const double at = p >= 1 ? std::fabs(x.value) + sd : std::fabs(x.value) - sd;  // the steepest |x'|
      double slope = 0;
      if (var > 0) slope = at > 0 ? std::fabs(p) * std::pow(at, p - 1) : std::numeric_limits<double>::infinity();
      rs = std::pow(std::fabs(x.scale), p);  // |x|^p for p > 0; for p < 0 the reciprocal power of the scale
      if (!(rs >= std::fabs(r))) rs = std::fabs(r);
      var = var > 0 ? var * slope * slope : 0.0;
      var += bound::libm_eval_var(r, bound::kPowF32U);
      break;
    }
    case OpType::MUL: {
      const double vy = y.carried();
      r = x.value * y.value, rs = x.scale * y.scale;
      var = var * y.value * y.value + x.value * x.value * vy + var * vy;
      break;
    }
    case OpType::RELU: var = bound::relu_var(x.value, var), r = relu(x.value); break;
    case OpType::GELU:
      r = approx == GeluApprox::tanh ? gelu_tanh(x.value) : gelu_erf(x.value);
      rs = x.scale * kGeluSlope;
      var = var * kGeluSlope * kGeluSlope + bound::gelu_eval_var(x.value) + bound::approx_gelu_var(x.value, gelu_tanh_rel);
      break;
    case OpType::SILU:
      r = silu(x.value), rs = x.scale * kSiluSlope;
      var = var * kSiluSlope * kSiluSlope + bound::gelu_eval_var(x.value);
      break;
    default: break;  // CAST: the rounding below
  }
  Elem e;
  e.value = round_scaled(out, r, out_scale);  // an f8 result (of a CAST) in real units with its scale
  // A cast may round a value up past its scale; the scale must still bound it.
  e.scale = t == OpType::CAST ? std::max(rs, std::fabs(e.value)) : rs;
  e.var = var;
  // RELU and CAST into the same dtype or f32 return one of their input's values: no rounding of
  // their own. Into a narrower dtype (a RELU from f16 to bf16) they round like any op.
  e.rounded = !((t == OpType::RELU || t == OpType::CAST) && exact_cast(x_dtype, out));
  e.dtype = out;
  return e;
}

// A FUSED_ELEMENTWISE group at one element: `vals` holds the inputs there (a bias input's at the
// element's column) with their dtypes in `dtypes`; appends every step's value, each rounded to
// its dtype, exactly as the ops the group replaces would compute them.
inline void group_values(const Attrs& a, std::vector<Elem>& vals, std::vector<DType>& dtypes, double gelu_tanh_rel) {
  for (const GroupStep& st : a.steps) {
    const size_t x = size_t(st.args[0]), y = st.args.size() > 1 ? size_t(st.args[1]) : x;
    const Elem second = st.constant ? constant_elem(*st.constant) : st.args.size() > 1 ? vals[y] : Elem{};
    const Elem e = elementwise(st.type, st.approximate, st.dtype, dtypes[x], st.constant ? DType::f32 : dtypes[y],
                               vals[x], second, gelu_tanh_rel);
    vals.push_back(e);
    dtypes.push_back(st.dtype);
  }
}

}  // namespace gexec::ref
