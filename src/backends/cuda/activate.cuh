// An epilogue's activation chosen at run time (Act, from the op's attributes), for one value or a
// thread's accumulators, for the CUDA kernels compiled by nvcc: the skinny GEMM's and the grouped
// GEMM's epilogues. Kept apart from activations.cuh, which NVRTC receives too and so includes
// nothing (Act is gexec's type).
//
// `fast`: the result is rounded to f16 or bf16 right after, so the GELU and SiLU take the fast
// exp and division (activations.cuh's _fast forms, about 2^-21 relative error, far below those
// types' rounding). The IEEE division of the exact forms branches to a slow path for a divisor
// that exp overflowed to infinity (any x below about -10), which a warp of GEMM outputs nearly
// always holds: with it, the tanh GELU in the grouped GEMM's WGMMA epilogue took 4096 x 16384 x
// 4096 f16 from 822 to 1190 us on an H100 (ncu: 62 instructions an element, a fifth of the
// samples in the slow path). f32 results keep the exact forms.
#pragma once

#include "activations.cuh"
#include "gexec/ir/op.hpp"

namespace gexec::cuda {
namespace {  // internal linkage: each file has its own copy

__device__ __forceinline__ float activate(Act a, float v, bool fast = false) {
  switch (a) {
    case Act::relu: return act::relu(v);
    case Act::gelu: return fast ? act::gelu_tanh_fast(v) : act::gelu_tanh(v);
    case Act::gelu_erf: return fast ? act::gelu_erf_fast(v) : act::gelu_erf(v);
    case Act::silu: return fast ? act::silu_fast(v) : act::silu(v);
    default: return v;
  }
}

// The activation over a thread's accumulators, the switch outside the unrolled loop (so that the
// accumulators stay in registers): the WGMMA epilogues of the skinny and grouped GEMMs.
template <Act A, bool Fast, int N>
__device__ __forceinline__ void activate_each(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) d[i] = activate(A, d[i], Fast);
}
template <int N>
__device__ __forceinline__ void activate_all(Act a, bool fast, float (&d)[N]) {
  switch (a) {
    case Act::relu: activate_each<Act::relu, false>(d); break;
    case Act::gelu: fast ? activate_each<Act::gelu, true>(d) : activate_each<Act::gelu, false>(d); break;
    case Act::gelu_erf: fast ? activate_each<Act::gelu_erf, true>(d) : activate_each<Act::gelu_erf, false>(d); break;
    case Act::silu: fast ? activate_each<Act::silu, true>(d) : activate_each<Act::silu, false>(d); break;
    default: break;
  }
}

}  // namespace
}  // namespace gexec::cuda
