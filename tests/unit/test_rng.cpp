// The input generator: its arithmetic (det_log, one-step rounding), its statistics, and the
// determinism that lets the device draw the very same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/ir/dtype.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/rng/init_value.hpp"

using namespace gexec;

namespace {

// A small deterministic stream of 64-bit values for the tests' own sampling (splitmix64).
struct Mix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

bool is_nan16(uint16_t h, int mant_bits) {
  const uint16_t exp_mask = mant_bits == 10 ? 0x7C00u : 0x7F80u;
  const uint16_t mant_mask = uint16_t(~exp_mask & 0x7FFFu);
  return (h & exp_mask) == exp_mask && (h & mant_mask) != 0;
}

Tensor make_tensor(std::string name, std::vector<int64_t> shape, DType dt, std::optional<Init> init) {
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dt;
  t.init = std::move(init);
  return t;
}

}  // namespace

TEST_CASE("det_log matches std::log to 1e-14 relative", "[rng]") {
  Mix64 r{42};
  int checked = 0, bad = 0;
  double first_bad = 1.0;  // det_log needs x > 0, even for the message
  auto check = [&](double x) {
    const double want = std::log(x), got = rng::det_log(x);
    if (!(std::fabs(got - want) <= 1e-14 * std::fabs(want))) {
      if (bad++ == 0) first_bad = x;
    }
    ++checked;
  };
  for (int i = 0; i < 100000; ++i) check(rng::unit_open(uint32_t(r.next()), uint32_t(r.next())));  // (0, 1)
  for (int i = 0; i < 20000; ++i) check(std::exp(-690.0 + 1380.0 * double(r.next() >> 11) * 0x1p-53));
  for (double x : {1.0, 0.5, 2.0, 1.4142135623730951, 0.7071067811865476, 1.0 + 1e-12, 1.0 - 1e-12,
                   1e-300, 1e300, 0x1p-53, 1.0 - 0x1p-53})
    check(x);
  INFO("first x beyond the bound: " << first_bad << " (det_log " << rng::det_log(first_bad) << ", std::log "
                                    << std::log(first_bad) << ")");
  REQUIRE(bad == 0);
  REQUIRE(rng::det_log(1.0) == 0.0);
  REQUIRE(checked > 120000);
}

TEST_CASE("rounding a float-exact double agrees with the RNE float conversions", "[rng]") {
  Mix64 r{7};
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e6f,
                               std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::denorm_min(), 0x1p-24f, 0x1p-25f, 0x1.8p-25f,
                               0x1p-26f, 0x1p-14f, 0x1.ff8p-15f, 6e-8f, 3.3961776e38f, 3.3895314e38f};
  // Ties between neighbouring f16 and bf16 values, normal and subnormal, both parities.
  for (float base : {1.0f, 1.0009765625f, 1024.0f, 0x1p-14f, 0x1p-20f, 0x1.004p-20f, 3.0f, 0x1p-126f})
    for (float sgn : {1.0f, -1.0f}) {
      values.push_back(sgn * (base + std::ldexp(base >= 0x1p-14f ? 1.0f : 0.0f, std::ilogb(base) - 11)));
      values.push_back(sgn * (base + std::ldexp(1.0f, std::ilogb(base) - 8)));
      values.push_back(sgn * (base + std::ldexp(1.0f, -25)));
    }
  for (int i = 0; i < 200000; ++i) {  // random bit patterns cover every exponent
    float f = f32_from_bits(uint32_t(r.next()));
    if (!std::isnan(f)) values.push_back(f);
  }
  for (int i = 0; i < 100000; ++i)  // values near the f16 range, where the rounding branches are
    values.push_back(float(std::ldexp(double(r.next() >> 40) * 0x1p-24 - 0.5, int(r.next() % 48) - 30)));
  int bad = 0;
  float first_bad = 0;
  for (float f : values) {
    const bool same = round_to_f16_bits(double(f)) == float_to_f16(f) &&
                      round_to_bf16_bits(double(f)) == float_to_bf16(f) &&
                      bits_from_f32(round_to_f32(double(f))) == bits_from_f32(f);
    if (!same && bad++ == 0) first_bad = f;
  }
  INFO(bad << " of " << values.size() << " differ; the first is " << first_bad << " (bits 0x" << std::hex
           << bits_from_f32(first_bad) << ")");
  REQUIRE(bad == 0);
  REQUIRE(values.size() > 290000);  // random NaN patterns are left out
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(is_nan16(round_to_f16_bits(nan), 10));
  REQUIRE(is_nan16(round_to_bf16_bits(nan), 7));
}

