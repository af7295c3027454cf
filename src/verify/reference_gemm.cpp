// The reference's matrix product in double, blocked for the cache and spread over threads.
#include "reference_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "gexec/ir/zeros.hpp"

namespace gexec::ref {
namespace {

// A block of B (kKBlock x kJBlock values and as many scales, 1 MiB) stays in a core's L2
// while every row of the thread's share streams past it; the row's partial sums (4 KiB) stay in L1.
constexpr int64_t kJBlock = 256;
constexpr int64_t kKBlock = 256;

// Four doubles, for a register tile the compiler maps to SSE2 or AVX2 registers.
typedef double V4 __attribute__((vector_size(32)));

inline __attribute__((always_inline)) void load4(V4& v, const double* p) { std::memcpy(&v, p, sizeof v); }
inline __attribute__((always_inline)) void store4(double* p, const V4& v) { std::memcpy(p, &v, sizeof v); }

// Rows [r0, r1) of the flattened [batch * m] output. Each element's sum runs over k in
// ascending order whatever the blocking or tiling, so the result does not depend on the thread
// count, and equals product_element's. The AVX2 clone has no FMA, so no multiply-add is fused.
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
void product_rows(const DenseProduct& p, int64_t r0, int64_t r1, double* value, double* scale,
                  std::atomic<int64_t>* done) {
  const int64_t n = p.n, k = p.k;
  const int64_t entry_rows = p.b_batched ? p.m : p.batch * p.m;  // rows that share one B
  // The block of B in 4-column strips, each strip's rows contiguous, so that the tile below
  // reads it sequentially instead of striding down B's rows.
  std::vector<double> pb(static_cast<size_t>(kKBlock * kJBlock)), psb(pb.size());
  for (int64_t j0 = 0; j0 < n; j0 += kJBlock) {
    const int64_t j1 = std::min(n, j0 + kJBlock);
    const int64_t j4 = j0 + (j1 - j0) / 4 * 4;
    for (int64_t k0 = 0; k0 < k; k0 += kKBlock) {
      const int64_t k1 = std::min(k, k0 + kKBlock), kn = k1 - k0;
      int64_t packed_entry = -1;
      int64_t r = r0;
      while (r < r1) {
        const int64_t e = p.b_batched ? r / p.m : 0;
        const double* b = p.b.data() + e * k * n;
        const double* sb = p.b_scale.data() + e * k * n;
        if (e != packed_entry) {
          for (int64_t j = j0; j < j4; j += 4)
            for (int64_t kk = k0; kk < k1; ++kk)
              for (int c = 0; c < 4; ++c) {
                const size_t at = static_cast<size_t>(((j - j0) * kn + (kk - k0) * 4) + c);
                pb[at] = b[kk * n + j + c];
                psb[at] = sb[kk * n + j + c];
              }
          packed_entry = e;
        }
        // Four rows at a time keep 4x4 sums and scales in registers; B is read once per four rows.
        if (r + 4 <= r1 && (r % entry_rows) + 4 <= entry_rows) {
          const double* a[4];
          const double* sa[4];
          for (int q = 0; q < 4; ++q) a[q] = p.a.data() + (r + q) * k, sa[q] = p.a_scale.data() + (r + q) * k;
          for (int64_t j = j0; j < j4; j += 4) {
            const double* bp = pb.data() + (j - j0) * kn;
            const double* sbp = psb.data() + (j - j0) * kn;
            V4 c[4], s[4], bv, sbv;
            for (int q = 0; q < 4; ++q) load4(c[q], value + (r + q) * n + j), load4(s[q], scale + (r + q) * n + j);
            for (int64_t kk = k0; kk < k1; ++kk) {
              load4(bv, bp + (kk - k0) * 4);
              load4(sbv, sbp + (kk - k0) * 4);
              for (int q = 0; q < 4; ++q) {
                c[q] += a[q][kk] * bv;
                s[q] += sa[q][kk] * sbv;
              }
            }
            for (int q = 0; q < 4; ++q) store4(value + (r + q) * n + j, c[q]), store4(scale + (r + q) * n + j, s[q]);
          }
          for (int q = 0; q < 4; ++q)
            for (int64_t kk = k0; kk < k1; ++kk)
              for (int64_t j = j4; j < j1; ++j) {
                value[(r + q) * n + j] += a[q][kk] * b[kk * n + j];
                scale[(r + q) * n + j] += sa[q][kk] * sb[kk * n + j];
              }
          r += 4;
          continue;
        }
        const double* arow = p.a.data() + r * k;
        const double* srow = p.a_scale.data() + r * k;
        for (int64_t kk = k0; kk < k1; ++kk)
          for (int64_t j = j0; j < j1; ++j) {
            value[r * n + j] += arow[kk] * b[kk * n + j];
            scale[r * n + j] += srow[kk] * sb[kk * n + j];
          }
        ++r;
      }
      // Multiply-adds finished, for the progress report.
      if (done) done->fetch_add((r1 - r0) * (j1 - j0) * kn, std::memory_order_relaxed);
    }
  }
  // alpha last, as product_element does.
  const double alpha = p.alpha, abs_alpha = std::fabs(p.alpha);
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      value[r * n + j] *= alpha;
      scale[r * n + j] *= abs_alpha;
    }
  }
}

