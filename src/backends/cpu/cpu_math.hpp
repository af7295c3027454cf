// The CPU kernels' scalar activations in f32, shared by the single-op and the fused group kernels:
// exp, tanh and erf from f32_math.hpp (libm's tanhf and erff were most of a small MLP's time).
#pragma once

#include <cmath>

#include "f32_math.hpp"
#include "gexec/ir/op.hpp"

namespace gexec::cpu {

// GELU, tanh form: the one formula of the CPU backend (the epilogue, the GELU op, the groups).
// As the reference writes it, 0.5 x (1 + tanh(u)): where tanh(u) rounds to -1 the result is 0, as
// the reference's. x / (1 + exp(-2u)), equal in exact arithmetic, gave 1e-29 there: an f8 CAST's
// block of such values then got a scale of 1e-31 where the reference's all-zero block gets 1.
inline float gelu_tanh(float x) { return 0.5f * x * (1.0f + f32::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
inline float gelu_erf(float x) { return 0.5f * x * f32::one_plus_erf(x * 0.70710678f); }
inline float silu(float x) { return x / (1.0f + f32::exp(-x)); }
inline float sigmoid(float x) { return 1.0f / (1.0f + f32::exp(-x)); }

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

// A one-input elementwise op of type t over v[0, n) in place (cpu_unary.cpp): the single-op, the
// group and the GEMM epilogue kernels all call it, so a new activation is written there once. CAST
// (and anything else) leaves v: the store rounds. p: POW's exponent (its constant, as an f32).
void unary_tile(OpType t, GeluApprox approx, float p, float* v, int64_t n);

// A product's epilogue activation (GEMM_BIAS_ACT, GROUPED_GEMM) over v[0, n) in place, through
// unary_tile: ReLU, the tanh GELU or SiLU, as the ops of those names compute them.
void activate_tile(Act act, float* v, int64_t n);

}  // namespace gexec::cpu
