// The column-major view of a gemm (src/backends/cuda/gemm_view.hpp), checked on the CPU: a naive
// column-major BLAS run through the view must give C exactly as the row-major definition does.
#include "catch.hpp"

#include <string>
#include <vector>

#include "../../src/backends/cuda/gemm_view.hpp"

using namespace gexec;
using gexec::cuda::ColOperand;
using gexec::cuda::GemmView;
using gexec::cuda::gemm_view;

namespace {

// Element (r, c) of a stored [rows, cols] matrix.
int64_t at(Layout l, int64_t r, int64_t c, int64_t rows, int64_t cols) {
  return l == Layout::rowmajor ? r * cols + c : c * rows + r;
}

// C from the definition: C[b](i, j) = alpha * sum_p op(A[b])(i, p) * op(B[b])(p, j).
std::vector<double> direct(const GemmShape& s, const std::vector<double>& a, const std::vector<double>& b) {
  const int64_t ar = s.trans_a ? s.k : s.m, ac = s.trans_a ? s.m : s.k;
  const int64_t br = s.trans_b ? s.n : s.k, bc = s.trans_b ? s.k : s.n;
  std::vector<double> c(size_t(s.batch * s.m * s.n), 0.0);
  for (int64_t bt = 0; bt < s.batch; ++bt) {
    const double* ab = a.data() + bt * s.m * s.k;
    const double* bb = b.data() + (s.b_batched ? bt * s.k * s.n : 0);
    double* cb = c.data() + bt * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const double av = s.trans_a ? ab[at(s.layout_a, p, i, ar, ac)] : ab[at(s.layout_a, i, p, ar, ac)];
          const double bv = s.trans_b ? bb[at(s.layout_b, j, p, br, bc)] : bb[at(s.layout_b, p, j, br, bc)];
          sum += av * bv;
        }
        cb[at(s.layout_c, i, j, s.m, s.n)] = s.alpha * sum;
      }
  }
  return c;
}

// C through the view, with the semantics of a column-major strided-batch BLAS.
std::vector<double> through_view(const GemmShape& s, const GemmView& v, const std::vector<double>& a,
                                 const std::vector<double>& b) {
  std::vector<double> c(size_t(s.batch * s.m * s.n), -999.0);
  auto elem = [](const double* p, const ColOperand& o, int64_t i, int64_t j) {
    return o.trans ? p[j + i * o.ld] : p[i + j * o.ld];  // op(X)(i, j)
  };
  for (int64_t bt = 0; bt < v.batch; ++bt) {
    const double* x = (v.x.is_b ? b.data() : a.data()) + bt * v.x.stride;
    const double* y = (v.y.is_b ? b.data() : a.data()) + bt * v.y.stride;
    double* d = c.data() + bt * v.stride_d;
    for (int64_t i = 0; i < v.m; ++i)
      for (int64_t j = 0; j < v.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < v.k; ++p) sum += elem(x, v.x, i, p) * elem(y, v.y, p, j);
        d[i + j * v.ld_d] = s.alpha * sum;
      }
  }
  return c;
}

// What cuBLASLt checks of a layout: op(X) is m x k, op(Y) is k x n, leading dimensions cover rows.
void check_consistent(const GemmView& v) {
  CHECK((v.x.trans ? v.x.cols : v.x.rows) == v.m);
  CHECK((v.x.trans ? v.x.rows : v.x.cols) == v.k);
  CHECK((v.y.trans ? v.y.cols : v.y.rows) == v.k);
  CHECK((v.y.trans ? v.y.rows : v.y.cols) == v.n);
  CHECK(v.x.ld >= v.x.rows);
  CHECK(v.y.ld >= v.y.rows);
  CHECK(v.ld_d >= v.m);
  CHECK(v.x.is_b != v.y.is_b);
}

std::string describe(const GemmShape& s) {
  return "batch=" + std::to_string(s.batch) + (s.b_batched ? " (B batched)" : "") +
         " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         " trans_a=" + std::to_string(s.trans_a) + " trans_b=" + std::to_string(s.trans_b) + " A " +
         std::string(layout_name(s.layout_a)) + " B " + std::string(layout_name(s.layout_b)) + " C " +
         std::string(layout_name(s.layout_c));
}

// Distinct small integers, so that every product is exact and a misplaced element shows.
std::vector<double> values(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = double((i * 7 + seed * 13) % 11) - 5.0;
  return v;
}

void check_shape(const GemmShape& s) {
  INFO(describe(s));
  const GemmView v = gemm_view(s);
  check_consistent(v);
  const auto a = values(s.batch * s.m * s.k, 1);
  const auto b = values((s.b_batched ? s.batch : 1) * s.k * s.n, 2);
  const auto want = direct(s, a, b);
  const auto got = through_view(s, v, a, b);
  CHECK(got == want);
  CHECK(v.swapped == (s.layout_c == Layout::rowmajor));
  CHECK(v.bias_on_rows == (s.layout_c == Layout::rowmajor));
  // With a bias on D's rows, D's row index must be C's column: D's rows count N.
  if (v.bias_on_rows) CHECK(v.m == s.n);
}

}  // namespace

