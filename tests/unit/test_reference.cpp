// The CPU reference and the output comparison, on small graphs checked by hand.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "graph_builder.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/exact.hpp"
#include "gexec/verify/reference.hpp"
#include "../../src/verify/reference_gemm.hpp"

using namespace gexec;

namespace {

using Inputs = std::map<std::string, std::vector<uint8_t>>;

using test::Builder;

// Stored bytes of a tensor from its values in logical (row-major) order.
std::vector<uint8_t> bytes_of(const Tensor& t, const std::vector<double>& logical) {
  std::vector<uint8_t> b(static_cast<size_t>(t.bytes()));
  for (int64_t l = 0; l < t.numel(); ++l) store_from_float(b.data(), t.dtype, storage_index(t, l), float(logical[l]));
  return b;
}

// The reference's output in logical order (values, or scales with `scales`).
std::vector<double> logical_of(const Tensor& t, const RefTensor& r, bool scales = false) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t l = 0; l < t.numel(); ++l) out[l] = (scales ? r.scale : r.value)[storage_index(t, l)];
  return out;
}

RefTensor reference_of(const Graph& g, const Inputs& in, const std::string& out) {
  auto r = run_reference(g, in);
  REQUIRE(r.ok());
  REQUIRE(r->count(out) == 1);
  return r->at(out);
}

// Deterministic values on a coarse grid (exact in every dtype), mixed signs.
std::vector<double> pattern(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t x = 2463534242u + uint32_t(seed) * 7919u;
  for (auto& e : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    e = (int(x % 17) - 8) * 0.125;
  }
  return v;
}

const std::vector<double> kA = {1, -2, 3, -4, 5, -6};   // [2,3]
const std::vector<double> kB = {7, 8, 9, 10, 11, 12};   // [3,2]
const std::vector<double> kC = {22, 24, -49, -54};       // A * B
const std::vector<double> kCScale = {58, 64, 139, 154};  // |A| * |B|

// Logical transpose of a rows x cols matrix.
std::vector<double> transposed(const std::vector<double>& v, int64_t rows, int64_t cols) {
  std::vector<double> t(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return t;
}

}  // namespace

TEST_CASE("reference: 2x3x2 product by hand, in every storage form", "[reference]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (Layout la : {Layout::rowmajor, Layout::colmajor})
        for (Layout lc : {Layout::rowmajor, Layout::colmajor}) {
          Builder b;
          TensorId a = b.tensor("A", ta ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}, DType::f16, la);
          TensorId bb = b.tensor("B", tb ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2}, DType::bf16);
          TensorId c = b.tensor("C", {2, 2}, DType::f32, lc);
          b.op(OpType::MATMUL, {a, bb}, c).attrs.trans_a = ta;
          b.g.ops.back().attrs.trans_b = tb;
          b.g.outputs = {c};
          Inputs in{{"A", bytes_of(b.g.tensor(a), ta ? transposed(kA, 2, 3) : kA)},
                    {"B", bytes_of(b.g.tensor(bb), tb ? transposed(kB, 3, 2) : kB)}};
          RefTensor r = reference_of(b.g, in, "C");
          CHECK(logical_of(b.g.tensor(c), r) == kC);
          CHECK(logical_of(b.g.tensor(c), r, true) == kCScale);
          if (lc == Layout::colmajor) CHECK(r.value == std::vector<double>{22, -49, 24, -54});
        }
}

TEST_CASE("reference: alpha scales the value and |alpha| the scale", "[reference]") {
  Builder b;
  TensorId a = b.tensor("A", {2, 3}), bb = b.tensor("B", {3, 2}), c = b.tensor("C", {2, 2});
  b.op(OpType::MATMUL, {a, bb}, c).attrs.alpha = -0.5;
  b.g.outputs = {c};
  RefTensor r = reference_of(b.g, {{"A", bytes_of(b.g.tensor(a), kA)}, {"B", bytes_of(b.g.tensor(bb), kB)}}, "C");
  CHECK(r.value == std::vector<double>{-11, -12, 24.5, 27});
  CHECK(r.scale == std::vector<double>{29, 32, 69.5, 77});
}

