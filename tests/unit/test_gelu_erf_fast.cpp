// The CUDA kernels' erf GELU for f16 and bf16 results (activations.cuh, gelu_erf_fast), compiled
// here for the host from the same source text, against the exact GELU in double over every f16
// and bf16 value and a million f32: its error before rounding must stay under a quarter of the
// result's ulp in f16 and bf16 (2^-13 of the result), the margin the check's rounding allowance
// leaves (verify/bound.hpp, kOutputUlps). On the device the reciprocal and exp2 each add an error
// of a few 2^-24, far inside the margin this test asserts (2^-15.5, against 2^-13).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "catch.hpp"
#include "gexec/ir/rounding.hpp"

// The header is written for nvcc and NVRTC, which give its functions these qualifiers and the
// fast-division intrinsic; on the host they become plain functions and an exact division.
#define __device__
#define __forceinline__ inline
#define __fdividef(a, b) ((a) / (b))
#define __expf(x) std::exp(x)
#include "../../src/backends/cuda/activations.cuh"
#undef __device__
#undef __forceinline__
#undef __fdividef
#undef __expf

namespace {

double gelu_exact(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

// The worst error relative to the exact result, over results above f32's normal range floor
// (below it the result is a subnormal of bf16 at most, and the absolute error is asserted).
struct Worst {
  double rel = 0, abs_per_x = 0;
  float at = 0;
  void add(float x) {
    if (!std::isfinite(x) || x == 0) return;
    const double got = gexec::cuda::act::gelu_erf_fast(x), ref = gelu_exact(x);
    const double e = std::fabs(got - ref);
    if (std::fabs(ref) > 0x1p-126 && e / std::fabs(ref) > rel) rel = e / std::fabs(ref), at = x;
    abs_per_x = std::max(abs_per_x, e / std::fabs(double(x)));
  }
};

}  // namespace

TEST_CASE("the fast erf GELU stays within a quarter ulp of f16 and bf16 results", "[elementwise][gelu]") {
  Worst f16, bf16, f32;
  for (uint32_t h = 0; h < 65536; ++h) {
    f16.add(gexec::f16_to_float(uint16_t(h)));
    bf16.add(gexec::bf16_to_float(uint16_t(h)));
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int i = 0; i < 1000000; ++i) f32.add(normal(rng));
  for (const auto* w : {&f16, &bf16, &f32}) {
    INFO("worst relative error 2^" << std::log2(w->rel) << " at x = " << w->at << "; worst |error| / |x| 2^"
                                   << std::log2(w->abs_per_x));
    CHECK(w->rel <= std::exp2(-15.5));
    CHECK(w->abs_per_x <= 0x1p-18);
    CHECK(w->rel > 0);  // the sweep compared something
  }
}

TEST_CASE("the fast erf GELU keeps the exact form's infinities, NaNs and signed zeros", "[elementwise][gelu]") {
  using gexec::cuda::act::gelu_erf_fast;
  CHECK(gelu_erf_fast(INFINITY) == INFINITY);
  CHECK(std::isnan(gelu_erf_fast(-INFINITY)));  // -inf * 0, as 0.5 x (1 + erf(x / sqrt2))
  CHECK(std::isnan(gelu_erf_fast(NAN)));
  CHECK(gelu_erf_fast(0.0f) == 0.0f);
  CHECK(std::signbit(gelu_erf_fast(-0.0f)));
  CHECK(gelu_erf_fast(1e30f) == 1e30f);
  CHECK(gelu_erf_fast(-1e30f) == 0.0f);  // the exact result, -1e30 Phi(-1e30), is far below any f32
  // The same values as the exact form where the function is 0 and where it is x.
  CHECK(gelu_erf_fast(-20.0f) == gexec::cuda::act::gelu_erf(-20.0f));
}
