// The reference's scalar arithmetic, shared by the full and the sampled reference so that both
// give the same bits for the same element.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "gexec/ir/real_value.hpp"
#include "gexec/ir/tensor.hpp"
#include "gexec/rng/round.hpp"

namespace gexec::ref {

// |gelu'| peaks at 1.1289 (tanh and erf forms alike), so an error e in x moves gelu(x) by at
// most 1.13 e, and |gelu(x)| <= |x|: scale_x * 1.13 bounds both.
constexpr double kGeluSlope = 1.13;

// Where logical (row-major) element `logical` of t is stored.
inline int64_t storage_of(const Tensor& t, int64_t logical) { return storage_index(t, logical); }

// The value a device stores when it rounds v once to the dtype; exact in double.
inline double round_to(DType t, double v) {
  switch (t) {
    case DType::f16: return f16_to_float(rng::round_to_f16_bits(v));
    case DType::bf16: return bf16_to_float(rng::round_to_bf16_bits(v));
    case DType::f32: return rng::round_to_f32(v);
    case DType::f8e4m3:
    case DType::f8e5m2: return f8::decode(f8::encode(v, f8_format(t)), f8_format(t));  // no scale: round_real
  }
  return v;
}

// The real value a device stores for logical element `logical` of t when it rounds v once:
// for f8, v / scale rounded to the nearest code (saturating), times the scale again.
inline double round_real(const Tensor& t, int64_t logical, double v) {
  if (!is_f8(t.dtype)) return round_to(t.dtype, v);
  const double s = t.scale_at(logical);
  return f8::decode(f8::encode(v / s, f8_format(t.dtype)), f8_format(t.dtype)) * s;
}

inline double gelu_tanh(double x) {
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
inline double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
inline double relu(double x) { return x < 0 ? 0.0 : x; }  // NaN passes through

}  // namespace gexec::ref
