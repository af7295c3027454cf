// The CPU kernels' scalar activations in f32, shared by the single-op and the fused group kernels.
#pragma once

#include <cmath>

namespace gexec::cpu {

// GELU, tanh form: the one formula of the CPU backend (the epilogue, the GELU op, the groups).
inline float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678f)); }
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace gexec::cpu