TEST_CASE("reference: batched products with a batched or a shared B", "[reference]") {
  for (bool shared : {false, true}) {
    Builder b;
    TensorId a = b.tensor("A", {2, 2, 3});
    TensorId bb = shared ? b.tensor("B", {3, 2}) : b.tensor("B", {2, 3, 2});
    TensorId c = b.tensor("C", {2, 2, 2});
    b.op(OpType::MATMUL, {a, bb}, c);
    b.g.outputs = {c};
    // Entry 1 of A is -A; entry 1 of a batched B is 2B.
    std::vector<double> av = kA, bv = kB;
    for (double x : kA) av.push_back(-x);
    if (!shared)
      for (double x : kB) bv.push_back(2 * x);
    RefTensor r = reference_of(b.g, {{"A", bytes_of(b.g.tensor(a), av)}, {"B", bytes_of(b.g.tensor(bb), bv)}}, "C");
    const double f = shared ? -1 : -2;
    CHECK(r.value == std::vector<double>{22, 24, -49, -54, f * 22, f * 24, f * -49, f * -54});
    const double s = shared ? 1 : 2;
    CHECK(r.scale == std::vector<double>{58, 64, 139, 154, s * 58, s * 64, s * 139, s * 154});
  }
}

TEST_CASE("reference: GEMM_BIAS_ACT adds the bias and applies the activation", "[reference]") {
  for (Act act : {Act::none, Act::relu, Act::gelu}) {
    Builder b;
    TensorId a = b.tensor("A", {2, 3}), bb = b.tensor("B", {3, 2}), bias = b.tensor("Bias", {2}, DType::f16);
    TensorId c = b.tensor("C", {2, 2}, DType::f32);
    b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias}, c).attrs.act = act;
    b.g.ops.back().attrs.alpha = 1.0 / 16;
    b.g.outputs = {c};
    // alpha * A * B = {1.375, 1.5, -3.0625, -3.375}; with the bias {-0.375, 2.375}: {1, 3.875, -3.4375, -1}.
    Inputs in{{"A", bytes_of(b.g.tensor(a), kA)}, {"B", bytes_of(b.g.tensor(bb), kB)},
              {"Bias", bytes_of(b.g.tensor(bias), {-0.375, 2.375})}};
    RefTensor r = reference_of(b.g, in, "C");
    const std::vector<double> pre = {1, 3.875, -3.4375, -1};
    const std::vector<double> scale = {58.0 / 16 + 0.375, 64.0 / 16 + 2.375, 139.0 / 16 + 0.375, 154.0 / 16 + 2.375};
    for (int i = 0; i < 4; ++i) {
      if (act == Act::none) CHECK(r.value[i] == pre[i]);
      if (act == Act::relu) CHECK(r.value[i] == std::max(pre[i], 0.0));
      CHECK(r.scale[i] == (act == Act::gelu ? 1.13 * scale[i] : scale[i]));
    }
    if (act == Act::gelu) {
      // gelu_tanh(1) and gelu_tanh(-1) in closed form, rounded to f32.
      CHECK(r.value[0] == double(float(0.8411919906082768)));
      CHECK(r.value[3] == double(float(-0.15880800939172324)));
    }
  }
}

TEST_CASE("reference: unfused chain with elementwise ops, GELU forms, layouts", "[reference]") {
  for (GeluApprox form : {GeluApprox::tanh, GeluApprox::none}) {
    Builder b;
    TensorId x = b.tensor("X", {2, 2}, DType::f32, Layout::colmajor), bias = b.tensor("b", {2});
    TensorId xb = b.tensor("XB", {2, 2}), y = b.tensor("Y", {2, 2}, DType::f32, Layout::colmajor);
    TensorId s = b.tensor("S", {2, 2}), r = b.tensor("R", {2, 2}), ge = b.tensor("G", {2, 2});
    b.op(OpType::BIAS_ADD, {x, bias}, xb);
    b.op(OpType::ADD, {xb, y}, s);
    b.op(OpType::RELU, {s}, r);
    b.op(OpType::GELU, {s}, ge).attrs.approximate = form;
    b.g.outputs = {s, r, ge};
    // X = [[1, -2], [0.5, 3]], b = [0.25, -1], Y = [[-1.25, 1], [-1.5, 0]]:
    // XB = [[1.25, -3], [0.75, 2]], S = [[0, -2], [-0.75, 2]].
    Inputs in{{"X", bytes_of(b.g.tensor(x), {1, -2, 0.5, 3})},
              {"b", bytes_of(b.g.tensor(bias), {0.25, -1})},
              {"Y", bytes_of(b.g.tensor(y), {-1.25, 1, -1.5, 0})}};
    auto out = run_reference(b.g, in);
    REQUIRE(out.ok());
    CHECK(out->at("S").value == std::vector<double>{0, -2, -0.75, 2});
    CHECK(out->at("S").scale == std::vector<double>{2.5, 4, 2.25, 4});  // |x| + |b| + |y|
    CHECK(out->at("R").value == std::vector<double>{0, 0, 0, 2});
    CHECK(out->at("R").scale == out->at("S").scale);  // relu is 1-Lipschitz
    const std::vector<double>& g = out->at("G").value;
    const bool tanh_form = form == GeluApprox::tanh;
    CHECK(g[0] == 0);
    CHECK(g[3] == double(float(tanh_form ? 1.954597694087775 : 1.9544997361036416)));
    CHECK(g[1] == double(float(tanh_form ? -0.045402305912225 : -0.04550026389635842)));
    CHECK(out->at("G").scale[3] == 1.13 * 4);
  }
}

