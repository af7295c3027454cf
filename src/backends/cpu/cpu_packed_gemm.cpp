// The packed product (gexec/backends/cpu_packed_gemm.hpp). The micro-kernel holds an 8 x 32 block
// of C in 16 AVX-512 registers and, for each k, multiplies two vectors of B's panel by 8 broadcast
// values of A: 16 FMAs for 2 vector loads, so it is bound by the FMA units and not by the caches.
// A thread takes a panel and, 512 k at a time, runs every row block over that part of it: the part
// comes from memory once and from the L2 for the other row blocks. A is read whole for every
// panel, from the caches while it fits there (PackedB::suits).
#include "gexec/backends/cpu_packed_gemm.hpp"

#include <immintrin.h>

#include <algorithm>
#include <new>

#include "cpu_kernels.hpp"

namespace gexec::cpu {
namespace {

constexpr int64_t kRows = 8;     // rows of C per micro-kernel call
constexpr int64_t kDepth = 512;  // k per pass over the row blocks: 64 KiB of the panel, kept in the L2
constexpr int64_t kPanel = PackedB::kPanel;

using Block = void (*)(const float*, const float*, int64_t, bool, bool, float, float*, int64_t, int64_t, const float*,
                       int64_t);

// Rows [0, R) x columns [0, cols) of C, over the panel's k in [0, k): zeroed at the first block
// of K (`first`), else continued from the partial sums stored in C, which keeps each element one
// FMA chain in ascending k (an f32 stored and loaded back is the same f32); times alpha at the
// last block (`last`). On the way it asks the L2 for `ahead` k-rows of the panel memory that the
// thread reads next, spread over its steps: the hardware's prefetchers alone left the first pass
// over each part of a panel waiting on memory (M = 64 ran at a third of the large-M rate).
template <int R>
__attribute__((target("avx512f"))) void block(const float* a, const float* panel, int64_t k, bool first, bool last,
                                              float alpha, float* c, int64_t ldc, int64_t cols, const float* next,
                                              int64_t ahead) {
  const auto mask = [](int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  };
  const __mmask16 m0 = mask(cols), m1 = mask(cols - 16);
  __m512 lo[R], hi[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    lo[r] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m0, c + r * ldc);
    hi[r] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m1, c + r * ldc + 16);
  }
  const auto prefetch_row = [next](int64_t row) {  // one k-row of the panel: two lines
    _mm_prefetch(reinterpret_cast<const char*>(next + row * kPanel), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(next + row * kPanel + 16), _MM_HINT_T1);
  };
  const int64_t every = ahead > 0 ? std::max<int64_t>(1, k / ahead) : k;
  int64_t fetched = 0;
  for (int64_t p = 0; p < k;) {
    if (fetched < ahead) prefetch_row(fetched++);
    for (const int64_t end = std::min(k, p + every); p < end; ++p) {
      const float* b = panel + p * kPanel;
      const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 x = _mm512_set1_ps(a[p * kRows + r]);
        lo[r] = _mm512_fmadd_ps(x, b0, lo[r]);
        hi[r] = _mm512_fmadd_ps(x, b1, hi[r]);
      }
    }
  }
  while (fetched < ahead) prefetch_row(fetched++);
  const __m512 s = _mm512_set1_ps(last ? alpha : 1.0f);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, m0, _mm512_mul_ps(s, lo[r]));
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, _mm512_mul_ps(s, hi[r]));
  }
}

constexpr Block kBlocks[kRows + 1] = {nullptr,  block<1>, block<2>, block<3>, block<4>,
                                      block<5>, block<6>, block<7>, block<8>};

}  // namespace

bool PackedB::available() { return __builtin_cpu_supports("avx512f"); }

void PackedB::Free::operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }

PackedB::PackedB(const float* b, int64_t k, int64_t n, int64_t row_stride, int64_t col_stride)
    : k_(k), n_(n), panels_((n + kPanel - 1) / kPanel) {
  const size_t count = size_t(panels_ * k_ * kPanel);
  data_.reset(static_cast<float*>(::operator new[](count * sizeof(float), std::align_val_t(64))));
  float* out = data_.get();
  parallel_for(panels_, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* dst = out + p * k_ * kPanel;
      const int64_t cols = std::min(kPanel, n_ - p * kPanel);
      for (int64_t kk = 0; kk < k_; ++kk) {
        const float* src = b + kk * row_stride + p * kPanel * col_stride;
        for (int64_t j = 0; j < kPanel; ++j) dst[kk * kPanel + j] = j < cols ? src[j * col_stride] : 0.0f;
      }
    }
  });
}

void PackedB::multiply(const float* a, int64_t lda, int64_t m, float alpha, float* c, int64_t ldc) {
  if (m <= 0 || n_ <= 0) return;
  if (k_ == 0) {  // no terms: C is zero (no block below would write it)
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n_, 0.0f);
    return;
  }
  const int64_t row_blocks = (m + kRows - 1) / kRows;
  // A in row blocks of 8, k-major within a block: the 8 values a step broadcasts are adjacent.
  // Read in place, 8 rows a multiple of 4 KiB apart (K = 4096) would share one set of the L1.
  if (a_capacity_ < row_blocks * kRows * k_) {
    a_capacity_ = row_blocks * kRows * k_;
    a_blocks_.reset(static_cast<float*>(::operator new[](size_t(a_capacity_) * sizeof(float), std::align_val_t(64))));
  }
  float* pa = a_blocks_.get();
  parallel_for(row_blocks, std::max<int64_t>(1, (int64_t(1) << 16) / (kRows * k_)), [&](int64_t b0, int64_t b1) {
    for (int64_t rb = b0; rb < b1; ++rb)
      for (int64_t r = 0; r < kRows; ++r) {
        const int64_t row = rb * kRows + r;
        float* dst = pa + rb * kRows * k_ + r;
        for (int64_t kk = 0; kk < k_; ++kk) dst[kk * kRows] = row < m ? a[row * lda + kk] : 0.0f;
      }
  });
  // Panels alone give every thread work where there are twice as many as threads; with fewer
  // (a narrow N) each panel's rows are split too.
  const int64_t splits = std::clamp<int64_t>((2 * pool_threads() + panels_ - 1) / panels_, 1, row_blocks);
  const int64_t items = panels_ * splits;
  // A thread pays for itself from about a million multiply-adds.
  const int64_t per_item = std::max<int64_t>(1, kPanel * k_ * (m / splits + 1));
  parallel_for(items, std::max<int64_t>(1, (int64_t(1) << 20) / per_item), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t p = i / splits, s = i % splits;
      const int64_t cols = std::min(kPanel, n_ - p * kPanel);
      const float* panel = data_.get() + p * k_ * kPanel;
      const int64_t rb0 = row_blocks * s / splits, rb1 = row_blocks * (s + 1) / splits;
      for (int64_t k0 = 0; k0 < k_; k0 += kDepth) {
        const int64_t depth = std::min(kDepth, k_ - k0);
        // What follows this part of the panel in memory is what this thread reads next (the
        // panel's next part, or the next panel's first): each row block prefetches its share
        // (none past the last panel's end).
        const int64_t next_at = (p * k_ + k0 + depth) * kPanel;
        const int64_t next_rows = std::min(kDepth, (panels_ * k_ * kPanel - next_at) / kPanel);
        const float* next = data_.get() + next_at;
        for (int64_t rb = rb0; rb < rb1; ++rb) {
          const int64_t r0 = rb * kRows, rows = std::min(kRows, m - r0);
          const int64_t share = rb1 - rb0, from = next_rows * (rb - rb0) / share;
          const int64_t to = next_rows * (rb - rb0 + 1) / share;
          kBlocks[rows](pa + rb * kRows * k_ + k0 * kRows, panel + k0 * kPanel, depth, k0 == 0, k0 + depth == k_,
                        alpha, c + r0 * ldc + p * kPanel, ldc, cols, next + from * kPanel, to - from);
        }
      }
    }
  });
}

}  // namespace gexec::cpu
