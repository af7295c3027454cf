// A device's product sums, checked against the CPU's at sampled elements of every product.
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

Result<ProductSums> CrossCheckedEngine::sums(const ProductJob& job, const EngineProgress& progress) {
  if (const std::string why = device_.prepare(job.kind); !why.empty()) {
    notes_.push_back("op " + job.op + ": its product was summed on the CPU: " + why);
    return cpu_product_engine().sums(job, progress);
  }
  using Clock = std::chrono::steady_clock;
  const GemmShape& s = job.kind.shape;
  const int64_t count = s.batch * s.m * s.n;
  // The elements to recompute: every row and column of C (flattened over the batch) where the
  // sample allows, the rest at random.
  Tensor c;
  c.name = job.op;
  c.shape = {s.batch * s.m, s.n};
  const std::vector<int64_t> picked = choose_samples(c, samples_, seed_);
  // The CPU's sums at those elements, on other threads while the device sums the whole: they
  // need only the operands, and the host mostly waits for the device meanwhile (2048 sums at k =
  // 8192 took 50-70 ms after it on the H200's host). Chunks of 16 elements, each a sum over k:
  // spread over the threads even for a few thousand elements (one thread took 0.6 s for 2048
  // elements at k = 8192).
  std::vector<ElementSums> cpu(picked.size());
  double cpu_ms = 0;
  std::jthread host([&] {  // joined on every way out
    const auto t = Clock::now();
    ref::for_chunks(int64_t(picked.size()), 16, [&](int64_t, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t x = picked[size_t(k)];
        cpu[size_t(k)] = element_sums(job, x / (s.m * s.n), (x / s.n) % s.m, x % s.n);
      }
    }, s.k * (1 + int64_t(job.kind.carried) + int64_t(job.kind.squares)));
    cpu_ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  });
  const auto t0 = Clock::now();
  auto r = device_.sums(job, progress);
  device_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  host.join();
  cross_check_ms_ += cpu_ms;
  if (!r) return r.error().with("the float64 reference on " + device_.name() + ", op " + job.op);
  const ProductSums& d = *r;
  const auto sized = [count](const std::vector<double>& v, bool wanted) {
    return int64_t(v.size()) == (wanted ? count : 0);
  };
  if (!sized(d.value, true) || !sized(d.scale, true) || !sized(d.var, job.kind.carried) ||
      !sized(d.squares, job.kind.squares) || !sized(d.block_sq, job.kind.block > 0))
    return runtime_error("the float64 reference on " + device_.name() + ", op " + job.op +
                         ": it returned sums of the wrong size");

  // The first disagreement in sample order.
  for (size_t k = 0; k < picked.size(); ++k) {
    const int64_t x = picked[k];
    const int64_t e = x / (s.m * s.n), i = (x / s.n) % s.m, j = x % s.n;
    const ElementSums& h = cpu[k];
    std::string miss;
    const auto check = [&](const char* what, double dev, double host_sum, double slack) {
      if (agree(dev, host_sum, slack)) return true;
      miss = std::string(what) + " " + num(dev) + " on the device against " + num(host_sum) + " on the CPU at element (" +
             std::to_string(e) + ", " + std::to_string(i) + ", " + std::to_string(j) +
             ") of C (batch, row, column); float64 rounding allows " + num(slack);
      return false;
    };
    const size_t at = size_t(x);
    bool ok = check("value", d.value[at], h.value, sum_order_slack(s.k, h.scale)) &&
              check("magnitude", d.scale[at], h.scale, sum_order_slack(s.k, h.scale));
    // The variance terms are sums of terms >= 0; where the value is not finite they do not
    // matter (the element fails as non-finite), and an operand carrying nothing may differ
    // there (0 times inf).
    if (ok && std::isfinite(h.value)) {
      ok = (!job.kind.carried || check("carried variance", d.var[at], h.var, sum_order_slack(s.k + 1, h.var))) &&
           (!job.kind.squares || check("sum of squares", d.squares[at], h.squares, sum_order_slack(s.k, h.squares))) &&
           // Each block's sum is squared (twice its relative error) before the blocks are summed.
           (job.kind.block <= 0 ||
            check("blocked magnitude", d.block_sq[at], h.block_sq, 3 * sum_order_slack(s.k, h.block_sq)));
    }
    if (!ok)
      return runtime_error("the float64 reference on " + device_.name() + " disagrees with the CPU reference, op " +
                           job.op + ": " + miss);
  }
  on_device_[job.op] = int64_t(picked.size());
  return r;
}

}  // namespace gexec
