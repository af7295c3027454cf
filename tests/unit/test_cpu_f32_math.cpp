// The CPU backend's f32 exp, tanh and erf (src/backends/cpu/f32_math.hpp) against libm's double
// functions over a sweep of all f32 values: their error stays within what the check allows the
// CPU kernels (verify/bound.hpp: 8 unit roundoffs of TANH and ERF, 4 ulps of |x| for GELU).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "catch.hpp"
#include "../../src/backends/cpu/cpu_math.hpp"
#include "../../src/backends/cpu/f32_math.hpp"

namespace {

using namespace gexec::cpu;

// The f32 ulp at |ref|, subnormals included.
double ulp_at(double ref) {
  int e = 0;
  std::frexp(std::fabs(ref), &e);
  return std::ldexp(1.0, std::max(e - 24, -149));
}

// |got - ref| in ulps of ref; an infinite or NaN ref (as the f32 it rounds to) must be matched.
double ulps(float got, double ref) {
  const float r = float(ref);
  if (std::isnan(r)) return std::isnan(got) ? 0 : 1e30;
  if (std::isinf(r)) return got == r ? 0 : 1e30;
  return std::fabs(double(got) - ref) / ulp_at(ref);
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

struct Worst {
  double ulps = 0;
  float at = 0;
  void see(double u, float x) {
    if (u > ulps) ulps = u, at = x;
  }
};

}  // namespace

TEST_CASE("cpu f32 math: exp, tanh, erf and GELU within their bounds over a sweep of every f32", "[cpu][f32-math]") {
  Worst e, t, r, g_erf, g_tanh;
  // Every 61st bit pattern: 70 million values, both signs, every exponent, NaNs and infinities.
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 61) {
    const float x = from_bits(uint32_t(b));
    const double xd = x;
    e.see(ulps(f32::exp(x), std::exp(xd)), x);
    t.see(ulps(f32::tanh(x), std::tanh(xd)), x);
    r.see(ulps(f32::erf(x), std::erf(xd)), x);
    if (std::isfinite(x) && std::fabs(x) < 1e30f) {  // GELU: in units of 2^-24 |x| (bound.hpp)
      const double unit = 0x1p-24 * std::fabs(xd) + 1e-45;
      g_erf.see(std::fabs(gelu_erf(x) - 0.5 * xd * std::erfc(-xd / std::sqrt(2.0))) / unit, x);
      const double u = std::sqrt(2.0 / M_PI) * (xd + 0.044715 * xd * xd * xd);
      g_tanh.see(std::fabs(gelu_tanh(x) - 0.5 * xd * (1.0 + std::tanh(u))) / unit, x);
    }
  }
  INFO("exp " << e.ulps << " ulps at " << e.at << "; tanh " << t.ulps << " at " << t.at << "; erf " << r.ulps
              << " at " << r.at << "; GELU erf " << g_erf.ulps << " at " << g_erf.at << ", tanh " << g_tanh.ulps
              << " at " << g_tanh.at);
  CHECK(e.ulps <= 1.5);
  CHECK(t.ulps <= 2.0);
  CHECK(r.ulps <= 2.5);
  CHECK(g_erf.ulps <= 4.0);
  CHECK(g_tanh.ulps <= 4.0);
}

