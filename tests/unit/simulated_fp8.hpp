// A model of Hopper's FP8 tensor-core accumulation without fast accumulation, for the tests of
// the check's block model: each block of K terms summed in a 14-bit accumulator (round to
// nearest; the H200 fits about 14.6 bits), the blocks' sums added in f32.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gexec::test {

// sum over k < count of term(k), blocked as above.
template <class Term>
float blocked_fp8_sum(int64_t count, int64_t block, const Term& term) {
  auto round14 = [](double x) {
    int e = 0;
    const double f = std::frexp(x, &e);
    return std::ldexp(std::nearbyint(std::ldexp(f, 14)), e - 14);
  };
  float total = 0;
  for (int64_t k0 = 0; k0 < count; k0 += block) {
    double acc = 0;
    for (int64_t k = k0; k < std::min(count, k0 + block); ++k) acc = round14(acc + term(k));
    total = float(total + float(acc));
  }
  return total;
}

}  // namespace gexec::test
