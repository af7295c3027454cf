// How a decode-shaped product (M <= 128 rows against a large weight) runs on gexec's own skinny
// GEMM (skinny_gemm.cu): what it refuses and why, which of its two paths runs it (tensor-core MMA
// for a weight stored [N,K], f32 FMAs for [K,N]), how the work is cut into CTAs (column blocks,
// row tiles, K splits), and the order in which the partial sums are added. Pure logic, no
// CUDA headers: the kernel table's check (skinny_caps.cpp), the cost model (skinny_cost.hpp) and
// the kernel itself read it, so that the dry-run says what the run does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/graph.hpp"

namespace gexec::cuda {

// The kernel's fixed geometry (skinny_gemm.cu launches with these).
struct SkinnyGeometry {
  static constexpr int kThreads = 256;       // per CTA: 8 warps
  static constexpr int kMaxM = 128;          // the rows it takes; above, the product is matrix-bound
  static constexpr int kRowTile = 8;         // rows per CTA where M > 8 (accumulators per thread: 8 x 8)
  static constexpr int kVec = 8;             // weight elements per 16-byte load (f16/bf16)
  static constexpr int kColsKN = 256;        // [K,N] weight: columns per CTA (32 lanes x 8)
  static constexpr int kKLanesKN = kThreads / (kColsKN / kVec);  // [K,N]: threads along K per column vector (8)
  static constexpr int kKStep = 256;         // a split covers a multiple of this many K (one warp-wide 16-byte pass of [N,K])
  static constexpr int kMaxStagedK = 1024;   // activations staged per CTA: row tile x this many f32 (32 KiB at 8 rows)
  // The tensor-core path ([N,K] weight, mma.sync m16n8k16): a lane's 16-byte load holds 8
  // consecutive K of one weight row, 4 lanes 32 K, 8 lane groups 8 rows: one n-tile of the MMA.
  static constexpr int kMmaRows = 16;        // rows of A per m-tile (M is padded to whole m-tiles)
  static constexpr int kMmaCols = 16;        // columns (weight rows) per CTA: two n-tiles of 8
  static constexpr int kMmaChunk = 32;       // K per warp-wide load of an n-tile
  static constexpr int kWarps = kThreads / 32;  // the CTA's warps split its K range in chunks
  static constexpr int kMmaMaxTiles = 4;     // m-tiles per row tile (64 rows: 128 registers a thread)
  // 32-K chunks per pass of a warp's loads, all issued before its MMAs: 4 with one m-tile, 2 with
  // more, whose activation fragments take the registers.
  static constexpr int mma_unroll(int m_tiles) { return m_tiles == 1 ? 4 : 2; }
  static constexpr int kMmaCtasPerSm = 2;    // resident CTAs per SM (its __launch_bounds__)
  // The Hopper path ([N,K] weight on an sm_90 device: wgmma.mma_async fed by TMA,
  // skinny_gemm_sm90.cu). A CTA takes a block of 32, 64 or 128 weight rows (WGMMA's N) and all of
  // K, in steps of one 128-byte swizzle row; its rows of A are WGMMA's M, 64 a consumer warpgroup
  // (one where M <= 64, two above); the rows past M are never loaded, their results not stored.
  static constexpr int kWgStepK = 64;           // K per pipeline stage (16-bit values)
  // M from which an sm_90 device takes this path; below, mma.sync with the weight loaded straight
  // into registers was faster (H100, cold weights, 1 x 4096 x 4096: 14.46 us in an earlier run,
  // this path 20.59; 16 rows: 15.80 and 19.11).
  static constexpr int kWgMinM = 17;
  static constexpr int kWgSmemPerSm = 220 * 1024;  // the stages' share of an SM's 227 KiB of shared memory
  static constexpr int kWgMaxStages = 16;
  static constexpr int wg_stage_bytes(int block_n, int row_tile) { return (block_n + row_tile) * 128; }
};

// The launch of one product: the CTAs, the K splits, and where the partial sums go.
struct SkinnyPlan {
  std::string rejected;  // empty: the kernel runs it
  GemmShape shape;
  DType ab = DType::f16, c = DType::f16, bias = DType::f16, res = DType::f16;
  Act act = Act::none;
  bool nk = false;       // the weight is stored [N,K] (trans_b): K runs along its rows
  bool mma = false;      // a tensor-core path (nk): row_tile is 16 x m-tiles (1, 2 or 4) on mma.sync
  bool wgmma = false;    // the Hopper path (nk, sm_90): row_tile 64 or 128, row_tiles 1, K not split
  int block_n = 0;       // the Hopper path: weight rows per CTA (32, 64 or 128)
  int stages = 0;        // the Hopper path: its ring of shared-memory buffers
  bool pdl = false;      // launched as a programmatic dependent (sm_90: pdl.cuh)
  int mma_warps_n = 1;   // its CTA's warps along N (1 or 8; the rest split the CTA's K range)
  int row_tile = 1;      // rows of A per CTA (1, 2, 4 or 8; mma.sync 16, 32 or 64; WGMMA 64 or 128)
  int64_t row_tiles = 1; // ceil(M / row_tile)
  int64_t col_blocks = 1;
  int64_t splits = 1;    // K cut into this many consecutive parts of split_k elements (the last may be shorter)
  int64_t split_k = 0;
  int64_t ctas() const { return row_tiles * col_blocks * splits; }
  // f32 partial sums [splits][M][N] in a workspace, added by a second launch in split order.
  int64_t workspace_bytes() const { return splits > 1 ? splits * shape.m * shape.n * 4 : 0; }
};

// The summation order the kernel declares (for the check and the reader): every output element is
// a sum of K products in f32. Split s adds k in [s * split_k, (s + 1) * split_k): each thread adds
// its own strided subsequence in increasing k, the threads' sums are then added in a fixed order
// (lane order for [K,N], a butterfly of shuffles for [N,K]), and the splits' sums in increasing s,
// after the product is complete, before alpha, beta * R, the bias and the activation. Any such
// order passes each product through at most K f32 roundings, so the check's f32 bound over the
// whole of K (Precision's default) covers it; the order is fixed, so runs are bit-identical.
inline std::string skinny_order(const SkinnyPlan& p) {
  if (p.wgmma)
    return "tensor cores (wgmma m64n" + std::to_string(p.block_n) + "k16, f32 accumulation); all of K in one CTA, " +
           "its 64-K steps in increasing order";
  if (p.mma)
    return "tensor cores (mma m16n8k16, f32 accumulation); K in " + std::to_string(p.splits) + " split(s) of " +
           std::to_string(p.split_k) + ", each warp's 32-K chunks in increasing order" +
           (p.mma_warps_n == 1 ? ", the CTA's 8 warps' sums in warp order" : "") +
           (p.splits > 1 ? ", the splits' partial sums in split order by a second launch" : "");
  return "f32 sums; K in " + std::to_string(p.splits) + " split(s) of " + std::to_string(p.split_k) +
         (p.splits > 1 ? ", partial sums added in split order by a second launch" : "");
}

namespace skinny_detail {
inline bool float_type(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; }
}  // namespace skinny_detail

// The CTAs per SM the grid aims at: enough loads in flight to keep HBM busy.
constexpr int64_t kSkinnyCtasPerSm = 4;

// `sm_count` 0: not known (a dry-run without a device); the H200's 132 is assumed. `cc`: the
// device's compute capability (major * 10 + minor); 90 takes the Hopper path for [N,K].
inline SkinnyPlan plan_skinny(const Graph& g, const Op& op, int sm_count, int cc) {
  SkinnyPlan p;
  const auto s = gemm_shape(g, op, &p.rejected);
  if (!s) {
    if (p.rejected.empty()) p.rejected = "not a product";
    return p;
  }
  p.shape = *s;
  p.pdl = cc >= 90;
  using G = SkinnyGeometry;
  const Tensor& a = g.tensor(op.inputs[0]);
  const Tensor& b = g.tensor(op.inputs[1]);
  const Tensor& c = g.tensor(op.outputs[0]);
  auto refuse = [&](std::string why) {
    p.rejected = std::move(why);
    return p;
  };
  if (s->m < 1 || s->n < 1 || s->k < 1) return refuse("an empty product (M, N or K is 0)");
  if (s->batch != 1) return refuse("batched products are not supported (one weight, one product)");
  if (s->m > G::kMaxM)
    return refuse("M " + std::to_string(s->m) + " is above " + std::to_string(G::kMaxM) +
                  ": the product is bound by arithmetic there, not by reading the weight");
  if (a.dtype != b.dtype || (a.dtype != DType::f16 && a.dtype != DType::bf16))
    return refuse("A " + std::string(dtype_name(a.dtype)) + " and B " + std::string(dtype_name(b.dtype)) +
                  ": it takes f16 x f16 or bf16 x bf16");
  if (!skinny_detail::float_type(c.dtype)) return refuse("output " + std::string(dtype_name(c.dtype)) + ": it writes f16, bf16 or f32");
  if (s->trans_a || s->layout_a != Layout::rowmajor) return refuse("A must be rowmajor and not transposed (it is staged row by row)");
  if (s->layout_c != Layout::rowmajor) return refuse("C must be rowmajor");
  if (s->layout_b != Layout::rowmajor) return refuse("B must be rowmajor ([K,N], or [N,K] with trans_b)");
  p.nk = s->trans_b;
  // 16-byte loads of the weight need rows of whole 16-byte vectors (the arena aligns the start).
  const int64_t row = p.nk ? s->k : s->n;
  if (row % G::kVec != 0)
    return refuse(std::string("the weight's rows (") + (p.nk ? "K" : "N") + " = " + std::to_string(row) +
                  ") are not a multiple of 8 elements: its 16-byte loads need them to be");
  if (s->has_bias) {
    p.bias = g.tensor(op.inputs[2]).dtype;
    if (!skinny_detail::float_type(p.bias)) return refuse("bias " + std::string(dtype_name(p.bias)) + ": it reads f16, bf16 or f32");
  }
  if (s->has_residual) {
    const Tensor& r = g.tensor(op.inputs.back());
    p.res = r.dtype;
    if (r.layout != Layout::rowmajor) return refuse("the residual must be rowmajor");
    if (!skinny_detail::float_type(p.res)) return refuse("residual " + std::string(dtype_name(p.res)) + ": it reads f16, bf16 or f32");
  }
  p.ab = a.dtype;
  p.c = c.dtype;
  p.act = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
  const int64_t sms = sm_count > 0 ? sm_count : 132;

  if (p.nk && cc == 90 && s->m >= G::kWgMinM) {
    // Hopper: the widest block of weight rows (128, 64, 32) that still gives every SM a CTA, so
    // that K need not be split (no partial sums to add); as many stages as the shared memory of
    // the CTAs an SM then holds (one or two) takes, up to 16.
    if (s->n > INT32_MAX || s->k > INT32_MAX) return refuse("N and K must be below 2^31 (TMA's coordinates)");
    p.mma = p.wgmma = true;
    p.row_tile = s->m <= 64 ? 64 : 128;
    p.row_tiles = 1;
    p.block_n = 128;
    while (p.block_n > 32 && (s->n + p.block_n - 1) / p.block_n < sms) p.block_n /= 2;
    p.col_blocks = (s->n + p.block_n - 1) / p.block_n;
    p.splits = 1;
    p.split_k = s->k;
    const int64_t per_sm = std::clamp<int64_t>((p.col_blocks + sms - 1) / sms, 1, 2);
    p.stages = int(std::clamp<int64_t>(G::kWgSmemPerSm / per_sm / G::wg_stage_bytes(p.block_n, p.row_tile), 2,
                                       G::kWgMaxStages));
    return p;
  }
  if (p.nk) {
    // Tensor cores (mma.sync, sm_80 on): row tiles of whole m-tiles (1, 2 or 4: the kernel is
    // compiled for these). Up to 32 rows, CTAs of 16 weight rows whose 8 warps split K: each warp then waits for few
    // passes of loads (with the 8 warps along N at 32 rows, each warp took a quarter of K alone
    // and the product took twice as long as at 16 rows). At 64 rows the activations that each
    // column block reads would outweigh the weight, so 8 warps side by side along N share them.
    // K is split across the GPU only where the column blocks alone leave SMs without a CTA (in
    // whole kKStep steps: a chunk per warp at least).
    p.mma = true;
    int tiles = 1;
    while (tiles * G::kMmaRows < s->m && tiles < G::kMmaMaxTiles) tiles *= 2;
    p.row_tile = tiles * G::kMmaRows;
    p.row_tiles = (s->m + p.row_tile - 1) / p.row_tile;  // two above 64 rows: the weight then read twice
    p.mma_warps_n = tiles <= 2 ? 1 : G::kWarps;
    const int64_t width = int64_t(p.mma_warps_n) * G::kMmaCols;
    p.col_blocks = (s->n + width - 1) / width;
    const int64_t steps = std::max<int64_t>(1, (s->k + G::kKStep - 1) / G::kKStep);
    const int64_t base = p.row_tiles * p.col_blocks;
    const int64_t splits = std::clamp<int64_t>((sms + base - 1) / base, 1, steps);
    const int64_t per = (steps + splits - 1) / splits;
    p.split_k = per * G::kKStep;
    p.splits = (s->k + p.split_k - 1) / p.split_k;
    if (p.splits > 65535)
      return refuse("K = " + std::to_string(s->k) + " needs more than 65535 CTAs along one grid dimension");
    return p;
  }

  // Rows per CTA: the power of two at or above M up to kRowTile (the kernel is compiled for 1, 2, 4, 8).
  p.row_tile = 1;
  while (p.row_tile < s->m && p.row_tile < G::kRowTile) p.row_tile *= 2;
  p.row_tiles = (s->m + p.row_tile - 1) / p.row_tile;
  p.col_blocks = (s->n + G::kColsKN - 1) / G::kColsKN;
  // Split K until the grid has kSkinnyCtasPerSm CTAs per SM, in whole kKStep steps, and no split
  // stages more activations than a CTA's shared memory holds.
  const int64_t steps = std::max<int64_t>(1, (s->k + G::kKStep - 1) / G::kKStep);
  const int64_t base = p.row_tiles * p.col_blocks;
  int64_t splits = std::clamp<int64_t>((kSkinnyCtasPerSm * sms + base - 1) / base, 1, steps);
  splits = std::max(splits, (s->k + G::kMaxStagedK - 1) / G::kMaxStagedK);
  const int64_t per = (steps + splits - 1) / splits;  // kKStep steps per split
  p.split_k = per * G::kKStep;
  p.splits = (s->k + p.split_k - 1) / p.split_k;
  if (p.split_k > G::kMaxStagedK) return refuse("internal: a split of " + std::to_string(p.split_k) + " K exceeds the staging");
  if (p.col_blocks > 65535 || p.splits > 65535)  // the grid's y and z extents
    return refuse("N = " + std::to_string(s->n) + ", K = " + std::to_string(s->k) + " need more than 65535 CTAs along one grid dimension");
  return p;
}

}  // namespace gexec::cuda
