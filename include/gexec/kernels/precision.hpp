// The arithmetic a kernel declares for its products (Precision): part of what a kernel is, so the
// executor can merge its kernels' declarations without knowing the check; the check's bound
// (verify/bound.hpp) follows it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gexec {

// Hopper's FP8 tensor cores keep the partial sums of a K block in fewer bits than f32 (about 14
// significant bits are reported) and, with fast accumulation, promote them to f32 less often: a
// unit roundoff of 2^-13 for the accumulation term of the bound. The H200 showed it without fast
// accumulation too (a 32x48x64 product with f32 output off by 7e-4 relative), so the cuBLASLt FP8
// kernel declares it (Precision::accumulate_u) for every FP8 product; scripts/gpu_fp8.sh prints
// the error kept at K = 1024 to 16384, fast accumulation on and off.
inline constexpr double kFp8FastAccumU = 0x1p-13;
// Without fast accumulation the partial sums are promoted to f32 at a fixed interval of K: the
// error the H200 kept did not grow with K (rel_fro 1.27e-4 to 1.28e-4 at K = 1024, 4096 and
// 16384; with fast accumulation 5.4e-4, 1.3e-3, 2.0e-3, growing as sqrt(K)). Those figures fit
// blocks of about 64 at a rounding unit near 2^-14.6; the kernel declares blocks of 128 at
// 2^-13 (Precision::accumulate_block), which bounds intervals up to four times longer.
inline constexpr int64_t kFp8PromotionBlock = 128;

// The arithmetic a kernel declares for its products; the reference's bound follows it.
struct Precision {
  // Unit roundoff of the accumulator: f32, 2^-24, for every product gexec runs today (f16, bf16
  // and f32 inputs alike, on cuBLASLt and OpenBLAS). FP8 fast accumulation (issue 16) belongs
  // here: set it to what the fast accumulator really keeps, and the accumulation term follows.
  double accumulate_u = 0x1p-24;
  // The accumulator at accumulate_u sums blocks of this many K terms, each block's sum then added
  // into an f32 total (FP8 tensor cores without fast accumulation); 0: the whole of K at once.
  int64_t accumulate_block = 0;
  // f32 operands rounded to TF32 (11 significant bits, round to nearest) before the products:
  // cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32. f16 and bf16 operands are exact in TF32.
  bool tf32 = false;
  // GELU's tanh evaluated approximately, with a relative error of at most gelu_tanh_rel of tanh
  // (0: tanhf / erff, within f32 ulps, as the reference's own kGeluF32Ulps term covers).
  // cuBLASLt's GELU / GELU_BIAS epilogues declare it (cuda::kCublasLtGeluTanhRel).
  double gelu_tanh_rel = 0;
  // The product (alpha * accumulator) rounded to the output dtype once before its bias and
  // activation are applied, a rounding the graph's single GEMM_BIAS_ACT does not have: the
  // unfused fallback (product stored, then a separate bias / activation kernel) and cuBLASLt's
  // GELU epilogues declare it.
  bool product_rounded = false;

  // The union of two declarations: a graph's bound follows every kernel that ran in it.
  Precision& merge(const Precision& o) {
    // The coarser accumulator wins; between equal ones, the longer block (0, the whole of K, the
    // longest). The bound's f32 term over the whole of K (block_accumulation_var) stays in any
    // case, so a block model never bounds less than an f32 accumulator would.
    if (o.accumulate_u > accumulate_u) {
      accumulate_u = o.accumulate_u;
      accumulate_block = o.accumulate_block;
    } else if (o.accumulate_u == accumulate_u) {
      accumulate_block =
          accumulate_block == 0 || o.accumulate_block == 0 ? 0 : std::max(accumulate_block, o.accumulate_block);
    }
    tf32 = tf32 || o.tf32;
    gelu_tanh_rel = std::max(gelu_tanh_rel, o.gelu_tanh_rel);
    product_rounded = product_rounded || o.product_rounded;
    return *this;
  }
};

// What an FP8 product on Hopper's tensor cores accumulates in: 2^-13 over the whole of K with
// fast accumulation, per block of kFp8PromotionBlock without. The cuBLASLt FP8 kernel declares
// it; `gexec check`, which has no kernel to ask, assumes it for graphs with f8 products.
inline Precision fp8_tensor_core_precision(bool fast_accum) {
  Precision p;
  p.accumulate_u = kFp8FastAccumU;
  p.accumulate_block = fast_accum ? 0 : kFp8PromotionBlock;
  return p;
}

}  // namespace gexec
