// The CPU product engine: the operands laid out densely in double, summed by reference_gemm.cpp;
// and the one-element sums a device's results are checked against.
#include "gexec/verify/product_engine.hpp"

#include <algorithm>
#include <cmath>

#include "gexec/ir/real_value.hpp"
#include "gexec/ir/zeros.hpp"
#include "reference_gemm.hpp"

namespace gexec {

double ProductOperand::at(int64_t l) const {
  if (bytes) return load_real(bytes->data(), *tensor, storage_index(*tensor, l));
  return (*value)[size_t(l)];
}

Status ProductEngine::stream(const ProductJob& job, int64_t rows, const EngineProgress& progress, const PanelFn& fn) {
  auto all = sums(job, progress);
  if (!all) return all.error();
  const GemmShape& s = job.kind.shape;
  const int64_t total = s.batch * s.m;
  rows = std::max<int64_t>(rows, 1);
  ProductSums panel;
  for (int64_t r0 = 0; r0 < total; r0 += rows) {
    const int64_t r = std::min(rows, total - r0);
    const auto slice = [&](const std::vector<double>& from, std::vector<double>& to) {
      to.clear();
      if (int64_t(from.size()) >= (r0 + r) * s.n) to.assign(from.begin() + r0 * s.n, from.begin() + (r0 + r) * s.n);
    };
    slice(all->value, panel.value), slice(all->scale, panel.scale), slice(all->var, panel.var);
    slice(all->squares, panel.squares), slice(all->block_sq, panel.block_sq);
    GEXEC_TRY(fn(r0, r, panel));
  }
  return {};
}

double sum_order_slack(int64_t k, double mag) {
  return 2.0 * double(k + 2) * 0x1p-53 * mag + 4.0 * double(k + 2) * 0x1p-1074;
}

namespace {

// Lays op(A) and op(B) out densely: a[(e*m + i)*k + kk] = fa(logical index of A), likewise B.
template <typename FA, typename FB>
void lay_out(const GemmShape& s, std::vector<double>& a, std::vector<double>& b, FA fa, FB fb) {
  const int64_t b_count = s.b_batched ? s.batch : 1;
  a.resize(static_cast<size_t>(s.batch * s.m * s.k));
  for (int64_t e = 0; e < s.batch; ++e)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t kk = 0; kk < s.k; ++kk)  // A is stored [K, M] per entry when transposed.
        a[size_t((e * s.m + i) * s.k + kk)] = fa(e * s.m * s.k + (s.trans_a ? kk * s.m + i : i * s.k + kk));
  b.resize(static_cast<size_t>(b_count * s.k * s.n));
  for (int64_t e = 0; e < b_count; ++e)
    for (int64_t kk = 0; kk < s.k; ++kk)
      for (int64_t j = 0; j < s.n; ++j)
        b[size_t((e * s.k + kk) * s.n + j)] = fb(e * s.k * s.n + (s.trans_b ? j * s.k + kk : kk * s.n + j));
}

class CpuEngine final : public ProductEngine {
 public:
  std::string name() const override { return "the CPU"; }

  Result<ProductSums> sums(const ProductJob& job, const EngineProgress& progress) override {
    const GemmShape& s = job.kind.shape;
    const ProductOperand& A = job.a;
    const ProductOperand& B = job.b;
    auto geometry = [&s](ref::DenseProduct& p, double alpha) {
      p.batch = s.batch, p.m = s.m, p.n = s.n, p.k = s.k, p.b_batched = s.b_batched, p.alpha = alpha;
    };
    ProductSums out;
    {
      // Values, and magnitudes beside them.
      ref::DenseProduct p;
      geometry(p, s.alpha);
      lay_out(s, p.a, p.b, [&](int64_t x) { return A.at(x); }, [&](int64_t x) { return B.at(x); });
      lay_out(s, p.a_scale, p.b_scale, [&](int64_t x) { return std::fabs(A.at(x)); },
              [&](int64_t x) { return std::fabs(B.at(x)); });
      ref::product_all(p, out.value, out.scale, progress);
      if (job.kind.block > 0) out.block_sq = ref::block_magnitude_squares(p, job.kind.block);
    }
    const size_t count = out.value.size();
    if (job.kind.carried) {
      // sum ca (b^2 + cb) in the value channel, sum a^2 cb in the scale channel, times alpha^2.
      ref::DenseProduct q;
      geometry(q, s.alpha * s.alpha);
      lay_out(s, q.a, q.b, [&](int64_t x) { return A.carried_at(x); },
              [&](int64_t x) { return B.at(x) * B.at(x) + B.carried_at(x); });
      lay_out(s, q.a_scale, q.b_scale, [&](int64_t x) { return A.at(x) * A.at(x); },
              [&](int64_t x) { return B.carried_at(x); });
      std::vector<double> x, y;
      ref::product_all(q, x, y);
      assign_zeros(out.var, count);
      for (size_t e = 0; e < count; ++e) out.var[e] = x[e] + y[e];
    }
    if (job.kind.squares) {
      ref::DenseProduct q;
      geometry(q, s.alpha * s.alpha);
      lay_out(s, q.a, q.b, [&](int64_t x) { return A.at(x) * A.at(x); }, [&](int64_t x) { return B.at(x) * B.at(x); });
      q.a_scale = q.a, q.b_scale = q.b;
      std::vector<double> unused;
      ref::product_all(q, out.squares, unused);
    }
    return out;
  }
};

}  // namespace

ProductEngine& cpu_product_engine() {
  static CpuEngine engine;
  return engine;
}

ElementSums element_sums(const ProductJob& job, int64_t e, int64_t i, int64_t j) {
  const GemmShape& s = job.kind.shape;
  const int64_t be = s.b_batched ? e : 0;
  const int64_t block = job.kind.block;
  double v = 0, sc = 0, cx = 0, cy = 0, sq = 0, part = 0, block_sq = 0;
  for (int64_t kk = 0; kk < s.k; ++kk) {
    const int64_t ai = e * s.m * s.k + (s.trans_a ? kk * s.m + i : i * s.k + kk);
    const int64_t bi = be * s.k * s.n + (s.trans_b ? j * s.k + kk : kk * s.n + j);
    const double x = job.a.at(ai), y = job.b.at(bi);
    v += x * y;
    sc += std::fabs(x) * std::fabs(y);
    if (block > 0) {
      part += std::fabs(x) * std::fabs(y);
      if ((kk + 1) % block == 0 || kk + 1 == s.k) block_sq += part * part, part = 0;
    }
    if (job.kind.carried) {
      const double ca = job.a.carried_at(ai), cb = job.b.carried_at(bi);
      cx += ca * (y * y + cb);
      cy += x * x * cb;
    }
    if (job.kind.squares) sq += (x * x) * (y * y);
  }
  const double a2 = s.alpha * s.alpha;
  return {v * s.alpha, sc * std::fabs(s.alpha), job.kind.carried ? cx * a2 + cy * std::fabs(a2) : 0.0, sq * a2,
          block_sq};
}

}  // namespace gexec