TEST_CASE("reference: CAST rounds to nearest even, once, and keeps the scale above the value", "[reference]") {
  for (DType dt : {DType::f16, DType::bf16}) {
    Builder b;
    TensorId x = b.tensor("X", {4}, DType::f32), y = b.tensor("Y", {4}, dt);
    b.op(OpType::CAST, {x}, y);
    b.g.outputs = {y};
    const double ulp = dt == DType::f16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    // Two ties (to even: down, then up), one value a hair above a tie, one beyond f16's range.
    std::vector<double> xs = {1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + ulp / 64, 70000};
    RefTensor r = reference_of(b.g, {{"X", bytes_of(b.g.tensor(x), xs)}}, "Y");
    CHECK(r.value[0] == 1.0);
    CHECK(r.value[1] == 1 + 2 * ulp);
    CHECK(r.value[2] == 1 + ulp);
    CHECK(r.scale[0] == xs[0]);
    CHECK(r.scale[1] == r.value[1]);  // rounded up past |x|
    if (dt == DType::f16) CHECK(std::isinf(r.value[3]));
    if (dt == DType::bf16) CHECK(r.value[3] == 70144);  // bf16 keeps 8 significant bits
  }
}

TEST_CASE("reference: a RELU into a narrower dtype is a rounding, into the same or f32 none", "[reference]") {
  // 1 + 2^-7 + 2^-8 is an f16 value halfway between two bf16 values: RELU f16 -> bf16 rounds it
  // (to even, up). A kernel that fused the RELU into the product before it rounds the product to
  // bf16 once and may land one bf16 ulp lower: the check must allow that step, as for a CAST.
  const double x = 1 + std::ldexp(1.0, -7) + std::ldexp(1.0, -8);
  for (DType out : {DType::bf16, DType::f16, DType::f32}) {
    Builder b;
    TensorId in = b.tensor("X", {1}, DType::f16), y = b.tensor("Y", {1}, out);
    b.op(OpType::RELU, {in}, y);
    b.g.outputs = {y};
    const RefTensor r = reference_of(b.g, {{"X", bytes_of(b.g.tensor(in), {x})}}, "Y");
    INFO(dtype_name(out));
    CHECK(r.rounded == (out == DType::bf16));
    if (out != DType::bf16) continue;
    CHECK(r.value[0] == 1 + std::ldexp(1.0, -6));
    const std::vector<uint8_t> got = bytes_of(b.g.tensor(y), {1 + std::ldexp(1.0, -7)});
    const OutputCheck c = compare_output(b.g.tensor(y), got.data(), r, default_tolerance(out));
    CHECK(c.max_ratio <= 1.0);
    CHECK(c.pass);
  }
}

TEST_CASE("reference: an f16 intermediate is rounded before the next op reads it", "[reference]") {
  Builder b;
  TensorId a = b.tensor("A", {1, 2}), bb = b.tensor("B", {2, 1}), ab = b.tensor("AB", {1, 1}, DType::f16);
  TensorId c = b.tensor("C", {1, 1}, DType::f32);
  b.op(OpType::MATMUL, {a, bb}, ab);
  b.op(OpType::CAST, {ab}, c);
  b.g.outputs = {c};
  // 1 * 1 + 2^-11 * 1 is a tie in f16: rounds to 1 in AB, so C is 1, not 1 + 2^-11.
  RefTensor r = reference_of(
      b.g, {{"A", bytes_of(b.g.tensor(a), {1, std::ldexp(1.0, -11)})}, {"B", bytes_of(b.g.tensor(bb), {1, 1})}}, "C");
  CHECK(r.value[0] == 1.0);
}