TEST_CASE("rounding a double to f16 and bf16 is one rounding, not two", "[rng]") {
  // Just above a tie: rounding to float first would land on the tie and round to even (down).
  REQUIRE(round_to_f16_bits(1.0 + 0x1p-11 + 0x1p-40) == 0x3C01u);
  REQUIRE(round_to_f16_bits(-(1.0 + 0x1p-11 + 0x1p-40)) == 0xBC01u);
  REQUIRE(round_to_f16_bits(1.0 + 0x1p-11) == 0x3C00u);               // the tie itself: to even
  REQUIRE(round_to_f16_bits(1.0 + 3 * 0x1p-11) == 0x3C02u);           // tie, odd below: up
  REQUIRE(round_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40) == 0x3F81u);
  REQUIRE(round_to_bf16_bits(1.0 + 0x1p-8) == 0x3F80u);
  REQUIRE(round_to_f16_bits(0x1p-25 + 0x1p-50) == 0x0001u);           // above half the least subnormal
  REQUIRE(round_to_f16_bits(0x1p-25) == 0x0000u);                      // half of it: to even, zero
  REQUIRE(round_to_f16_bits(65519.999999) == 0x7BFFu);
  REQUIRE(round_to_f16_bits(65520.0) == 0x7C00u);
  REQUIRE(round_to_f16_bits(-1e10) == 0xFC00u);
  REQUIRE(round_to_bf16_bits(1e39) == 0x7F80u);
  REQUIRE(round_to_bf16_bits(-1e39) == 0xFF80u);
  // Many random doubles: the result equals the nearer of the two neighbours in the format.
  Mix64 r{99};
  int bad = 0;
  double first_bad = 0;
  for (int i = 0; i < 100000; ++i) {
    const double v = std::ldexp(double(r.next() >> 11) * 0x1p-53 * 2.0 - 1.0, int(r.next() % 30) - 20);
    if (v == 0.0) continue;
    const float h = f16_to_float(round_to_f16_bits(v));
    const float b = bf16_to_float(round_to_bf16_bits(v));
    const double ulp16 = std::ldexp(1.0, std::max(std::ilogb(v), -14) - 10);
    const double ulp_bf = std::ldexp(1.0, std::ilogb(v) - 7);
    if (!(std::fabs(double(h) - v) <= 0.5 * ulp16 && std::fabs(double(b) - v) <= 0.5 * ulp_bf) && bad++ == 0)
      first_bad = v;
  }
  INFO("first value rounded to a farther neighbour: " << first_bad);
  REQUIRE(bad == 0);
}

TEST_CASE("normal and uniform samples have the requested distribution", "[rng]") {
  const int n = 100000;
  for (uint64_t key : {uint64_t(1), rng::tensor_key(0, "A"), rng::tensor_key(12345, "weights.0")}) {
    double sum = 0, sum2 = 0;
    int beyond3 = 0;
    for (int i = 0; i < n; ++i) {
      const double x = rng::normal(key, uint64_t(i));
      REQUIRE(std::isfinite(x));
      sum += x;
      sum2 += x * x;
      beyond3 += std::fabs(x) > 3.0;
    }
    const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
    INFO("key " << key << " mean " << mean << " std " << sd);
    REQUIRE(std::fabs(mean) < 0.02);
    REQUIRE(std::fabs(sd - 1.0) < 0.02);
    REQUIRE(beyond3 > 150);  // expected 270 (0.27%): the tails are there
    REQUIRE(beyond3 < 400);

    double usum = 0, umin = 1e300, umax = -1e300;
    for (int i = 0; i < n; ++i) {
      const double u = rng::uniform(key, uint64_t(i), -3.0, 5.0);
      REQUIRE(u >= -3.0);
      REQUIRE(u < 5.0);
      usum += u;
      umin = std::min(umin, u);
      umax = std::max(umax, u);
    }
    REQUIRE(std::fabs(usum / n - 1.0) < 0.05);
    REQUIRE(umin < -2.99);
    REQUIRE(umax > 4.99);
  }
  rng::DrawParams p;
  p.dist = rng::Dist::normal;
  p.a = 10.0;
  p.b = 0.5;
  p.key = 77;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += rng::draw(p, uint64_t(i));
  REQUIRE(std::fabs(sum / n - 10.0) < 0.01);
}

TEST_CASE("draws depend only on (seed, name, index)", "[rng]") {
  REQUIRE(rng::tensor_key(1, "A") == rng::tensor_key(1, "A"));
  REQUIRE(rng::tensor_key(1, "A") != rng::tensor_key(2, "A"));
  REQUIRE(rng::tensor_key(1, "A") != rng::tensor_key(1, "B"));
  REQUIRE(rng::tensor_key(0, "AB") != rng::tensor_key(0, "BA"));
  const uint64_t k1 = rng::tensor_key(5, "X"), k2 = rng::tensor_key(5, "Y"), k3 = rng::tensor_key(6, "X");
  int same_name = 0, same_seed = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    const double a = rng::normal(k1, i);
    const double again = rng::normal(k1, i);
    REQUIRE(std::memcmp(&a, &again, sizeof a) == 0);
    same_name += rng::normal(k2, i) == a;
    same_seed += rng::normal(k3, i) == a;
    REQUIRE(rng::uniform(k1, i, 0.0, 1.0) == rng::uniform(k1, i, 0.0, 1.0));
  }
  REQUIRE(same_name == 0);
  REQUIRE(same_seed == 0);
  // Indices beyond 2^32 use the counter's second word: they differ from the low ones.
  REQUIRE(rng::normal(k1, 3) != rng::normal(k1, 3 + (uint64_t(1) << 32)));
}

