// Alignment padding of the cuBLASLt GEMM (src/backends/cuda/gemm_padding.hpp), checked on the CPU:
// the decision, and a column-major product through the padded geometry (M, N and K rounded up,
// K's padding zero, the valid block copied in and out) giving exactly the unpadded result.
#include "catch.hpp"

#include <string>
#include <vector>

#include "../../src/backends/cuda/gemm_padding.hpp"

using namespace gexec;
using namespace gexec::cuda;

namespace {

GemmShape shape(int64_t m, int64_t n, int64_t k, bool ta = false, bool tb = false, Layout lc = Layout::rowmajor) {
  return GemmShape{.m = m, .n = n, .k = k, .trans_a = ta, .trans_b = tb, .layout_c = lc};
}

PadPlan plan(const GemmShape& s, PadMode mode, DType t = DType::f16) {
  const GemmView v = gemm_view(s);
  const GemmTypes ty = gemm_types(t, t, t);
  return plan_padding(v, ty, gemm_epilogue(v, ty, false, t, Act::none), false, false, mode);
}

// opX(i, l) of a stored column-major matrix with leading dimension ld.
double op_at(const std::vector<double>& m, bool trans, int64_t ld, int64_t i, int64_t l) {
  return trans ? m[size_t(l + i * ld)] : m[size_t(i + l * ld)];
}

// D (m x n, ld_d) = op(X) op(Y) with K terms.
std::vector<double> product(const std::vector<double>& x, bool tx, int64_t ldx, const std::vector<double>& y, bool ty,
                            int64_t ldy, int64_t m, int64_t n, int64_t k, int64_t ld_d) {
  std::vector<double> d(size_t(ld_d * n), -1.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double acc = 0;
      for (int64_t l = 0; l < k; ++l) acc += op_at(x, tx, ldx, i, l) * op_at(y, ty, ldy, l, j);
      d[size_t(i + j * ld_d)] = acc;
    }
  return d;
}

// What the pad copy (pad_copy.cu) does into a zeroed padded buffer.
std::vector<double> pad_copy(const std::vector<double>& src, const PaddedOperand& p) {
  std::vector<double> dst(size_t(p.elems()), 0.0);
  for (int64_t c = 0; c < p.cols0; ++c)
    for (int64_t r = 0; r < p.rows0; ++r) dst[size_t(r + c * p.ld)] = src[size_t(r + c * p.rows0)];
  return dst;
}

std::vector<double> values(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = double((i * 7 + seed * 13) % 11) - 5.0;
  return v;
}

}  // namespace

TEST_CASE("padding: the decision", "[padding]") {
  // The large misaligned product pads by the estimate, the aligned one never does.
  const PadPlan big = plan(shape(4095, 4097, 4093), PadMode::automatic);
  INFO(big.why);
  CHECK(big.pad);
  // cuBLASLt's M and N are the graph's N and M (row-major C is computed as C^T).
  CHECK(big.m == 4104);
  CHECK(big.n == 4096);
  CHECK(big.k == 4096);
  CHECK(big.why.find("4097x4095x4093 -> 4104x4096x4096") != std::string::npos);
  CHECK(big.d.padded);
  CHECK(big.d.ld == 4104);
  CHECK_FALSE(plan(shape(4096, 4096, 4096), PadMode::automatic).pad);
  CHECK_FALSE(plan(shape(4096, 4096, 4096), PadMode::always).pad);
  CHECK_FALSE(plan(shape(64, 96, 80), PadMode::always).pad);
  // Small misaligned products: copies cost more than they gain, unless forced.
  CHECK_FALSE(plan(shape(127, 65, 33), PadMode::automatic).pad);
  CHECK(plan(shape(127, 65, 33), PadMode::always).pad);
  CHECK_FALSE(plan(shape(4095, 4097, 4093), PadMode::never).pad);
  // f32 rows are 4 elements to 16 bytes.
  const PadPlan f32 = plan(shape(127, 65, 33), PadMode::always, DType::f32);
  CHECK(f32.k == 36);
  // Batches and conversions are left alone.
  GemmShape b = shape(4095, 4097, 4093);
  b.batch = 2;
  b.b_batched = true;
  CHECK_FALSE(plan(b, PadMode::always).pad);
  const GemmView v = gemm_view(shape(4095, 4097, 4093));
  const GemmTypes mixed = gemm_types(DType::f16, DType::f32, DType::f16);
  CHECK_FALSE(plan_padding(v, mixed, gemm_epilogue(v, mixed, false, DType::f16, Act::none), false, false,
                           PadMode::always).pad);
}

TEST_CASE("padding: the padded product equals the unpadded one", "[padding]") {
  for (DType t : {DType::f16, DType::f32})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (Layout lc : {Layout::rowmajor, Layout::colmajor}) {
          const GemmShape s = shape(13, 7, 5, ta != 0, tb != 0, lc);
          const GemmView v = gemm_view(s);
          const PadPlan p = pad_geometry(v, dtype_size(t), dtype_size(t));
          INFO("dtype " << dtype_name(t) << " trans " << ta << tb << " C " << layout_name(lc));
          const int64_t to = kPadBytes / dtype_size(t);
          for (int64_t dim : {p.m, p.n, p.k}) REQUIRE(dim % to == 0);
          REQUIRE(p.m >= v.m);
          REQUIRE(p.n >= v.n);
          REQUIRE(p.k >= v.k);
          for (const PaddedOperand* o : {&p.x, &p.y, &p.d}) {
            CHECK(o->ld % to == 0);
            CHECK(o->ld == o->rows);
            CHECK(o->rows >= o->rows0);
            CHECK(o->cols >= o->cols0);
          }
          const std::vector<double> x = values(v.x.rows * v.x.cols, 1), y = values(v.y.rows * v.y.cols, 2);
          const std::vector<double> want = product(x, v.x.trans, v.x.ld, y, v.y.trans, v.y.ld, v.m, v.n, v.k, v.ld_d);
          const std::vector<double> xp = pad_copy(x, p.x), yp = pad_copy(y, p.y);
          const std::vector<double> dp = product(xp, v.x.trans, p.x.ld, yp, v.y.trans, p.y.ld, p.m, p.n, p.k, p.d.ld);
          for (int64_t j = 0; j < v.n; ++j)
            for (int64_t i = 0; i < v.m; ++i) REQUIRE(dp[size_t(i + j * p.d.ld)] == want[size_t(i + j * v.ld_d)]);
        }
}
