// Errors that move in step along K. A product's variance takes the errors of its K operand terms
// as independent: sum_k var(a_k) b_k^2. Where a line of op(A) (a row along K; for B a column)
// holds one value with one carried variance all along K, it is almost surely one computation
// repeated (the rows of a product of `ones`, a broadcast), whose one rounding error e is the same
// in every term: the error is e sum_k b_k, of variance var(a) (sum_k b_k)^2. A line of equal
// values that were computed apart has independent errors, so the excess over the independent
// model is added only where it is positive. Both references add this term with the same bits
// (reference.cpp from the engine's sums, reference_sampled.cpp per element).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "parallel.hpp"

namespace gexec::ref {

// Per line: its carried variance where it is one value with one variance all along K (else 0),
// and sum_k x, sum_k x^2 in k order.
struct KLines {
  std::vector<double> var, sum, sq;
};

// at(line, kk) returns {value, carried variance} of element kk of the line.
template <class At>
KLines k_lines(int64_t lines, int64_t k, At at) {
  KLines l;
  l.var.assign(size_t(lines), 0.0), l.sum.assign(size_t(lines), 0.0), l.sq.assign(size_t(lines), 0.0);
  for_chunks(lines, 64, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const std::pair<double, double> first = at(r, 0);
      bool one = k > 1;
      double s = 0, q = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const std::pair<double, double> x = at(r, kk);
        s += x.first, q += x.first * x.first;
        one = one && x.first == first.first && x.second == first.second;
      }
      l.sum[size_t(r)] = s, l.sq[size_t(r)] = q;
      l.var[size_t(r)] = one && first.second > 0 ? first.second : 0.0;
    }
  }, k);
  return l;
}

// What element (line ia of op(A), line jb of op(B)^T) adds to its variance beyond the independent
// model: a2 (var(a) ((sum b)^2 - sum b^2) + var(b) ((sum a)^2 - sum a^2)), each part where positive.
inline double in_step_var(double a2, const KLines& a, int64_t ia, const KLines& b, int64_t jb) {
  const auto part = [](double var, double sum, double sq) {
    const double excess = sum * sum - sq;
    return var > 0 && excess > 0 ? var * excess : 0.0;
  };
  return a2 * (part(a.var[size_t(ia)], b.sum[size_t(jb)], b.sq[size_t(jb)]) +
               part(b.var[size_t(jb)], a.sum[size_t(ia)], a.sq[size_t(ia)]));
}

}  // namespace gexec::ref