TEST_CASE("reference: scale bounds the value; results are deterministic; errors are values", "[reference]") {
  Builder b;
  TensorId a = b.tensor("A", {3, 37, 45}, DType::bf16), bb = b.tensor("B", {45, 29}, DType::f16, Layout::colmajor);
  TensorId bias = b.tensor("Bias", {29}), c = b.tensor("C", {3, 37, 29}, DType::f16);
  b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias}, c).attrs.act = Act::gelu;
  b.g.outputs = {c};
  Inputs in{{"A", bytes_of(b.g.tensor(a), pattern(3 * 37 * 45, 1))},
            {"B", bytes_of(b.g.tensor(bb), pattern(45 * 29, 2))},
            {"Bias", bytes_of(b.g.tensor(bias), pattern(29, 3))}};
  RefTensor r1 = reference_of(b.g, in, "C");
  RefTensor r2 = reference_of(b.g, in, "C");
  CHECK(r1.value == r2.value);
  CHECK(r1.scale == r2.scale);
  int64_t nonzero = 0;
  for (size_t i = 0; i < r1.value.size(); ++i) {
    CHECK(r1.scale[i] >= std::fabs(r1.value[i]) * (1 - std::ldexp(1.0, -10)));
    nonzero += r1.value[i] != 0;
  }
  CHECK(nonzero > int64_t(r1.value.size() / 2));

  Inputs missing = in;
  missing.erase("B");
  auto m = run_reference(b.g, missing);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().message.find("\"B\"") != std::string::npos);
  Inputs short_bias = in;
  short_bias["Bias"].pop_back();
  REQUIRE_FALSE(run_reference(b.g, short_bias).ok());
}

TEST_CASE("reference: a 512^3 product finishes quickly", "[reference]") {
  Builder b;
  TensorId a = b.tensor("A", {512, 512}), bb = b.tensor("B", {512, 512}), c = b.tensor("C", {512, 512});
  b.op(OpType::MATMUL, {a, bb}, c);
  b.g.outputs = {c};
  Inputs in{{"A", bytes_of(b.g.tensor(a), pattern(512 * 512, 4))},
            {"B", bytes_of(b.g.tensor(bb), pattern(512 * 512, 5))}};
  auto t0 = std::chrono::steady_clock::now();
  RefTensor r = reference_of(b.g, in, "C");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // About 0.1 s of CPU time in a release build; the limits leave room for a loaded machine.
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
  CHECK(seconds < 5.0);
#else
  CHECK(seconds < 60.0);
#endif
  // Spot-check one element against a plain sum.
  std::vector<double> av = pattern(512 * 512, 4), bv = pattern(512 * 512, 5);
  double v = 0;
  for (int k = 0; k < 512; ++k) v += av[300 * 512 + k] * bv[k * 512 + 77];
  CHECK(r.value[300 * 512 + 77] == v);
}

TEST_CASE("reference: one element alone gives the same bits as the blocked, threaded product", "[reference]") {
  for (bool batched_b : {false, true}) {
    ref::DenseProduct p;
    p.batch = 3, p.m = 61, p.n = 263, p.k = 300, p.b_batched = batched_b, p.alpha = -0.7;  // odd sizes, k > block
    uint64_t x = 88172645463325252ull;
    auto next = [&] {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      return double(x >> 11) * 0x1p-53 - 0.5;
    };
    for (int64_t i = 0; i < p.batch * p.m * p.k; ++i) p.a.push_back(next()), p.a_scale.push_back(std::fabs(p.a.back()) + 0.1);
    for (int64_t i = 0; i < (batched_b ? p.batch : 1) * p.k * p.n; ++i)
      p.b.push_back(next()), p.b_scale.push_back(std::fabs(p.b.back()));
    std::vector<double> v, s;
    ref::product_all(p, v, s);
    REQUIRE(v.size() == size_t(p.batch * p.m * p.n));
    for (int64_t e = 0; e < p.batch; ++e)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          const ref::ValueScale one = ref::product_element(p, e, i, j);
          const size_t at = size_t((e * p.m + i) * p.n + j);
          REQUIRE(one.value == v[at]);
          REQUIRE(one.scale == s[at]);
        }
  }
}

// ---- compare ----

