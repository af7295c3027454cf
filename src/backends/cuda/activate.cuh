// An epilogue's activation chosen at run time (Act, from the op's attributes), for one value or a
// thread's accumulators, for the CUDA kernels compiled by nvcc: the skinny GEMM's and the grouped
// GEMM's epilogues. Kept apart from activations.cuh, which NVRTC receives too and so includes
// nothing (Act is gexec's type).
#pragma once

#include "activations.cuh"
#include "gexec/ir/op.hpp"

namespace gexec::cuda {
namespace {  // internal linkage: each file has its own copy

__device__ __forceinline__ float activate(Act a, float v) {
  switch (a) {
    case Act::relu: return act::relu(v);
    case Act::gelu: return act::gelu_tanh(v);
    case Act::silu: return act::silu(v);
    default: return v;
  }
}

// The activation over a thread's accumulators, the switch outside the unrolled loop (so that the
// accumulators stay in registers): the WGMMA epilogues of the skinny and grouped GEMMs.
template <Act A, int N>
__device__ __forceinline__ void activate_each(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) d[i] = activate(A, d[i]);
}
template <int N>
__device__ __forceinline__ void activate_all(Act a, float (&d)[N]) {
  switch (a) {
    case Act::relu: activate_each<Act::relu>(d); break;
    case Act::gelu: activate_each<Act::gelu>(d); break;
    case Act::silu: activate_each<Act::silu>(d); break;
    default: break;
  }
}

}  // namespace
}  // namespace gexec::cuda
