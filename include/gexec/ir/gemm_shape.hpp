// The geometry of a MATMUL or GEMM_BIAS_ACT: batch, M, N, K and how each operand is stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gexec/ir/graph.hpp"

namespace gexec {

// C[b] = alpha * op(A[b]) * op(B[b or shared]) (+ beta * R[b]) (+ bias[N]), C is [M, N] per batch entry.
// Element (r, c) of a stored rank-2 matrix with `rows` x `cols` logical shape lives at
// r * cols + c when rowmajor, c * rows + r when colmajor; rank-3 tensors are rowmajor.
struct GemmShape {
  int64_t batch = 1;        // 1 for rank-2 products
  int64_t m = 0, n = 0, k = 0;
  bool b_batched = false;   // B is rank 3 with one matrix per batch entry; else shared
  bool trans_a = false, trans_b = false;
  Layout layout_a = Layout::rowmajor, layout_b = Layout::rowmajor, layout_c = Layout::rowmajor;
  double alpha = 1.0;
  bool has_bias = false;      // GEMM_BIAS_ACT's input 2 is the bias
  bool has_residual = false;  // GEMM_BIAS_ACT's last input R is added, times beta, before the activation
  double beta = 0.0;          // 0 without a residual
};

// Reads the geometry of a MATMUL or GEMM_BIAS_ACT whose shapes check_op accepted.
// Returns nullopt (and writes why to *why, if given) when they do not agree.
std::optional<GemmShape> gemm_shape(const Graph& g, const Op& op, std::string* why = nullptr);

// 2 * batch * m * n * k
inline double gemm_flops(const GemmShape& s) {
  return 2.0 * double(s.batch) * double(s.m) * double(s.n) * double(s.k);
}

}  // namespace gexec
