// An epilogue's activation chosen at run time (Act, from the op's attributes), for the CUDA
// kernels compiled by nvcc: the skinny GEMM's and the grouped GEMM's epilogues. Kept apart from
// activations.cuh, which NVRTC receives too and so includes nothing (Act is gexec's type).
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

}  // namespace
}  // namespace gexec::cuda
