// Errors that move in step along K. A product's variance takes the errors of its K operand terms
// as independent: sum_k var(a_k) b_k^2. Where a line of op(A) (a row along K; for B a column)
// holds one value with one carried variance all along K, it is almost surely one computation
// repeated (the rows of a product of `ones`, a broadcast), whose one rounding error e is the same
// in every term: the error is e sum_k b_k, of variance var(a) (sum_k b_k)^2. A line of equal
// values that were computed apart has independent errors, so the excess over the independent
// model is added only where it is positive. Both references add this term with the same bits
// (reference.cpp from the engine's sums, reference_sampled.cpp per element).
//
// An operand whose errors may repeat from line to line (`coherent`: a product whose op(A) rows,
// or op(B) columns, are one computation repeated, and what is computed from it) is bounded as if
// its errors along K were perfectly correlated: with e_k of standard deviation s_k <= s_max,
// (sum_k s_k |b_k|)^2 <= sum_k s_k^2 b_k^2 + s_max^2 ((sum_k |b_k|)^2 - sum_k b_k^2), the first
// term being the independent model's. The repeats are real: ones(M, K) x B gives every row of C
// the same sum and the same rounding before the epilogue, and a residual on a grid coarser than
// C's ulp leaves every row's output rounding the same too (graphgen seed 3202 on the H200: a bf16
// C consumed down its columns failed at 1.27x the independent bound).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "parallel.hpp"

namespace gexec::ref {

// Per line: its carried variance where it is one value with one variance all along K, or, for a
// coherent operand, the largest carried variance along it (else 0); sum_k x, sum_k |x| and
// sum_k x^2 in k order.
struct KLines {
  std::vector<double> var, sum, abs, sq;
  bool coherent = false;  // var is a coherent operand's largest: the other side's excess takes sum |x|
};

// at(line, kk) returns {value, carried variance} of element kk of the line.
template <class At>
KLines k_lines(int64_t lines, int64_t k, At at, bool coherent = false) {
  KLines l;
  l.coherent = coherent;
  l.var.assign(size_t(lines), 0.0), l.sum.assign(size_t(lines), 0.0), l.abs.assign(size_t(lines), 0.0);
  l.sq.assign(size_t(lines), 0.0);
  for_chunks(lines, 64, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const std::pair<double, double> first = at(r, 0);
      bool one = k > 1;
      double s = 0, a = 0, q = 0, most = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const std::pair<double, double> x = at(r, kk);
        s += x.first, a += std::fabs(x.first), q += x.first * x.first;
        most = std::max(most, x.second);
        one = one && x.first == first.first && x.second == first.second;
      }
      l.sum[size_t(r)] = s, l.abs[size_t(r)] = a, l.sq[size_t(r)] = q;
      l.var[size_t(r)] = coherent && k > 1 ? most : one && first.second > 0 ? first.second : 0.0;
    }
  }, k);
  return l;
}

// What element (line ia of op(A), line jb of op(B)^T) adds to its variance beyond the independent
// model: a2 (var(a) ((sum b)^2 - sum b^2) + var(b) ((sum a)^2 - sum a^2)), each part where positive;
// against a coherent side's variance, the other side's sum of magnitudes.
inline double in_step_var(double a2, const KLines& a, int64_t ia, const KLines& b, int64_t jb) {
  const auto part = [](double var, double sum, double sq) {
    const double excess = sum * sum - sq;
    return var > 0 && excess > 0 ? var * excess : 0.0;
  };
  const size_t i = size_t(ia), j = size_t(jb);
  return a2 * (part(a.var[i], a.coherent ? b.abs[j] : b.sum[j], b.sq[j]) +
               part(b.var[j], b.coherent ? a.abs[i] : a.sum[i], a.sq[i]));
}

// Whether the lines of a product's operand (op(A)'s rows, or op(B)'s columns, `lines` of them in
// consecutive groups of `per`: a batch's entries) are one line repeated within each group, values
// and carried variances alike: then every line of C along the other side is one computation
// repeated, whose errors repeat with it. at(line, kk) as k_lines's.
template <class At>
bool lines_repeat(int64_t lines, int64_t per, int64_t k, At at) {
  if (per < 2) return false;
  for (int64_t r = 0; r < lines; ++r) {
    const int64_t first = r - r % per;
    if (r == first) continue;
    for (int64_t kk = 0; kk < k; ++kk)
      if (at(r, kk) != at(first, kk)) return false;
  }
  return true;
}

}  // namespace gexec::ref