TEST_CASE("compare: the bound is atol, 1.25 ulps of the output and 6 sigma of the carried error", "[reference]") {
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    CHECK(default_tolerance(dt).atol > 0);
    CHECK(default_tolerance(dt).rtol == 0);
    RefTensor r{{1.5, 1.0, 0.75}, {2, 2, 2}, {0, 0, 0.25}, true};
    const Tolerance tol{0, 0};
    // 1.5 and 1.0 share a binade: one ulp is 2^-10 (f16), 2^-7 (bf16), 2^-23 (f32).
    const double ulp = dt == DType::f16 ? 0x1p-10 : dt == DType::bf16 ? 0x1p-7 : 0x1p-23;
    CHECK(element_bound(dt, r, 0, tol) == 1.25 * ulp);
    CHECK(element_bound(dt, r, 1, tol) == 1.25 * ulp);
    CHECK(element_bound(dt, r, 2, tol) == 1.25 * ulp / 2 + 6 * 0.5);
    CHECK(element_bound(dt, r, 0, {0.5, 0.25}) == 0.5 + 0.25 * 2 + 1.25 * ulp);
    CHECK(element_bound(dt, r, 0, {0.5, 0.25, true}) == 0);
    // Normwise: the two roundings of the output, ulp^2 / 6, on top of the carried variance.
    CHECK(element_norm_var(dt, r, 2) == 0.25 + (ulp / 2) * (ulp / 2) / 6);
  }
}

TEST_CASE("compare: one rounding step on the element that holds the variance passes the normwise rule", "[reference]") {
  // A bf16 output of 15 elements, one of them (5.09375) far larger than the others: its rounding
  // dominates the sum of variances. A correct kernel may land one step from the reference there
  // (5.109375 is a tie, and GELU evaluated in f32 or in double falls on either side of it); the
  // normwise rule must not count that as 15 independent errors' worth of spread.
  Tensor t;
  t.name = "Y";
  t.shape = {15};
  t.dtype = DType::bf16;
  RefTensor ref;
  ref.rounded = true;
  ref.value = {5.09375};
  for (int i = 1; i < 15; ++i) ref.value.push_back(0.001 * i);
  ref.scale = ref.value;
  ref.var.assign(15, 0.0);
  std::vector<double> got_values = ref.value;
  got_values[0] = 5.125;
  std::vector<uint8_t> got(15 * 2);
  for (int i = 0; i < 15; ++i) store_from_float(got.data(), DType::bf16, i, float(got_values[size_t(i)]));
  const OutputCheck c = compare_output(t, got.data(), ref, default_tolerance(DType::bf16));
  CHECK(c.max_ratio <= 0.8);
  CHECK(c.norm_ratio <= 1.0);
  CHECK(c.pass);
}

TEST_CASE("reference: an f32 epilogue's additions round at the scale of the bias and residual", "[reference]") {
  // C = A B + R + Bias in f32 with R and Bias cancelling: a kernel adds them to the product in
  // f32, each addition rounding at the magnitude of R (about 3), so its result is off by up to an
  // f32 ulp of 3 from the exact one, far more than an ulp of the small result.
  Builder b;
  TensorId a = b.tensor("A", {1, 1}), bb = b.tensor("B", {1, 1}), bias = b.tensor("Bias", {1});
  TensorId r = b.tensor("R", {1, 1}), c = b.tensor("C", {1, 1});
  Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias, r}, c);
  op.attrs.residual = true;
  b.g.outputs = {c};
  const float av = 0.3f, rv = 3.0000002f, biasv = -3.3f;
  const RefTensor ref = reference_of(b.g,
                                     {{"A", bytes_of(b.g.tensor(a), {av})}, {"B", bytes_of(b.g.tensor(bb), {1.0})},
                                      {"Bias", bytes_of(b.g.tensor(bias), {biasv})}, {"R", bytes_of(b.g.tensor(r), {rv})}},
                                     "C");
  const float kernel = (av * 1.0f + rv) + biasv;  // the CPU kernel's order, in f32
  REQUIRE(double(kernel) != ref.value[0]);
  std::vector<uint8_t> got(4);
  store_from_float(got.data(), DType::f32, 0, kernel);
  const OutputCheck check = compare_output(b.g.tensor(c), got.data(), ref, default_tolerance(DType::f32));
  CHECK(check.norm_ratio <= 1.0);
  CHECK(check.pass);
}

