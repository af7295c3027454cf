// A product against a constant B packed once, for the CPU backend: B's columns laid out in panels
// of 32, row after row of K, so that each step of the inner loop reads two aligned 16-float vectors
// and every thread streams its own panels straight from memory. OpenBLAS packs B again in every
// call; with few rows (M = 64 tokens against an 11008 x 4096 weight) that packing is a large part
// of the call, which is where onnxruntime (whose MLAS packs constant weights once) was ahead.
// AVX-512F only: `available()` says whether this CPU has it, and the caller keeps OpenBLAS where not.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace gexec::cpu {

// What to do with a block of C once it holds its final f32 values: rows [r0, r1), columns
// [c0, c1) (the activation and the rounding to C's dtype).
using PackedFinish = std::function<void(int64_t r0, int64_t r1, int64_t c0, int64_t c1)>;

// What PackedB::multiply adds to the product, and what it does with each block of C then.
struct PackedEpilogue {
  const float* res = nullptr;   // R, row-major m x n with C's leading dimension, or none
  float beta = 0;               // R's factor
  const float* bias = nullptr;  // n values along the rows, or none
  const PackedFinish* finish = nullptr;
};

class PackedB {
 public:
  static constexpr int64_t kPanel = 32;  // columns per panel: two AVX-512 vectors

  // Whether this CPU runs the packed kernel (AVX-512F).
  static bool available();

  // Whether a product of `rows` rows of A runs packed rather than on OpenBLAS: up to 256 rows. On
  // the H200 machine's Xeon (16 threads, gexec_bench_cpu, each product timed alone, two runs),
  // 64 to 256 rows against 4096 x 4096, 11008 x 4096 and 4096 x 11008 weights took 0.28x-0.82x
  // OpenBLAS's time; 512 and 1024 rows against 11008 x 4096 0.96x-1.01x, left to OpenBLAS.
  static bool suits(int64_t rows) { return rows <= 256; }

  // Packs B, logical K x N, whose element (k, n) is b[k * row_stride + n * col_stride]; columns past
  // N in the last panel are zeros. Threaded over the panels.
  PackedB(const float* b, int64_t k, int64_t n, int64_t row_stride, int64_t col_stride);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

  using Finish = PackedFinish;
  using Epilogue = PackedEpilogue;

  // C[m, n] = alpha * A B + beta * R + bias for row-major A (m x K, leading dimension lda) and
  // row-major C (ldc), then `finish` on each block of C, by the thread that computed it, as it
  // completes it. Each element is one f32 FMA chain over k in ascending order, then alpha, R and
  // the bias in that order (graph-format.md's). Threaded over panels and rows.
  // Beyond K = 2048 A is copied into row blocks first, in a buffer kept between calls: not for two
  // threads at once.
  void multiply(const float* a, int64_t lda, int64_t m, float alpha, float* c, int64_t ldc,
                const Epilogue& epilogue = {});

 private:
  struct Free {
    void operator()(float* p) const;
  };
  int64_t k_ = 0, n_ = 0, panels_ = 0;
  std::unique_ptr<float[], Free> data_;
  std::unique_ptr<float[], Free> a_blocks_;  // A in row blocks, kept for the next call
  int64_t a_capacity_ = 0;                  // floats in a_blocks_
};

}  // namespace gexec::cpu
