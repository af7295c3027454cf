// The CPU kernels' scalar activations in f32, shared by the single-op and the fused group kernels.
#pragma once

#include <cmath>

#include "gexec/ir/op.hpp"

namespace gexec::cpu {

// GELU, tanh form: the one formula of the CPU backend (the epilogue, the GELU op, the groups).
inline float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678f)); }
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

// A one-input elementwise op of type t on x: the single-op kernel and the group kernel both call
// it, so a new activation is written here once. CAST (and anything else) is x: the store rounds.
inline float unary(OpType t, float x, GeluApprox approx) {
  switch (t) {
    case OpType::RELU: return x < 0 ? 0.0f : x;  // NaN passes through
    case OpType::GELU: return approx == GeluApprox::tanh ? gelu_tanh(x) : gelu_erf(x);
    case OpType::SILU: return silu(x);
    default: return x;
  }
}

}  // namespace gexec::cpu