TEST_CASE("compare: a small error on every element fails the normwise rule only", "[reference]") {
  Tensor t;
  t.name = "C";
  t.shape = {64, 64};
  t.dtype = DType::f32;
  RefTensor ref;
  // Distinct values: equal ones may be one computation with one error, which the rule counts once.
  for (int i = 0; i < 64 * 64; ++i) ref.value.push_back(1.0 + i / 8192.0), ref.scale.push_back(2), ref.var.push_back(0);
  ref.rounded = true;
  std::vector<float> got(ref.value.begin(), ref.value.end());
  // One ulp of f32 on every element: within 1.25 ulps per element; normwise far beyond the
  // sqrt(1/6) ulp the two roundings account for.
  for (size_t i = 0; i < got.size(); ++i) got[i] = std::nextafter(got[i], 4.0f);
  OutputCheck c = compare_output(t, got.data(), ref, {0, 0});
  CHECK(c.beyond == 0);
  CHECK(c.max_ratio <= 1.0);
  CHECK(c.norm_ratio > 1.0);
  CHECK_FALSE(c.pass);
  std::vector<float> same(ref.value.begin(), ref.value.end());
  c = compare_output(t, same.data(), ref, {0, 0});
  CHECK(c.pass);
  CHECK(c.norm_ratio == 0);
}

// An element whose finite reference no finite bound covers (a DIV by a computed value whose error
// reaches 0) is not compared: any value may be right there, so a correct kernel never fails on it;
// the rest keeps both rules, and a non-finite reference is still matched by value only.
TEST_CASE("compare: an unbounded element is counted, not compared; the others still are", "[reference]") {
  Tensor t;
  t.name = "Q";
  t.shape = {4, 16};
  t.dtype = DType::f32;
  RefTensor ref;
  for (int i = 0; i < 64; ++i) ref.value.push_back(1.0 + i), ref.scale.push_back(1.0 + i), ref.var.push_back(0);
  ref.rounded = true;
  const double inf = std::numeric_limits<double>::infinity();
  ref.var[5] = inf;  // the quotient at 5: its divisor's error reaches 0
  std::vector<float> got(ref.value.begin(), ref.value.end());
  got[5] = -3e30f;  // anything passes there
  OutputCheck c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
  CHECK(c.unbounded == 1);
  CHECK(c.beyond == 0);
  CHECK(c.pass);
  CHECK(std::isfinite(c.norm_ratio));
  got[9] = float(ref.value[9]) * 1.01f;  // a bounded element off by 1%: still fails
  c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
  CHECK(c.beyond == 1);
  CHECK(c.worst == 9);
  CHECK_FALSE(c.pass);
  got[9] = float(ref.value[9]);
  ref.value[7] = inf, ref.var[7] = inf;  // an infinite reference: only that infinity matches
  got[7] = 1.0f;
  c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
  CHECK(c.unbounded == 1);
  CHECK(c.beyond == 1);
  CHECK_FALSE(c.pass);
  got[7] = std::numeric_limits<float>::infinity();
  CHECK(compare_output(t, got.data(), ref, default_tolerance(DType::f32)).pass);
  // A NaN variance (an infinite operand's error terms times 0: RELU of a product that is -inf)
  // bounds nothing either: unbounded, not a NaN bound that fails every value.
  ref.var[11] = std::nan("");
  got[11] = -7.0f;
  c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
  CHECK(c.unbounded == 2);
  CHECK(c.pass);
}

namespace {

// A rounded output's reference of n exact values value(i), each its own scale.
template <class Value>
RefTensor rounded_ref(int n, Value value) {
  RefTensor ref;
  for (int i = 0; i < n; ++i) {
    const double v = value(i);
    ref.value.push_back(v), ref.scale.push_back(v), ref.var.push_back(0);
  }
  ref.rounded = true;
  return ref;
}

}  // namespace

// Equal references with equal errors (an output of `ones`: one computation, one rounding
// step off everywhere) are one error, not 16 independent ones: the normwise rule counts them as
// one element and passes them; the same step on 128 distinct values fails it.
TEST_CASE("compare: equal elements one step off are one error to the normwise rule", "[reference]") {
  Tensor t;
  t.name = "C";
  t.shape = {8, 16};
  t.dtype = DType::bf16;
  for (bool equal : {true, false}) {
    const RefTensor ref = rounded_ref(128, [&](int i) {
      return equal ? 0.3359375 : 0.25 + i / 512.0;  // bf16 values in [0.25, 0.5): one step is 2^-9
    });
    std::vector<uint8_t> got = bytes_of(t, ref.value);
    for (int i = 0; i < 128; ++i) store_from_float(got.data(), DType::bf16, i, float(ref.value[size_t(i)] - 0x1p-9));
    const OutputCheck c = compare_output(t, got.data(), ref, default_tolerance(DType::bf16));
    INFO((equal ? "equal" : "distinct") << " values: norm_ratio " << c.norm_ratio);
    CHECK(c.beyond == 0);
    CHECK(c.pass == equal);
  }
}

