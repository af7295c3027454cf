// The reference's scalar arithmetic, shared by the full and the sampled reference so that both
// give the same bits for the same element.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>
#include <algorithm>

#include "gexec/ir/op.hpp"
#include "gexec/ir/tensor.hpp"
#include "gexec/rng/round.hpp"

namespace gexec::ref {

// |gelu'| peaks at 1.1289 (tanh and erf forms alike), so an error e in x moves gelu(x) by at
// most 1.13 e, and |gelu(x)| <= |x|: scale_x * 1.13 bounds both.
constexpr double kGeluSlope = 1.13;

// Where logical (row-major) element `logical` of t is stored.
inline int64_t storage_of(const Tensor& t, int64_t logical) {
  if (t.rank() != 2 || t.layout != Layout::colmajor) return logical;
  const int64_t rows = t.shape[0], cols = t.shape[1];
  return (logical % cols) * rows + logical / cols;
}

// The value a device stores when it rounds v once to the dtype; exact in double.
inline double round_to(DType t, double v) {
  switch (t) {
    case DType::f16: return f16_to_float(rng::round_to_f16_bits(v));
    case DType::bf16: return bf16_to_float(rng::round_to_bf16_bits(v));
    case DType::f32: return rng::round_to_f32(v);
  }
  return v;
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

// A value and its error scale (reference.hpp's RefTensor explains the scale).
struct Elem {
  double value = 0, scale = 0;
};

// One elementwise op (or FUSED_ELEMENTWISE step) on x (and y: the second operand or the bias
// element), rounded to `out`: the one place both references compute it, so their bits agree.
// MUL's scale is the product of its operands' scales, which bounds |x y| and an error in either.
inline Elem elementwise(OpType t, GeluApprox approx, DType out, Elem x, Elem y) {
  double r = x.value, rs = x.scale;
  switch (t) {
    case OpType::BIAS_ADD:
    case OpType::ADD: r = x.value + y.value, rs = x.scale + y.scale; break;
    case OpType::MUL: r = x.value * y.value, rs = x.scale * y.scale; break;
    case OpType::RELU: r = relu(x.value); break;
    case OpType::GELU:
      r = approx == GeluApprox::tanh ? gelu_tanh(x.value) : gelu_erf(x.value);
      rs = x.scale * kGeluSlope;
      break;
    case OpType::SILU: r = silu(x.value), rs = x.scale * kSiluSlope; break;
    default: break;  // CAST: the rounding below
  }
  const double v = round_to(out, r);
  // A cast may round a value up past its scale; the scale must still bound it.
  return {v, t == OpType::CAST ? std::max(rs, std::fabs(v)) : rs};
}

// A FUSED_ELEMENTWISE group at one element: `in` holds the inputs' values there (a bias input's
// at the element's column); returns every value, inputs then steps, each step rounded to its dtype.
inline void group_values(const Attrs& a, std::vector<Elem>& vals) {
  for (const GroupStep& st : a.steps) {
    const Elem x = vals[size_t(st.args[0])];
    const Elem y = st.args.size() > 1 ? vals[size_t(st.args[1])] : Elem{};
    vals.push_back(elementwise(st.type, st.approximate, st.dtype, x, y));
  }
}

}  // namespace gexec::ref
