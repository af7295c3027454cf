// The packed product (gexec/backends/cpu_packed_gemm.hpp). The micro-kernel holds an 8 x 32 block
// of C in 16 AVX-512 registers and, for each k, multiplies two vectors of B's panel by 8 broadcast
// values of A: 16 FMAs for 2 vector loads, so it is bound by the FMA units and not by the caches.
// A thread takes its panels 512 k at a time and runs every row block over each part: the part comes
// from memory once and from the L2 for the other row blocks, and A's 512 columns stay in the L2
// for a batch of the thread's panels, whose partial sums it keeps apart from C.
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
alignas(64) constexpr float kZeros[kDepth] = {};  // A's rows past M

// Where a block's sums come from and go to: the partial sums of the earlier parts of K (none for
// the first part) and the block of C at the last part, else the partial sums again. At the last
// part the block adds beta R and the bias as it stores: alpha AB + beta R + bias, in that order.
struct Sums {
  const float* in;  // nullptr: start from zero
  float* out;
  int64_t ld_out;   // floats between rows of `out`
  float scale;      // alpha at the last part, else 1
  const float* res = nullptr;   // the block's R (row-major, ld_out apart), or none
  float beta = 0;
  const float* bias = nullptr;  // the block's columns of the bias, or none
};
constexpr int64_t kSumsLd = PackedB::kPanel;  // partial sums: 8 x 32 floats a block, contiguous

using Block = void (*)(const float*, int64_t, const float*, int64_t, const Sums&, int64_t, const float*, int64_t);

// Rows [0, R) x columns [0, cols) of C over the panel's k in [0, k), continued from `sums.in`:
// each element stays one FMA chain in ascending k (an f32 stored and loaded back is the same f32).
// On the way it asks the L2 for `ahead` k-rows of the panel memory that the thread reads next,
// spread over its steps: the hardware's prefetchers alone left the first pass over each part of
// a panel waiting on memory (M = 64 ran at a third of the large-M rate).
// A is read as copied into its row block (Copied: a[k * 8 + r]) or where it lies (a[r * lda + k]).
template <int R, bool Copied>
__attribute__((target("avx512f"))) void block(const float* a, int64_t lda, const float* panel, int64_t k, const Sums& sums,
                                              int64_t cols, const float* next, int64_t ahead) {
  const auto mask = [](int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  };
  const __mmask16 m0 = mask(cols), m1 = mask(cols - 16);
  __m512 lo[R], hi[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    lo[r] = sums.in ? _mm512_load_ps(sums.in + r * kSumsLd) : _mm512_setzero_ps();
    hi[r] = sums.in ? _mm512_load_ps(sums.in + r * kSumsLd + 16) : _mm512_setzero_ps();
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
        const __m512 x = _mm512_set1_ps(Copied ? a[p * kRows + r] : a[r * lda + p]);
        lo[r] = _mm512_fmadd_ps(x, b0, lo[r]);
        hi[r] = _mm512_fmadd_ps(x, b1, hi[r]);
      }
    }
  }
  while (fetched < ahead) prefetch_row(fetched++);
  const __m512 s = _mm512_set1_ps(sums.scale);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512 v0 = _mm512_mul_ps(s, lo[r]), v1 = _mm512_mul_ps(s, hi[r]);
    if (sums.res) {
      const __m512 beta = _mm512_set1_ps(sums.beta);
      v0 = _mm512_add_ps(v0, _mm512_mul_ps(beta, _mm512_maskz_loadu_ps(m0, sums.res + r * sums.ld_out)));
      v1 = _mm512_add_ps(v1, _mm512_mul_ps(beta, _mm512_maskz_loadu_ps(m1, sums.res + r * sums.ld_out + 16)));
    }
    if (sums.bias) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, sums.bias));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, sums.bias + 16));
    }
    _mm512_mask_storeu_ps(sums.out + r * sums.ld_out, m0, v0);
    _mm512_mask_storeu_ps(sums.out + r * sums.ld_out + 16, m1, v1);
  }
}

template <bool Copied>
constexpr Block kBlocks[kRows + 1] = {nullptr,          block<1, Copied>, block<2, Copied>,
                                      block<3, Copied>, block<4, Copied>, block<5, Copied>,
                                      block<6, Copied>, block<7, Copied>, block<8, Copied>};