// Beyond 4096 elements the pairs of equal references are estimated from a sample: an output of
// one value still counts as one error, and 65536 distinct values one rounding step off in the
// same direction still fail the normwise rule (the estimate finds no pair among them).
TEST_CASE("compare: the sampled estimate of equal pairs, on a large output", "[reference]") {
  Tensor t;
  t.name = "C";
  t.shape = {256, 256};
  t.dtype = DType::f32;
  for (bool equal : {true, false}) {
    const RefTensor ref = rounded_ref(256 * 256, [&](int i) {
      return equal ? 1.5 : 1.0 + i * 0x1p-17;  // distinct f32 values in [1, 1.5)
    });
    std::vector<float> got(ref.value.begin(), ref.value.end());
    for (float& g : got) g = std::nextafter(g, 0.0f);  // one step down everywhere
    const OutputCheck c = compare_output(t, got.data(), ref, {0, 0});
    INFO((equal ? "equal" : "distinct") << " values: norm_ratio " << c.norm_ratio);
    CHECK(c.beyond == 0);
    CHECK(c.pass == equal);
    if (!equal) CHECK(c.norm_ratio > 1.5);  // 256 ulps against 1.27 sqrt(65536 / 6) = 133
  }
}

TEST_CASE("compare: identical passes, a perturbation beyond the bound fails at its index", "[reference]") {
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    Tensor t;
    t.name = "C";
    t.shape = {4, 8};
    t.dtype = dt;
    RefTensor ref;
    for (double v : pattern(32, 7)) ref.value.push_back(v), ref.scale.push_back(std::fabs(v) + 1), ref.var.push_back(0);
    ref.rounded = true;
    std::vector<uint8_t> got = bytes_of(t, ref.value);
    const Tolerance tol = default_tolerance(dt);

    OutputCheck ok = compare_output(t, got.data(), ref, tol);
    CHECK(ok.pass);
    CHECK(ok.beyond == 0);
    CHECK(ok.max_abs == 0);
    CHECK(ok.rel_fro == 0);
    CHECK(ok.count == 32);

    // Within the bound: still passes.
    const int64_t i = 5;
    const double bound = element_bound(dt, ref, size_t(i), tol);
    std::vector<double> near = ref.value, far = ref.value;
    near[i] += bound * 0.5;
    far[i] += bound * 4;
    // Rounding to the dtype can move the perturbed value; check what is actually stored.
    std::vector<uint8_t> near_b = bytes_of(t, near), far_b = bytes_of(t, far);
    const double near_err = std::fabs(load_as_float(near_b.data(), dt, i) - ref.value[i]);
    OutputCheck n = compare_output(t, near_b.data(), ref, tol);
    CHECK(n.beyond == (near_err <= bound ? 0 : 1));
    OutputCheck f = compare_output(t, far_b.data(), ref, tol);
    CHECK_FALSE(f.pass);
    CHECK(f.beyond == 1);
    CHECK(f.worst == i);
    CHECK(f.worst_ref == ref.value[i]);
    CHECK(f.worst_got == load_as_float(far_b.data(), dt, i));
    CHECK(f.max_abs == std::fabs(f.worst_got - f.worst_ref));
    CHECK(f.max_abs > bound);
    CHECK(f.rel_fro > 0);
  }
}

TEST_CASE("compare: a non-finite reference passes only the same value", "[reference]") {
  Tensor t;
  t.name = "Y";
  t.shape = {4};
  t.dtype = DType::f32;
  // What a CAST of NaN, inf and -inf computes (ONNX's cast tests have such inputs).
  RefTensor ref{{1.0, NAN, INFINITY, -INFINITY}, {1.0, NAN, INFINITY, INFINITY}, {0, 0, 0, 0}, true};
  std::vector<float> got = {1.0f, std::nanf(""), INFINITY, -INFINITY};
  OutputCheck c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
  CHECK(c.pass);
  CHECK(c.beyond == 0);
  CHECK(c.got_nonfinite == 0);
  CHECK(c.max_abs == 0);
  // Any other value where the reference is non-finite fails: a finite one, the other infinity, NaN for inf.
  for (float wrong : {0.0f, -INFINITY, std::nanf("")}) {
    got[2] = wrong;
    c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
    CHECK_FALSE(c.pass);
    CHECK(c.beyond == 1);
    CHECK(c.worst == 2);
  }
  got[2] = INFINITY;
  got[1] = 1.0f;
  CHECK_FALSE(compare_output(t, got.data(), ref, default_tolerance(DType::f32)).pass);
}