TEST_CASE("gemm_view: every layout and transpose of a rank-2 product", "[gemm_view]") {
  const Layout layouts[] = {Layout::rowmajor, Layout::colmajor};
  const int64_t sizes[][3] = {{3, 5, 4}, {1, 1, 1}, {4, 1, 3}, {1, 6, 2}, {2, 3, 1}};
  int combos = 0;
  for (auto& mnk : sizes)
    for (Layout la : layouts)
      for (Layout lb : layouts)
        for (Layout lc : layouts)
          for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb) {
              GemmShape s;
              s.m = mnk[0];
              s.n = mnk[1];
              s.k = mnk[2];
              s.layout_a = la;
              s.layout_b = lb;
              s.layout_c = lc;
              s.trans_a = ta != 0;
              s.trans_b = tb != 0;
              s.alpha = combos % 3 == 0 ? -0.5 : 1.0;
              check_shape(s);
              ++combos;
            }
  CHECK(combos == 5 * 32);
}

TEST_CASE("gemm_view: batched products, B batched or shared", "[gemm_view]") {
  const Layout layouts[] = {Layout::rowmajor, Layout::colmajor};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int batched_b = 0; batched_b < 2; ++batched_b)
        for (Layout lb : layouts) {
          if (batched_b && lb == Layout::colmajor) continue;  // rank-3 tensors are rowmajor
          GemmShape s;
          s.batch = 3;
          s.m = 4;
          s.n = 5;
          s.k = 2;
          s.b_batched = batched_b != 0;
          s.trans_a = ta != 0;
          s.trans_b = tb != 0;
          s.layout_b = lb;
          check_shape(s);
          const GemmView v = gemm_view(s);
          // A shared B under a plain A folds the batch into one product.
          const bool folds = !s.b_batched && !s.trans_a;
          CHECK(v.batch == (folds ? 1 : 3));
          if (!folds && !s.b_batched) CHECK((v.x.is_b ? v.x.stride : v.y.stride) == 0);
        }
}

TEST_CASE("gemm_types: conversions where cuBLASLt cannot take the dtypes", "[gemm_view]") {
  using cuda::gemm_types;
  auto t = gemm_types(DType::f16, DType::f16, DType::f16);
  CHECK((t.ab == DType::f16 && t.d == DType::f16 && !t.convert_a && !t.convert_b && !t.convert_out));
  t = gemm_types(DType::bf16, DType::bf16, DType::f32);
  CHECK((t.ab == DType::bf16 && t.d == DType::f32 && !t.convert_out && !t.tf32()));
  t = gemm_types(DType::f16, DType::f16, DType::bf16);
  CHECK((t.ab == DType::f16 && t.d == DType::f32 && t.convert_out));
  t = gemm_types(DType::f32, DType::f32, DType::f16);
  CHECK((t.tf32() && t.d == DType::f32 && t.convert_out));
  t = gemm_types(DType::f16, DType::f32, DType::f32);
  CHECK((t.ab == DType::f32 && t.convert_a && !t.convert_b && !t.convert_out));
  t = gemm_types(DType::bf16, DType::f16, DType::bf16);
  CHECK((t.ab == DType::f32 && t.convert_a && t.convert_b && t.d == DType::f32 && t.convert_out));
}

TEST_CASE("gemm_epilogue: fused only where the bias runs along D's rows", "[gemm_view]") {
  using cuda::gemm_epilogue;
  GemmShape s;
  s.m = 8;
  s.n = 4;
  s.k = 2;
  const auto t16 = cuda::gemm_types(DType::f16, DType::f16, DType::f16);
  auto e = gemm_epilogue(gemm_view(s), t16, true, DType::f32, Act::relu);
  CHECK((e.fused && !e.needs_tail && e.convert_bias));
  e = gemm_epilogue(gemm_view(s), t16, true, DType::f16, Act::gelu);
  CHECK((e.fused && !e.convert_bias));
  e = gemm_epilogue(gemm_view(s), t16, false, DType::f16, Act::none);
  CHECK((!e.fused && !e.needs_tail));
  s.layout_c = Layout::colmajor;
  e = gemm_epilogue(gemm_view(s), t16, true, DType::f32, Act::relu);
  CHECK((!e.fused && e.needs_tail && !e.convert_bias));
  e = gemm_epilogue(gemm_view(s), t16, false, DType::f16, Act::relu);
  CHECK((e.fused && !e.needs_tail));
}