// Runs rows(r0, r1) over slices of [0, rows) on as many threads as pay off for `work`
// multiply-adds (threads only pay off beyond a few million); with more than one, `poll` (where
// given) runs on the caller's thread every 10 ms until the others finish.
void spread_rows(int64_t rows, double work, const std::function<void(int64_t, int64_t)>& run_rows,
                 const std::function<void()>& poll) {
  int64_t threads = work < 4e6 ? 1 : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, std::max<int64_t>(rows, 1));
  if (threads <= 1) {
    run_rows(0, rows);
    return;
  }
  std::atomic<int64_t> running{0};
  std::vector<std::thread> pool;
  const int64_t per = (rows + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t r0 = t * per, r1 = std::min(rows, r0 + per);
    if (r0 >= r1) break;
    running.fetch_add(1);
    pool.emplace_back([&run_rows, &running, r0, r1] {
      run_rows(r0, r1);
      running.fetch_sub(1);
    });
  }
  if (poll)
    while (running.load() > 0) {
      poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  for (auto& th : pool) th.join();
}

}  // namespace

ValueScale product_element(const DenseProduct& p, int64_t e, int64_t i, int64_t j) {
  const int64_t be = p.b_batched ? e : 0;
  const double* a = p.a.data() + (e * p.m + i) * p.k;
  const double* sa = p.a_scale.data() + (e * p.m + i) * p.k;
  double v = 0, s = 0;
  for (int64_t kk = 0; kk < p.k; ++kk) {
    const int64_t bi = (be * p.k + kk) * p.n + j;
    v += a[kk] * p.b[bi];
    s += sa[kk] * p.b_scale[bi];
  }
  return {v * p.alpha, s * std::fabs(p.alpha)};
}

void product_all(const DenseProduct& p, std::vector<double>& value, std::vector<double>& scale,
                 const std::function<void(double)>& progress) {
  const int64_t rows = p.batch * p.m;
  assign_zeros(value, static_cast<size_t>(rows * p.n));
  assign_zeros(scale, static_cast<size_t>(rows * p.n));
  const double work = double(rows) * double(p.n) * double(p.k);
  std::atomic<int64_t> done{0};
  spread_rows(
      rows, work, [&](int64_t r0, int64_t r1) { product_rows(p, r0, r1, value.data(), scale.data(), &done); },
      // The caller's thread reports progress while the others work.
      progress ? std::function<void()>([&] { progress(double(done.load(std::memory_order_relaxed)) / work); })
               : std::function<void()>());
}

std::vector<double> block_magnitude_squares(const DenseProduct& p, int64_t block) {
  const int64_t rows = p.batch * p.m;
  std::vector<double> out(static_cast<size_t>(rows * p.n), 0.0);
  // Rows r0..r1: per block, the block's magnitudes for a whole row at once (k ascending for each
  // element, as the sampled reference sums them), squared into the row's totals.
  auto run_rows = [&p, block, &out](int64_t r0, int64_t r1) {
    std::vector<double> part(static_cast<size_t>(p.n));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t be = p.b_batched ? r / p.m : 0;
      const double* sa = p.a_scale.data() + r * p.k;
      double* total = out.data() + r * p.n;
      for (int64_t k0 = 0; k0 < p.k; k0 += block) {
        std::fill(part.begin(), part.end(), 0.0);
        for (int64_t kk = k0; kk < std::min(p.k, k0 + block); ++kk) {
          const double* sb = p.b_scale.data() + (be * p.k + kk) * p.n;
          for (int64_t j = 0; j < p.n; ++j) part[size_t(j)] += sa[kk] * sb[j];
        }
        for (int64_t j = 0; j < p.n; ++j) total[j] += part[size_t(j)] * part[size_t(j)];
      }
    }
  };
  spread_rows(rows, double(rows) * double(p.n) * double(p.k), run_rows, {});
  return out;
}

}  // namespace gexec::ref
