// The float64 reference engine's kernels: operands widened to double, and the squares and
// magnitudes the reference's sums need beside them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "f8_convert.hpp"
#include "gexec/status.hpp"

namespace gexec::cuda {

// For the n logical elements of a stored tensor (its bytes, dtype, layout and f8 scales):
// x = the real value in double, ax = |x|, sq = x * x, each where not null; the same bits as the
// host's load_real.
Status launch_widen(const F8Side& src, int64_t n, double* x, double* ax, double* sq, cudaStream_t stream);

// From values already in double: ax = |x|, sq = x * x, p = x * x + c (c null: x * x), each where
// not null; rounded as the host computes them (no fused multiply-add).
Status launch_derive(const double* x, const double* c, int64_t n, double* ax, double* sq, double* p,
                     cudaStream_t stream);

// total = part * part (first) or total + part * part, element by element, unfused.
Status launch_square_add(const double* part, double* total, int64_t n, bool first, cudaStream_t stream);

}  // namespace gexec::cuda
