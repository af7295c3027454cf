// The grouped GEMM (grouped_gemm.cu): gexec's own mixture-of-experts product, Y = act(alpha X W_g
// + bias_g) for the rows of X that each group (expert) g owns, as torch._grouped_mm with `offs`.
// The plan says what it refuses and why and how the work is tiled; the launch enqueues a small
// launch that checks the offsets and counts tiles, then the persistent tensor-core kernel. Pure
// declarations: g++ and nvcc both compile this header.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gexec/ir/dtype.hpp"
#include "gexec/ir/op.hpp"
#include "gexec/status.hpp"

namespace gexec::cuda {

// X [tokens, k] rowmajor, sorted by group; W [groups, k, n] rowmajor per group, or [groups, n, k]
// where trans_b (nn.Linear's layout); offsets int32 [groups], cumulative ends: group g owns rows
// offsets[g-1] .. offsets[g]-1 (offsets[-1] = 0), empty groups allowed; bias [groups, n]; Y
// [tokens, n] rowmajor, and its rows from offsets[groups-1] on, owned by no group, are zeros.
struct GroupedGemmPlan {
  int64_t tokens = 0, k = 0, n = 0;
  int groups = 0;
  bool trans_b = false;                     // W [G,N,K]
  DType in = DType::f16, out = DType::f16;  // X (and W); Y
  DType in_w = DType::f16;                  // W: in, or another f8 where X is f8 (e4m3 x e5m2)
  // f8 X and W with block scales (X [1,128], W [128,128] of each expert: DeepSeek-V3's recipe):
  // each k step's partial sums are scaled by X's row scale and W's block scale as they are
  // promoted (the FP8 WGMMA kernel only). Without them, f8 scales are tensor-wise, in alpha.
  bool block_scales = false;
  bool has_bias = false;
  DType bias = DType::f32;
  Act act = Act::none;
  float alpha = 1.0f;
  int sm_count = 132;  // for a persistent grid
  int cc = 0;          // the device's compute capability, major * 10 + minor (90: Hopper); 0: unknown
  bool mma_sync_only = false;  // the kernel cuda.grouped_gemm_mma (--kernel): never the WGMMA kernel

  // The kernel: WGMMA fed by TMA (grouped_gemm_sm90.cu, sm_90a: cc == 90, W [G,N,K], K a multiple
  // of 128 bytes, N % block_n == 0), or the portable mma.sync kernel (grouped_gemm.cu), which
  // `--kernel OP=cuda.grouped_gemm_mma` forces for comparison. f8 X and W run on WGMMA only (FP8
  // tensor cores, partial sums promoted to f32 every 128 of K); elsewhere the caller widens them.
  bool wgmma = false;

  // The tiling (plan_grouped_gemm fills it). A tile is block_m rows of one group by block_n
  // columns; a CTA of `warps` warps computes it, block_k of K per step (128 bytes of a row on
  // WGMMA: 64 16-bit values or 128 f8) through `stages` shared memory buffers. The tiles of one group go n-block by n-block over panels of m_panel m-tiles
  // (grouped_gemm.cu says why). The WGMMA kernel: 128 x 128 or 128 x 256 tiles, 64 of K a step,
  // 12 warps (a TMA producer warpgroup, two WGMMA consumer warpgroups), one CTA an SM; f8: 128 x 128
  // tiles, 128 of K a step.
  int block_m = 0, block_n = 0, block_k = 0, stages = 0, warps = 0;
  int m_panel = 0;
  int ctas_per_sm = 0;   // resident CTAs per SM the kernel is built for (its __launch_bounds__)
  int64_t n_tiles = 0;   // ceil(n / block_n)
  int64_t max_tiles = 0; // the most tiles any valid offsets give: (tokens / block_m + min(groups, tokens)) * n_tiles
  int grid = 0;          // persistent CTAs: sm_count * ctas_per_sm, no more than max_tiles, at least 1

  std::string rejected;  // non-empty: this kernel cannot run the shape, and why

  // Dynamic shared memory per CTA: the stages' X and W tiles (the WGMMA kernel adds 1 KiB of
  // alignment slack and its barriers).
  int64_t smem_bytes() const {
    return int64_t(stages) * (int64_t(block_m) * block_k + int64_t(block_k) * block_n) * dtype_size(in);
  }
  // Device scratch: the groups' cumulative tile counts (int32 [groups]), then the first row that no
  // group owns (int32), rounded up to 16 bytes.
  int64_t workspace_bytes() const { return ((int64_t(groups) + 1) * 4 + 15) / 16 * 16; }
};

// Fills the tiling and `rejected` (dtypes, K and N multiples of 8 and below 2^24, groups >= 1,
// tokens and the most tiles within int32, sm_count >= 1; f8 only where the WGMMA kernel fits).
GroupedGemmPlan plan_grouped_gemm(GroupedGemmPlan shape);

// A one-line description for reports: dtypes, layout, tile, stages, grid.
std::string describe(const GroupedGemmPlan& p);

struct GroupedOperands {
  const void* x = nullptr;
  const void* w = nullptr;
  const int32_t* offsets = nullptr;  // int32 [groups], device
  const void* bias = nullptr;        // [groups, n], where plan.has_bias
  void* y = nullptr;
  void* workspace = nullptr;         // plan.workspace_bytes()
  const float* sx = nullptr;         // block scales: X's S [tokens, k / 128]
  const float* sw = nullptr;         //   and W's [groups, n / 128, k / 128] (W [G,N,K])
  int32_t* status = nullptr;         // 2 ints, device: 0, or 1 + the first bad group and its offset
};

// Enqueues the product on `stream` (no synchronisation, no allocation: capturable in a CUDA graph).
// Bad offsets (decreasing, negative or beyond tokens) are data: nothing is read or written out of
// bounds, status[0] = 1 + the smallest bad g, status[1] = offsets[g], and Y's content is unspecified.
Status launch_grouped_gemm(const GroupedGemmPlan& p, const GroupedOperands& o, cudaStream_t stream);

}  // namespace gexec::cuda