// Up to this K the blocks read A where it lies: copying it cost more than it saved (on this
// machine's 2 cores, gexec_bench_cpu, minimum of 6 medians: 256 x 256 x 1024 0.372 -> 0.339 ms,
// 64 x 256 x 1024 0.099 -> 0.088), and it is one hand-off between the threads less. Beyond it the
// copy stays: the products of d 4096 models were tuned with it on the H200 machine, and their
// rows of A, a large power of two apart, would share the L2's sets.
constexpr int64_t kCopyFromK = 2048;

// Floats aligned to a cache line, for PackedB::Free.
float* new_floats(int64_t n) {
  return static_cast<float*>(::operator new[](size_t(n) * sizeof(float), std::align_val_t(64)));
}

}  // namespace

bool PackedB::available() { return __builtin_cpu_supports("avx512f"); }

void PackedB::Free::operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }

PackedB::PackedB(const float* b, int64_t k, int64_t n, int64_t row_stride, int64_t col_stride)
    : k_(k), n_(n), panels_((n + kPanel - 1) / kPanel) {
  data_.reset(new_floats(panels_ * k_ * kPanel));
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

void PackedB::multiply(const float* a, int64_t lda, int64_t m, float alpha, float* c, int64_t ldc,
                       const Epilogue& epilogue) {
  const Finish* finish = epilogue.finish;
  if (m <= 0 || n_ <= 0) return;
  if (k_ == 0) {  // no terms: C is zero (no block below would write it)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n_; ++j) {
        float v = 0.0f;
        if (epilogue.res) v = v + epilogue.beta * epilogue.res[i * ldc + j];
        if (epilogue.bias) v = v + epilogue.bias[j];
        c[i * ldc + j] = v;
      }
    if (finish) (*finish)(0, m, 0, n_);
    return;
  }
  const int64_t row_blocks = (m + kRows - 1) / kRows;
  const bool copied = k_ > kCopyFromK;
  // A in row blocks of 8, k-major within a block (the 8 values a step broadcasts are adjacent),
  // 512 k at a time: each part of A that the loop below keeps in the L2 is one contiguous run.
  // Blocks of whole rows lay that part out 8 x K x 4 bytes apart, a multiple of the L2's way at
  // K = 4096, where 32 row blocks then competed for the same sets.
  const int64_t padded = row_blocks * kRows;
  const auto a_block = [&](float* base, int64_t rb, int64_t k0) {
    return base + k0 * padded + rb * kRows * std::min(kDepth, k_ - k0);
  };
  if (copied && a_capacity_ < padded * k_) {
    a_capacity_ = padded * k_;
    a_blocks_.reset(new_floats(a_capacity_));
  }
  float* pa = a_blocks_.get();
  // One piece per row block and part of K (up to 4096 values): in pieces of whole row blocks over
  // all of K, a decode-sized A (64 rows, 8 blocks) was copied by one thread while the others waited.
  const int64_t parts = (k_ + kDepth - 1) / kDepth;
  if (copied) parallel_for(row_blocks * parts, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t rb = i / parts, k0 = (i % parts) * kDepth;
      float* dst = a_block(pa, rb, k0);
      const int64_t depth = std::min(kDepth, k_ - k0);
      // Row by row, the stores went 32 bytes apart and took 13% of a d 256 MLP's time on this
      // path; k by k they are contiguous and the 8 rows are read as 8 sequential streams.
      const float* src[kRows];
      for (int64_t r = 0; r < kRows; ++r) src[r] = rb * kRows + r < m ? a + (rb * kRows + r) * lda + k0 : kZeros;
      for (int64_t kk = 0; kk < depth; ++kk)
#pragma GCC unroll 8
        for (int64_t r = 0; r < kRows; ++r) dst[kk * kRows + r] = src[r][kk];
    }
  });
  // Panels alone give every thread work where there are twice as many as threads; with fewer
  // (a narrow N) each panel's rows are split too.
  const int64_t splits = std::clamp<int64_t>((2 * pool_threads() + panels_ - 1) / panels_, 1, row_blocks);
  const int64_t items = panels_ * splits;
  // A thread pays for itself from about a million multiply-adds.
  const int64_t per_item = std::max<int64_t>(1, kPanel * k_ * (m / splits + 1));
  // A thread takes its items in batches whose partial sums fit in 256 KiB.
  const int64_t item_blocks = (row_blocks + splits - 1) / splits;
  const int64_t batch = std::max<int64_t>(1, (int64_t(64) << 10) / (item_blocks * kRows * kSumsLd));
  parallel_for(items, std::max<int64_t>(1, (int64_t(1) << 20) / per_item), [&](int64_t i0, int64_t i1) {
    // 512 k at a time over a batch of this thread's items, so that the part of A it reads (m x
    // 512, 512 KiB at 256 rows) and the batch's partial sums stay in the L2 while every part of a
    // panel comes from memory once. Taking each panel whole in turn read all of A (4 MiB at 256 x
    // 4096) from the L3 for every panel; partial sums kept in C itself, whose rows are a multiple
    // of the L2's way apart at N = 4096, were evicted by each other between parts.
    // The buffer is the thread's, kept for the process (at most 256 KiB), as the pool's threads are.
    thread_local std::unique_ptr<float[], Free> sums;
    thread_local int64_t sums_capacity = 0;
    const int64_t need = batch * item_blocks * kRows * kSumsLd;
    if (k_ > kDepth && sums_capacity < need) {
      sums.reset(new_floats(need));
      sums_capacity = need;
    }
    const auto panel_of = [&](int64_t i) { return data_.get() + (i / splits) * k_ * kPanel; };
    for (int64_t j0 = i0; j0 < i1; j0 += batch) {
      const int64_t j1 = std::min(i1, j0 + batch);
      for (int64_t k0 = 0; k0 < k_; k0 += kDepth) {
        const int64_t depth = std::min(kDepth, k_ - k0);
        const bool first = k0 == 0, last = k0 + depth == k_;
        for (int64_t i = j0; i < j1; ++i) {
          const int64_t p = i / splits, s = i % splits;
          const int64_t cols = std::min(kPanel, n_ - p * kPanel);
          const int64_t rb0 = row_blocks * s / splits, rb1 = row_blocks * (s + 1) / splits;
          // What this thread reads next: the next item's part of its panel, else the batch's
          // first item's next part, else the next batch's first part. Each row block asks for
          // its share of it.
          const bool more = i + 1 < j1;
          const int64_t next_i = more ? i + 1 : !last ? j0 : j1, next_k = more ? k0 : !last ? k0 + depth : 0;
          const float* next = panel_of(std::min(next_i, items - 1)) + next_k * kPanel;
          const int64_t next_rows = next_i < i1 ? std::min(kDepth, k_ - next_k) : 0;
          for (int64_t rb = rb0; rb < rb1; ++rb) {
            const int64_t r0 = rb * kRows, rows = std::min(kRows, m - r0);
            const int64_t share = rb1 - rb0, from = next_rows * (rb - rb0) / share;
            const int64_t to = next_rows * (rb - rb0 + 1) / share;
            float* part = k_ > kDepth ? sums.get() + ((i - j0) * item_blocks + (rb - rb0)) * kRows * kSumsLd : nullptr;
            Sums io{first ? nullptr : part, last ? c + r0 * ldc + p * kPanel : part, last ? ldc : kSumsLd,
                    last ? alpha : 1.0f};
            if (last && epilogue.res) io.res = epilogue.res + r0 * ldc + p * kPanel, io.beta = epilogue.beta;
            if (last && epilogue.bias) io.bias = epilogue.bias + p * kPanel;
            const float* next_part = next + from * kPanel;
            if (copied)
              kBlocks<true>[rows](a_block(pa, rb, k0), 0, panel_of(i) + k0 * kPanel, depth, io, cols, next_part, to - from);
            else
              kBlocks<false>[rows](a + r0 * lda + k0, lda, panel_of(i) + k0 * kPanel, depth, io, cols, next_part, to - from);
            if (last && finish) (*finish)(r0, r0 + rows, p * kPanel, p * kPanel + cols);
          }
        }
      }
    }
  });
}

}  // namespace gexec::cpu
