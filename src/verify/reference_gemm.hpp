// The reference's matrix product in double: dense operands, one element or all of them.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace gexec::ref {

// op(A) and op(B) in their logical orientation, row after row, with the error scale of every
// operand element beside its value (for graph inputs the scale is |value|).
struct DenseProduct {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool b_batched = false;            // one B per batch entry; else B is shared
  double alpha = 1.0;
  std::vector<double> a, a_scale;    // [batch][m][k]
  std::vector<double> b, b_scale;    // [batch or 1][k][n]
};

struct ValueScale {
  double value = 0, scale = 0;
};

// Element (i, j) of batch entry `e`: alpha * sum_k a_ik b_kj, and its scale
// |alpha| * sum_k scale(a_ik) scale(b_kj). Sums run over k in ascending order, as in product_all,
// so both give the same bits; this is what a sampled check of a huge product would call.
ValueScale product_element(const DenseProduct& p, int64_t e, int64_t i, int64_t j);

// For each element, sum over the blocks of `block` consecutive k (the last one shorter) of
// (sum_{k in block} a_scale_ik b_scale_kj)^2, without alpha: the magnitudes of a blocked
// accumulator's partial sums (bound::block_accumulation_var). Laid out as product_all's output.
std::vector<double> block_magnitude_squares(const DenseProduct& p, int64_t block);

// Every element: value and scale as [batch][m][n], rows spread over the machine's threads.
// `progress`, where given, is called from the calling thread every 10 ms or so with the
// fraction done.
void product_all(const DenseProduct& p, std::vector<double>& value, std::vector<double>& scale,
                 const std::function<void(double)>& progress = {});

}  // namespace gexec::ref
