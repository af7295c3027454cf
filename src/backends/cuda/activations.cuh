// The activations of the CUDA kernels in f32, one formula each. nvcc includes this file
// (elementwise.cu, and fused_kernel.cuh for the group interpreter); NVRTC receives it as the
// named header "activations.cuh" of the kernels generated per group (fused_source.cpp), from the
// copy of its text that the build embeds in the library (cmake/embed_text.cmake), so that an
// installed binary needs no source tree. Hence it includes nothing: expf, tanhf, erff, powf,
// __expf and __fdividef are built into both compilers.
#pragma once

namespace gexec::cuda::act {

__device__ __forceinline__ float relu(float x) { return x < 0.0f ? 0.0f : x; }  // a NaN stays a NaN

// 0.5x(1 + tanh(u)) == x / (1 + exp(-2u)), which does not cancel for negative x.
__device__ __forceinline__ float gelu_tanh(float x) {
  return x / (1.0f + expf(-2.0f * 0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

// The reference's form through erff (within 2 ulps). Where 1 + erf cancels (x below about -5) the
// sum is exact and carries erff's error, at most 2^-23, times |x| / 2: inside the check's
// 4 x 2^-24 |x| (bound.hpp, gelu_eval_var). erfcf(-x / sqrt2), exact in that tail, takes twice
// the instructions: through it the erf GELU of 256 x 16384 f16 ran 13.25 us on the H200, against
// PyTorch's 7.3 us.
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f)); }

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// SIGMOID, TANH, ERF, POW: the libm functions in f32, their error bounds in bound.hpp
// (libm_eval_var); x / y is IEEE division (prec-div, the default of both compilers). The act_
// names keep ::tanh and the like apart in the generated source, which uses this namespace.
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float act_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ float act_erf(float x) { return erff(x); }
// C's pow: a negative x with a non-integer p gives NaN.
__device__ __forceinline__ float act_pow(float x, float p) { return powf(x, p); }

// The same with the fast exp and division intrinsics (about 2^-21 relative error): for steps
// whose result is rounded to f16 or bf16 (11 or 8 bits) right after, where that error vanishes.
// The generated kernels (fused_source.cpp) and the one-input op kernels (elementwise.cu) use them.
__device__ __forceinline__ float gelu_tanh_fast(float x) {
  return __fdividef(x, 1.0f + __expf(-2.0f * 0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float silu_fast(float x) { return __fdividef(x, 1.0f + __expf(-x)); }

// The erf GELU for a result rounded to f16 or bf16: x Phi(x) with Phi from the tail
// q = erfc(|x| / sqrt2) / 2 = t 2^(g(t) - w^2), where w = |x| sqrt(log2(e) / 2) and t = 1 / (1 +
// 0.3122 w), g a degree-6 polynomial fitted (minimax by reweighted least squares against
// double-precision erfc) over |x| <= 14.8; Phi = q below 0 and 1 - q above, so neither side
// cancels. Branch-free, one reciprocal and one exp2: erff takes one of two polynomials per
// element, both where a warp's x straddle |x| = 1, and 1 + erff then loses what erff had below
// 0. Its error against the exact GELU, before rounding, is at most 2^-16.3 of the result
// (tests/unit/test_gelu_erf_fast.cpp sweeps every f16 and bf16 value and a million f32), under a
// quarter of the result's ulp in either type, which the check's rounding margin holds (bound.hpp,
// kOutputUlps). f32 results keep gelu_erf. An infinity and a NaN give what gelu_erf gives.
__device__ __forceinline__ float gelu_erf_fast(float x) {
  const float w = fabsf(x) * 0.8493218f;
  const float t = __fdividef(1.0f, fmaf(0.312207979f, w, 1.0f));
  float g = 0.39813605f;
  g = fmaf(g, t, -1.41058052f);
  g = fmaf(g, t, 1.46230698f);
  g = fmaf(g, t, -0.454116285f);
  g = fmaf(g, t, 0.832468271f);
  g = fmaf(g, t, 1.41061008f);
  g = fmaf(g, t, -3.23882723f);
  const float q = t * exp2f(fmaf(-w, w, g));
  return x * (x < 0.0f ? q : 1.0f - q);
}

}  // namespace gexec::cuda::act