// unary_tile runs a clone built for the CPU (AVX-512, AVX2 or the SSE2 baseline, cpu_unary.cpp);
// the functions above, inlined here, are the baseline's. Every clone must give their bits, so
// that the sweep above holds for the clone that runs.
TEST_CASE("cpu f32 math: the vectorized activation loops give the scalar functions' bits", "[cpu][f32-math]") {
#if defined(__x86_64__) && defined(__GNUC__)
  INFO("this CPU runs the " << (__builtin_cpu_supports("avx512f") ? "avx512f" : __builtin_cpu_supports("avx2") ? "avx2" : "default")
                            << " clone");
#endif
  using gexec::GeluApprox;
  using gexec::OpType;
  struct Case {
    OpType type;
    GeluApprox approx;
    float (*f)(float);
  };
  const Case cases[] = {{OpType::SIGMOID, GeluApprox::none, sigmoid},  {OpType::TANH, GeluApprox::none, f32::tanh},
                        {OpType::ERF, GeluApprox::none, f32::erf},     {OpType::GELU, GeluApprox::none, gelu_erf},
                        {OpType::GELU, GeluApprox::tanh, gelu_tanh}, {OpType::SILU, GeluApprox::none, silu}};
  constexpr int kTile = 256;
  float x[kTile], v[kTile];
  int64_t differ = 0, seen = 0;
  float first = 0;
  for (const Case& c : cases) {
    // Every 4093rd bit pattern (a prime: the tiles' lanes meet every kind of value).
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += uint64_t(kTile) * 4093) {
      for (int j = 0; j < kTile; ++j) x[j] = v[j] = from_bits(uint32_t(b + uint64_t(j) * 4093));
      unary_tile(c.type, c.approx, 0, v, kTile);
      for (int j = 0; j < kTile; ++j, ++seen) {
        const float want = c.f(x[j]);
        const bool same = std::memcmp(&want, &v[j], sizeof want) == 0 || (std::isnan(want) && std::isnan(v[j]));
        if (!same && differ++ == 0) first = x[j];
      }
    }
  }
  INFO(differ << " of " << seen << " results differ, the first at x = " << first);
  CHECK(seen > 6000000);
  CHECK(differ == 0);
}

TEST_CASE("cpu f32 math: special values and the ends of the range", "[cpu][f32-math]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(f32::exp(0.0f) == 1.0f);
  CHECK(f32::exp(inf) == inf);
  CHECK(f32::exp(-inf) == 0.0f);
  CHECK(std::isnan(f32::exp(nan)));
  CHECK(f32::exp(88.7f) < inf);
  CHECK(f32::exp(88.73f) == inf);
  CHECK(f32::exp(-87.5f) > 0.0f);  // below the normal range: a subnormal, not 0
  CHECK(ulps(f32::exp(-100.0f), std::exp(-100.0)) <= 1.0);
  CHECK(f32::exp(-104.0f) == 0.0f);
  CHECK(f32::tanh(0.0f) == 0.0f);
  CHECK(std::signbit(f32::tanh(-0.0f)));
  CHECK(f32::tanh(1e-30f) == 1e-30f);  // tiny x: tanh(x) = x, not 0
  CHECK(f32::tanh(inf) == 1.0f);
  CHECK(f32::tanh(-inf) == -1.0f);
  CHECK(f32::tanh(20.0f) == 1.0f);
  CHECK(std::isnan(f32::tanh(nan)));
  CHECK(f32::erf(1e-30f) > 0.0f);
  CHECK(ulps(f32::erf(1e-30f), std::erf(1e-30)) <= 1.0);
  CHECK(f32::erf(inf) == 1.0f);
  CHECK(f32::erf(-inf) == -1.0f);
  CHECK(std::isnan(f32::erf(nan)));
  CHECK(std::isnan(f32::one_plus_erf(nan)));
  CHECK(f32::one_plus_erf(-inf) == 0.0f);
  // The GELU's negative tail keeps its relative accuracy where 1 + erf would cancel.
  CHECK(std::fabs(f32::one_plus_erf(-3.0f) / std::erfc(3.0) - 1.0) < 1e-6);
  CHECK(std::isnan(gelu_tanh(-inf)));  // -inf * 0, as the reference's 0.5 x (1 + tanh(u))
  // Where tanh rounds to -1 the GELU is 0, as the reference's (a block of such values is all zero).
  CHECK(gelu_tanh(-30.0f) == 0.0f);
  CHECK(gelu_erf(-30.0f) == 0.0f);
  CHECK(gelu_tanh(inf) == inf);
  CHECK(std::isnan(gelu_erf(nan)));
}
