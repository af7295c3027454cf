// A device's product sums, checked against the CPU's at sampled elements of every product.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

#include "gexec/verify/product_engine.hpp"
#include "gexec/verify/reference.hpp"
#include "parallel.hpp"

namespace gexec {
namespace {

// Two sums agree when both are the same non-finite value (NaN with NaN, inf of one sign), or
// finite and within `slack`.
bool agree(double device, double cpu, double slack) {
  if (std::isnan(device) || std::isnan(cpu)) return std::isnan(device) && std::isnan(cpu);
  if (std::isinf(device) || std::isinf(cpu)) return device == cpu;
  return std::fabs(device - cpu) <= slack;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

namespace {

// The elements of C whose sums are summed again on the CPU: every row and column of C (flattened
// over the batch) where the sample allows, the rest at random; ascending.
std::vector<int64_t> pick(const GemmShape& s, int64_t samples, uint64_t seed, const std::string& op) {
  Tensor c;
  c.name = op;
  c.shape = {s.batch * s.m, s.n};
  std::vector<int64_t> picked = choose_samples(c, samples, seed);
  std::sort(picked.begin(), picked.end());
  return picked;
}

// The CPU's sums at the picked elements, spread over the threads: chunks of 16 elements, each a
// sum over k (one thread took 0.6 s for 2048 elements at k = 8192).
void cpu_sums(const ProductJob& job, const std::vector<int64_t>& picked, std::vector<ElementSums>& cpu, double& ms) {
  using Clock = std::chrono::steady_clock;
  const GemmShape& s = job.kind.shape;
  const auto t = Clock::now();
  cpu.resize(picked.size());
  ref::for_chunks(int64_t(picked.size()), 16, [&](int64_t, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t x = picked[size_t(k)];
      cpu[size_t(k)] = element_sums(job, x / (s.m * s.n), (x / s.n) % s.m, x % s.n);
    }
  }, s.k * (1 + int64_t(job.kind.carried) + int64_t(job.kind.squares)));
  ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Whether a device's arrays hold `count` elements each, as the kind asks.
bool sized(const ProductSums& d, const ProductKind& kind, int64_t count) {
  const auto ok = [count](const std::vector<double>& v, bool wanted) { return int64_t(v.size()) == (wanted ? count : 0); };
  return ok(d.value, true) && ok(d.scale, true) && ok(d.var, kind.carried) && ok(d.squares, kind.squares) &&
         ok(d.block_sq, kind.block > 0);
}

ElementSums sums_at(const ProductSums& d, size_t at) {
  const auto get = [at](const std::vector<double>& v) { return v.empty() ? 0.0 : v[at]; };
  return {d.value[at], d.scale[at], get(d.var), get(d.squares), get(d.block_sq)};
}

// The first element, in sample order, whose device sums differ from the CPU's beyond float64
// rounding, as an error naming it; else empty.
std::string first_disagreement(const ProductJob& job, const std::vector<int64_t>& picked,
                               const std::vector<ElementSums>& cpu, const std::vector<ElementSums>& dev) {
  const GemmShape& s = job.kind.shape;
  for (size_t k = 0; k < picked.size(); ++k) {
    const int64_t x = picked[k];
    const int64_t e = x / (s.m * s.n), i = (x / s.n) % s.m, j = x % s.n;
    const ElementSums& h = cpu[k];
    const ElementSums& d = dev[k];
    std::string miss;
    const auto check = [&](const char* what, double device, double host_sum, double slack) {
      if (agree(device, host_sum, slack)) return true;
      miss = std::string(what) + " " + num(device) + " on the device against " + num(host_sum) + " on the CPU at element (" +
             std::to_string(e) + ", " + std::to_string(i) + ", " + std::to_string(j) +
             ") of C (batch, row, column); float64 rounding allows " + num(slack);
      return false;
    };
    bool ok = check("value", d.value, h.value, sum_order_slack(s.k, h.scale)) &&
              check("magnitude", d.scale, h.scale, sum_order_slack(s.k, h.scale));
    // The variance terms are sums of terms >= 0; where the value is not finite they do not
    // matter (the element fails as non-finite), and an operand carrying nothing may differ
    // there (0 times inf).
    if (ok && std::isfinite(h.value)) {
      ok = (!job.kind.carried || check("carried variance", d.var, h.var, sum_order_slack(s.k + 1, h.var))) &&
           (!job.kind.squares || check("sum of squares", d.squares, h.squares, sum_order_slack(s.k, h.squares))) &&
           // Each block's sum is squared (twice its relative error) before the blocks are summed.
           (job.kind.block <= 0 ||
            check("blocked magnitude", d.block_sq, h.block_sq, 3 * sum_order_slack(s.k, h.block_sq)));
    }
    if (!ok) return miss;
  }
  return {};
}

}  // namespace

bool CrossCheckedEngine::refused(const ProductJob& job, int64_t rows) {
  const std::string why = device_.prepare(job.kind, rows);
  if (!why.empty()) notes_.push_back("op " + job.op + ": its product was summed on the CPU: " + why);
  return !why.empty();
}

Result<ProductSums> CrossCheckedEngine::sums(const ProductJob& job, const EngineProgress& progress) {
  if (refused(job, 0)) return cpu_product_engine().sums(job, progress);
  using Clock = std::chrono::steady_clock;
  const GemmShape& s = job.kind.shape;
  const std::vector<int64_t> picked = pick(s, samples_, seed_, job.op);
  // The CPU's sums at those elements, on other threads while the device sums the whole: they
  // need only the operands, and the host mostly waits for the device meanwhile (2048 sums at k =
  // 8192 took 50-70 ms after it on the H200's host).
  std::vector<ElementSums> cpu;
  double cpu_ms = 0;
  std::jthread host([&] { cpu_sums(job, picked, cpu, cpu_ms); });  // joined on every way out
  const auto t0 = Clock::now();
  auto r = device_.sums(job, progress);
  device_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  host.join();
  cross_check_ms_ += cpu_ms;
  if (!r) return r.error().with("the float64 reference on " + device_.name() + ", op " + job.op);
  if (!sized(*r, job.kind, s.batch * s.m * s.n))
    return runtime_error("the float64 reference on " + device_.name() + ", op " + job.op +
                         ": it returned sums of the wrong size");
  std::vector<ElementSums> dev;
  for (int64_t x : picked) dev.push_back(sums_at(*r, size_t(x)));
  if (const std::string miss = first_disagreement(job, picked, cpu, dev); !miss.empty())
    return runtime_error("the float64 reference on " + device_.name() + " disagrees with the CPU reference, op " +
                         job.op + ": " + miss);
  on_device_[job.op] = int64_t(picked.size());
  return r;
}

Status CrossCheckedEngine::stream(const ProductJob& job, int64_t rows, const EngineProgress& progress,
                                  const PanelFn& fn) {
  if (refused(job, rows)) return cpu_product_engine().stream(job, rows, progress, fn);
  using Clock = std::chrono::steady_clock;
  const GemmShape& s = job.kind.shape;
  const std::vector<int64_t> picked = pick(s, samples_, seed_, job.op);
  std::vector<ElementSums> cpu, dev;
  double cpu_ms = 0;
  std::jthread host([&] { cpu_sums(job, picked, cpu, cpu_ms); });  // beside the device, as in sums()
  const std::string where = "the float64 reference on " + device_.name() + ", op " + job.op;
  int64_t next_row = 0;
  // Each panel's sums at the samples it holds, taken before fn (which may overwrite them).
  const PanelFn take = [&](int64_t row0, int64_t panel_rows, ProductSums& panel) -> Status {
    if (row0 != next_row || !sized(panel, job.kind, panel_rows * s.n))
      return runtime_error(where + ": it streamed rows " + std::to_string(row0) + " to " +
                           std::to_string(row0 + panel_rows) + " out of order or of the wrong size");
    next_row = row0 + panel_rows;
    const int64_t x0 = row0 * s.n, x1 = next_row * s.n;
    for (size_t k = dev.size(); k < picked.size() && picked[k] < x1; ++k) dev.push_back(sums_at(panel, size_t(picked[k] - x0)));
    return fn(row0, panel_rows, panel);
  };
  const auto t0 = Clock::now();
  const Status st = device_.stream(job, rows, progress, take);
  device_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  host.join();
  cross_check_ms_ += cpu_ms;
  if (!st) return st.error().with(where);
  if (next_row != s.batch * s.m || dev.size() != picked.size())
    return runtime_error(where + ": its panels ended at row " + std::to_string(next_row) + " of " +
                         std::to_string(s.batch * s.m));
  if (const std::string miss = first_disagreement(job, picked, cpu, dev); !miss.empty())
    return runtime_error("the float64 reference on " + device_.name() + " disagrees with the CPU reference, op " +
                         job.op + ": " + miss);
  on_device_[job.op] = int64_t(picked.size());
  return {};
}

}  // namespace gexec