TEST_CASE("generate_input stores each drawn value rounded once to the dtype", "[rng]") {
  Init normal;
  normal.mean = 0.5;
  normal.std = 2.0;
  Init uniform;
  uniform.kind = InitKind::uniform;
  uniform.low = -0.25;
  uniform.high = 4.0;
  for (DType dt : {DType::f16, DType::bf16, DType::f32})
    for (const Init& init : {normal, uniform}) {
      const Tensor t = make_tensor("W", {37, 29}, dt, init);
      const std::vector<uint8_t> bytes = generate_input(t, 2024);
      REQUIRE(bytes.size() == size_t(37 * 29 * dtype_size(dt)));
      const rng::DrawParams p = draw_params(init, 2024, t);
      std::vector<uint8_t> want(bytes.size());
      for (int64_t i = 0; i < t.numel(); ++i) store_rounded(want.data(), dt, i, rng::draw(p, uint64_t(i)));
      REQUIRE(bytes == want);
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double v = load_as_float(bytes.data(), dt, i);
        if (init.kind == InitKind::uniform) {
          REQUIRE(v >= -0.25);
          REQUIRE(v <= 4.0);  // rounding to the dtype may reach the upper bound
        }
      }
    }
  // Constants and explicit values.
  Init zeros;
  zeros.kind = InitKind::zeros;
  Init ones;
  ones.kind = InitKind::ones;
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    const auto z = generate_input(make_tensor("Z", {5}, dt, zeros), 3);
    const auto o = generate_input(make_tensor("O", {5}, dt, ones), 3);
    for (int64_t i = 0; i < 5; ++i) {
      REQUIRE(load_as_float(z.data(), dt, i) == 0.0f);
      REQUIRE(load_as_float(o.data(), dt, i) == 1.0f);
    }
  }
  Init values;
  values.kind = InitKind::values;
  values.values = {0.1, -2.5, 1.0 + 0x1p-11 + 0x1p-40, 70000.0};
  const auto v16 = generate_input(make_tensor("V", {2, 2}, DType::f16, values), 0);
  const auto* h = reinterpret_cast<const uint16_t*>(v16.data());
  REQUIRE(h[0] == round_to_f16_bits(0.1));
  REQUIRE(h[1] == float_to_f16(-2.5f));
  REQUIRE(h[2] == 0x3C01u);
  REQUIRE(h[3] == 0x7C00u);
}

TEST_CASE("generate_input depends on the name, not on the tensor's position or other tensors", "[rng]") {
  REQUIRE(is_drawn(Init{}));
  Init values;
  values.kind = InitKind::values;
  REQUIRE_FALSE(is_drawn(values));
  // An input without init is normal(0, 1).
  const Tensor bare = make_tensor("bare", {100}, DType::f32, std::nullopt);
  REQUIRE(effective_init(bare).kind == InitKind::normal);
  REQUIRE(generate_input(bare, 9) == generate_input(make_tensor("bare", {100}, DType::f32, Init{}), 9));

  Graph g1, g2;
  for (const char* name : {"A", "B", "C"}) g1.add_tensor(make_tensor(name, {64, 48}, DType::f16, Init{}));
  for (const char* name : {"C", "A", "B"}) g2.add_tensor(make_tensor(name, {64, 48}, DType::f16, Init{}));
  for (const char* name : {"A", "B", "C"})
    REQUIRE(generate_input(g1.tensor(g1.find_tensor(name)), 11) == generate_input(g2.tensor(g2.find_tensor(name)), 11));
  REQUIRE(generate_input(g1.tensors[0], 11) != generate_input(g1.tensors[1], 11));
  REQUIRE(generate_input(g1.tensors[0], 11) != generate_input(g1.tensors[0], 12));

  // Large tensors are filled by several threads: the split must not change any bit.
  const Tensor big = make_tensor("big", {1 << 20}, DType::bf16, Init{});
  const auto bytes = generate_input(big, 5);
  const rng::DrawParams p = draw_params(Init{}, 5, big);
  Mix64 r{3};
  for (int i = 0; i < 2000; ++i) {
    const int64_t idx = int64_t(r.next() % (1u << 20));
    uint16_t got;
    std::memcpy(&got, bytes.data() + 2 * idx, 2);
    REQUIRE(got == round_to_bf16_bits(rng::draw(p, uint64_t(idx))));
  }
}

TEST_CASE("a uniform range wider than a double holds draws finite values of both signs", "[rng]") {
  int positive = 0, negative = 0;
  for (uint64_t i = 0; i < 256; ++i) {
    const double v = rng::uniform(7, i, -1e308, 1e308);
    REQUIRE(std::isfinite(v));
    positive += v > 0, negative += v < 0;
  }
  CHECK(positive > 64);
  CHECK(negative > 64);
  CHECK(rng::uniform(7, 3, -1.0, 3.0) == std::fma(rng::uniform(7, 3, 0.0, 1.0), 4.0, -1.0));  // as before otherwise
}
