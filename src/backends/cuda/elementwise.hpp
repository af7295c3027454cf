// The CUDA elementwise kernels (BIAS_ADD, ADD, MUL, RELU, GELU, SILU, CAST), the conversion and bias+activation
// launchers that the GEMM path uses, and the device-side drawing of graph inputs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "gexec/exec/device.hpp"
#include "gexec/rng/init_value.hpp"

namespace gexec::cuda {

// Makes the kernel for an elementwise op (BIAS_ADD, ADD, MUL, RELU, GELU, SILU, CAST), the one def.op names.
Result<std::unique_ptr<Kernel>> make_elementwise_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                        const Binding& b, cudaStream_t stream);

// out[i] = in[i] converted to out_t (round to nearest even), n elements, on stream.
Status launch_convert(const void* in, DType in_t, void* out, DType out_t, int64_t n, cudaStream_t stream);

// In place on C (logical [rows, cols] per batch entry, stored per c_layout; rank-3 is rowmajor):
// C = act(C + bias[col]); bias may be null; act none/relu/gelu (tanh form). Used after a plain
// GEMM when cuBLASLt's epilogue cannot be used.
Status launch_bias_act(void* c, DType c_t, int64_t batch, int64_t rows, int64_t cols, Layout c_layout,
                       const void* bias, DType bias_t, Act act, cudaStream_t stream);

// Draws a graph input on the device, bit-identical to generate_input() (include/gexec/rng/init.hpp).
Status launch_fill_random(void* dst, DType t, int64_t n, const rng::DrawParams& p, cudaStream_t stream);

}  // namespace gexec::cuda
