// The CPU backend's kernels, built by the device from a KernelDef, and its thread helper.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "gexec/exec/device.hpp"
#include "thread_pool.hpp"

namespace gexec::cpu {

// MATMUL and GEMM_BIAS_ACT through cblas_sgemm.
Result<std::unique_ptr<Kernel>> make_gemm_kernel(const Graph& g, const Op& op, const Binding& binding);
// BIAS_ADD, ADD, MUL, RELU, GELU, SILU, CAST.
Result<std::unique_ptr<Kernel>> make_elementwise_kernel(const Graph& g, const Op& op, const Binding& binding);

// CAST to or from f8 (cpu_f8.cpp): quantize, dequantize, requantize, with the amax output.
Result<std::unique_ptr<Kernel>> make_f8_cast_kernel(const Graph& g, const Op& op, const Binding& binding);

// Stores n f32 values (storage order) into the f8 tensor t at dst with its scale, and where
// `amax` is given writes max |value| there (NaNs left out).
void quantize_output(const float* src, int64_t n, const Tensor& t, void* dst, float* amax);


// GROUPED_GEMM (cpu_grouped.cpp).
Result<std::unique_ptr<Kernel>> make_grouped_kernel(const Graph& g, const Op& op, const Binding& binding);

// ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER through the device's HostCommunicator (cpu_collective.cpp).
Result<std::unique_ptr<Kernel>> make_collective_kernel(const Graph& g, const Op& op, const Binding& binding,
                                                       Communicator* comm, int rank);

// FUSED_ELEMENTWISE (cpu_fused.cpp).
Result<std::unique_ptr<Kernel>> make_fused_kernel(const Graph& g, const Op& op, const Binding& binding);

// Calls f(begin, end) over [0, n) split in one contiguous range per thread of the backend's pool
// (thread_pool.hpp), or once on this thread when n is too small for the threads to pay for
// themselves.
template <class F>
void parallel_for(int64_t n, int64_t min_per_thread, F&& f) {
  const int64_t threads = std::clamp<int64_t>(n / std::max<int64_t>(min_per_thread, 1), 1, pool_threads());
  if (threads <= 1) {
    if (n > 0) f(int64_t(0), n);
    return;
  }
  run_pieces(threads, [&f, n, threads](int64_t t) { f(n * t / threads, n * (t + 1) / threads); });
}

}  // namespace gexec::cpu