TEST_CASE("compare: NaN and infinity fail; statistics", "[reference]") {
  Tensor t;
  t.name = "Y";
  t.shape = {3};
  t.dtype = DType::f32;
  RefTensor ref{{1.0, -2.0, 4.0}, {1.0, 2.0, 4.0}, {0, 0, 0}, true};
  std::vector<float> got = {1.0f, -2.0f, std::nanf("")};
  OutputCheck c = compare_output(t, got.data(), ref, default_tolerance(DType::f32));
  CHECK_FALSE(c.pass);
  CHECK(c.beyond == 1);
  CHECK(c.worst == 2);
  got[2] = INFINITY;
  CHECK_FALSE(compare_output(t, got.data(), ref, default_tolerance(DType::f32)).pass);

  got = {1.5f, -2.0f, 3.0f};  // errors 0.5, 0, 1: relative 0.5, 0, 0.25
  c = compare_output(t, got.data(), ref, {0, 0.3});
  CHECK(c.max_abs == 1.0);
  CHECK(c.max_rel == 0.5);
  CHECK(std::fabs(c.rel_fro - std::sqrt(1.25 / 21.0)) < 1e-15);
  CHECK(c.beyond == 1);  // 0.5 > 0.3 * 1; 1 <= 0.3 * 4
  CHECK(c.worst == 0);

  RefTensor zeros{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, true};
  std::vector<float> z = {0, 0, 0};
  c = compare_output(t, z.data(), zeros, {0, 0});
  CHECK(c.pass);
  CHECK(c.rel_fro == 0);
  CHECK(c.max_rel == 0);
}

TEST_CASE("exact: graphs with f8 tensors are refused, since their scales leave the integer model", "[reference]") {
  // An f8 operand with scale 0.07 holds integers times 0.07, which f32 products do not keep
  // exact; a CAST to f8 quantizes with the output's scale. Neither is bit-exact against the
  // reference, so exact mode must refuse rather than fail a correct run.
  for (int which = 0; which < 2; ++which) {
    Builder b;
    if (which == 0) {
      TensorId a = b.tensor("A", {2, 1}, DType::f8e4m3), c = b.tensor("C", {2, 2}, DType::f32);
      b.g.tensor(a).scale.values = {0.07};
      b.op(OpType::MATMUL, {a, a}, c).attrs.trans_b = true;
      b.g.outputs = {c};
    } else {
      TensorId x = b.tensor("X", {4}, DType::f16), y = b.tensor("Y", {4}, DType::f8e5m2);
      b.op(OpType::CAST, {x}, y);
      b.g.outputs = {y};
    }
    auto r = exact_range(b.g);
    INFO(which << ": " << (r.ok() ? "accepted, R = " + std::to_string(*r) : r.error().message));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.find("f8") != std::string::npos);
  }
}

TEST_CASE("exact: a residual's beta must be 0 or a power of two, as alpha must be a power of two", "[reference]") {
  for (const double beta : {0.3, 0.5, 0.0}) {
    Builder b;
    TensorId a = b.tensor("A", {2, 3}, DType::f32), w = b.tensor("W", {3, 2}, DType::f32),
             bias = b.tensor("Bias", {2}, DType::f32), r = b.tensor("R", {2, 2}, DType::f32),
             c = b.tensor("C", {2, 2}, DType::f32);
    Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, w, bias, r}, c);
    op.attrs.residual = true;
    op.attrs.beta = beta;
    b.g.outputs = {c};
    auto range = exact_range(b.g);
    INFO("beta " << beta << ": " << (range.ok() ? "accepted" : range.error().message));
    if (beta == 0.3) {
      REQUIRE_FALSE(range.ok());
      CHECK(range.error().message.find("beta 0.3 is not a power of two") != std::string::npos);
    } else {
      CHECK(range.ok());
    }
  }
}
