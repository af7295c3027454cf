// The CPU kernels' scalar activations in f32, shared by the single-op and the fused group kernels.
#pragma once

#include <cmath>

#include "gexec/ir/op.hpp"

namespace gexec::cpu {

// GELU, tanh form: the one formula of the CPU backend (the epilogue, the GELU op, the groups).
inline float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678f)); }
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// A two-operand op of type t (ADD, SUB, MUL, DIV, BIAS_ADD) on x and y, y being the second input,
// the bias element or the constant: the single-op and the group kernels both call it.
inline float binary(OpType t, float x, float y) {
  switch (t) {
    case OpType::SUB: return x - y;
    case OpType::MUL: return x * y;
    case OpType::DIV: return x / y;
    default: return x + y;  // ADD, BIAS_ADD
  }
}

// A one-input elementwise op of type t on x: the single-op kernel and the group kernel both call
// it, so a new activation is written here once. CAST (and anything else) is x: the store rounds.
// p: POW's exponent (its constant, as an f32). powf: a negative x with a non-integer p gives NaN.
inline float unary(OpType t, float x, GeluApprox approx, float p = 0.0f) {
  switch (t) {
    case OpType::SIGMOID: return sigmoid(x);
    case OpType::TANH: return std::tanh(x);
    case OpType::ERF: return std::erf(x);
    case OpType::POW: return std::pow(x, p);
    case OpType::RELU: return x < 0 ? 0.0f : x;  // NaN passes through
    case OpType::GELU: return approx == GeluApprox::tanh ? gelu_tanh(x) : gelu_erf(x);
    case OpType::SILU: return silu(x);
    default: return x;
  }
}

}  // namespace gexec::cpu
