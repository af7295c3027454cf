// The grouped GEMM's Hopper main launch: Y[r,:] = act(alpha X[r,:] W_g + bias_g) with
// wgmma.mma_async (sm_90a) reading shared memory that TMA (cp.async.bulk.tensor) fills, for W
// stored [G,N,K] (nn.Linear's layout), K a multiple of 128 bytes and N % block_n == 0
// (grouped_sm90_unfit); X and W f16, bf16, or f8 (e4m3 or e5m2 each: FP8 tensor cores).
// grouped_gemm.cu's prep launch (offsets checked, tile_end: the groups' cumulative tile counts
// for block_m 128 and this plan's n_tiles, then the tail start) runs first; this kernel walks the
// same tile map as grouped_main there (persistent grid, binary search in tile_end, panels of
// m_panel m-tiles n-block by n-block), but for a short last wave, whose tiles it takes in halves
// (grouped_work.hpp), and zeroes the rows no group owns in the same way.
//
// A CTA is 3 warpgroups (384 threads), warp-specialized:
//  - warpgroup 0, the producer: one thread issues the TMA loads of each k step (128 bytes of K:
//    64 16-bit values, 128 f8), X's 128-row box (rows m0.., k) and W's block_n-row box (rows
//    g N + n0.., k), into a ring of `stages`
//    shared memory buffers, each guarded by two mbarriers: `full` (armed with the bytes the two
//    loads bring, mbarrier.arrive.expect_tx; the loads complete it, complete_tx) and `empty`
//    (the 8 consumer warps arrive when their WGMMAs no longer read it). It gives its registers
//    away (setmaxnreg.dec 40).
//  - warpgroups 1 and 2, the consumers (setmaxnreg.inc 232): warpgroup c computes rows
//    64c .. 64c + 63 of the 128-row tile by all block_n columns (or, where all of them lie past
//    the group's end, only passes the stages on), with
//    wgmma.mma_async.m64n{block_n}k16 (k32 for f8), f32 accumulators in registers (block_n / 2 a
//    thread), four per k step, one k step's group kept in flight (wgmma.wait_group 1) before the
//    stage it read is released. f8 (block_n 128): each k step's four sum into a partial set,
//    added to the accumulators once complete (wait_group 0) -- FP8 tensor cores keep the partial
//    sums in fewer bits than f32, and this bounds how far they run (128 of K). With block scales
//    (X 1 x 128, W 128 x 128: a k step is one block of each, a tile's 128 columns one of W's)
//    the set is multiplied by its row's X scale times the tile's W scale as it is added. Then the
//    epilogue from the registers: alpha, bias, activation in f32, rounded once. A 16-bit Y leaves
//    through the warpgroup's staging buffer in shared memory and TMA stores (store_tile_tma),
//    which drain while the next tile's products run; where the group ends inside the
//    warpgroup's 64 rows (the rows past its end belong to the next group, or lie past T, where
//    TMA filled zeros), and for an f32 Y, each thread stores its values straight to global memory.
//    On an H100, 4096 x 16384 x 4096 f16 spent about a tenth of its warps' samples (ncu) in the
//    direct stores.
// The producer runs ahead into the next tile's k steps while the consumers store.
// Why the consumers split each tile rather than take whole tiles in turn (ping-pong, which hides
// one's epilogue under the other's products): a whole 128 x 256 tile is 256 accumulators a
// thread, more than a thread has, so ping-pong needs 128-column tiles, and on an H100 it lost
// every A/B against the split form at the plan's tiles, by 2% to 28% (docs/performance.md, the
// grouped GEMM's section).
//
// Shared memory: stages x (X tile 16 KiB, W tile block_n x 128 B), then the two consumers'
// staging buffers for Y (16 KiB each: 64 rows x 128 columns of 16 bits), each buffer 1024-byte
// aligned, in TMA's 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B): row r (128 bytes of k) at
// r * 128, its 16-byte chunk c at chunk c ^ (r % 8) -- the XOR of address bits
// [4,7) with bits [7,10), hence the 1024-byte alignment. WGMMA reads the same layout through its
// matrix descriptors (PTX ISA, "Matrix Descriptor Format" of the asynchronous warpgroup MMA):
//   bits  0-13: start address >> 4
//   bits 16-29: leading dimension byte offset >> 4 -- unused for K-major swizzled layouts whose k
//               extent per instruction (32 bytes: 16 16-bit values, 32 f8) lies within the
//               swizzle width: 1
//   bits 32-45: stride dimension byte offset >> 4 -- between consecutive 8-row core matrix
//               groups along M (or N): 8 rows x 128 B = 1024 B
//   bits 49-51: base offset: 0, the buffers being 1024-byte aligned
//   bits 62-63: swizzle mode, 1 = 128-byte swizzle
// Both operands are K-major (X [T,K] rows; W [N,K] rows are B's columns): imm-trans-a = imm-trans-b
// = 0 (f8 WGMMA has no transpose: K-major is its only layout). The instruction's slice kk of a
// stage starts at the buffer + 32 kk bytes: the hardware applies
// the swizzle XOR to the addresses it forms, so a start address inside the 128-byte row reads the
// chunks (2 kk + c) ^ (r % 8) that TMA wrote (the usual way to step K within a swizzle atom).
//
// The accumulator fragment of wgmma .m64nNk16 (and k32) with f32 D (PTX ISA, "Register Fragments ... for
// matrix D"): thread t of the warpgroup (warp w = t / 32, lane l) holds d[4j + 2h + e] = D[16w +
// l/4 + 8h][8j + 2(l%4) + e], j < N/8, h, e in {0,1}: m16n8's C layout repeated along N.
#include <cuda.h>  // CUtensorMap and its enums: types only, libcuda is not linked
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "check.hpp"
#include "grouped_fit.hpp"
#include "grouped_gemm.hpp"
#include "grouped_gemm_common.cuh"
#include "grouped_gemm_sm90.hpp"
#include "grouped_work.hpp"
#include "sm90_async.cuh"
#include "tma_map.hpp"

namespace gexec::cuda {
namespace {

constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kBM = 128;
constexpr int kBytesK = kTmaRowBytes;  // a k step: one 128-byte swizzle row, 64 16-bit values or 128 f8
static_assert(kBytesK == kWgmmaBytesK, "the rule the dry-run reads (grouped_fit.hpp) must match the kernel");
constexpr int kConsumerWarps = 8;
constexpr int kAlign = 1024;   // the 128-byte swizzle's period
constexpr const char* kWho = "grouped GEMM (WGMMA)";

constexpr int stages_for_bn(int bn) { return bn == 256 ? 4 : 6; }  // 192 KiB of the 227 an SM gives a CTA
constexpr int stage_bytes(int bn) { return (kBM + bn) * kBytesK; }
// A consumer warpgroup's staging of its 64 rows of Y, 128 columns of 16 bits at a time, for the
// TMA stores: two boxes of 64 rows x 128 bytes in the 128-byte swizzle.
constexpr int kYBox = 64 * kTmaRowBytes;
constexpr int kYBytes = 2 * kYBox;
// The dynamic shared memory a launch asks for: the stages, the two staging buffers, the alignment
// slack, the barriers (230,496 bytes at most, of the 232,448 an H100 or H200 gives a CTA).
constexpr int smem_for_bn(int bn) {
  return stages_for_bn(bn) * stage_bytes(bn) + 2 * kYBytes + kAlign + 2 * stages_for_bn(bn) * 8;
}
static_assert(smem_for_bn(128) <= 232448 && smem_for_bn(256) <= 232448, "beyond what a Hopper SM gives a CTA");

struct Sm90Args {
  const int32_t* offsets;
  const float *sx, *sw;  // block scales (null: none): X's [tokens, ktiles], W's [groups, n / 128, ktiles]
  const void* bias;
  void* y;
  const int32_t* tile_end;
  int64_t tokens, n;
  int groups, n_tiles, m_panel, ktiles;
  float alpha;
  DType out, bias_t;
  Act act;
  bool has_bias;
  bool tma_y;  // Y is f16 or bf16, 16-byte aligned, and map_y describes it: full tiles leave by TMA
};

// A tile's place: group, first row (of X and Y), rows of the group in it (>= 1), first column.
struct Tile {
  int g;
  int64_t m0;
  int rows;
  int n0;
};

// The tile map of grouped_main (grouped_gemm.cu), for block_m = 128.
__device__ __forceinline__ Tile locate(const Sm90Args& p, int tile, int bn) {
  int lo = 0, hi = p.groups - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (__ldg(p.tile_end + mid) > tile) hi = mid;
    else lo = mid + 1;
  }
  Tile t;
  t.g = lo;
  const int before = lo > 0 ? __ldg(p.tile_end + lo - 1) : 0;
  const int local = tile - before;
  const int m_tiles = (__ldg(p.tile_end + lo) - before) / p.n_tiles;
  const int row0 = lo > 0 ? __ldg(p.offsets + lo - 1) : 0, row_end = __ldg(p.offsets + lo);
  const int span = p.m_panel * p.n_tiles;
  const int panel = local / span;
  const int in_panel = min(p.m_panel, m_tiles - panel * p.m_panel);
  const int r = local - panel * span;
  const int n_tile = r / in_panel, m_tile = panel * p.m_panel + r % in_panel;
  t.m0 = int64_t(row0) + int64_t(m_tile) * kBM;
  t.rows = min(kBM, int(row_end - t.m0));
  t.n0 = n_tile * bn;
  return t;
}

// The unit's tile (grouped_work.hpp), or its half: rows 64h .. 64h + 63 of the tile as a tile
// of its own (rows <= 0: the tile had none there, nothing to do).
__device__ __forceinline__ Tile locate_unit(const Sm90Args& p, const GroupedWork& w, int unit, int bn) {
  const GroupedUnit u = grouped_unit(w, unit);
  Tile t = locate(p, u.tile, bn);
  if (u.half >= 0) {
    t.m0 += 64 * u.half;
    t.rows = min(64, t.rows - 64 * u.half);
  }
  return t;
}

#ifdef GEXEC_SM90A
template <class A, class B, int N>
__device__ __forceinline__ void wgmma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) {
  using E4 = __nv_fp8_e4m3;
  using E5 = __nv_fp8_e5m2;
  static_assert(sizeof(A) == 2 || N == 128, "f8 products take 128-column tiles");
  if constexpr (N == 256 && std::is_same_v<A, __nv_bfloat16>) GEXEC_WGMMA_256("m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0");
  else if constexpr (N == 256 && std::is_same_v<A, __half>) GEXEC_WGMMA_256("m64n256k16.f32.f16.f16", ", 1, 1, 0, 0");
  else if constexpr (std::is_same_v<A, __nv_bfloat16>) GEXEC_WGMMA_128("m64n128k16.f32.bf16.bf16", ", 1, 1, 0, 0");
  else if constexpr (std::is_same_v<A, __half>) GEXEC_WGMMA_128("m64n128k16.f32.f16.f16", ", 1, 1, 0, 0");
  // f8 (N = 128 only): no transpose operands, both K-major.
  else if constexpr (std::is_same_v<A, E4> && std::is_same_v<B, E4>) GEXEC_WGMMA_128("m64n128k32.f32.e4m3.e4m3", ", 1, 1");
  else if constexpr (std::is_same_v<A, E4> && std::is_same_v<B, E5>) GEXEC_WGMMA_128("m64n128k32.f32.e4m3.e5m2", ", 1, 1");
  else if constexpr (std::is_same_v<A, E5> && std::is_same_v<B, E4>) GEXEC_WGMMA_128("m64n128k32.f32.e5m2.e4m3", ", 1, 1");
  else GEXEC_WGMMA_128("m64n128k32.f32.e5m2.e5m2", ", 1, 1");
}
#endif  // GEXEC_SM90A

#ifdef GEXEC_SM90A
// One k step's four WGMMAs (128 bytes of K) on the stage at a (X) and b (W), into d: added to d,
// or d overwritten by the first where !accumulate.
template <class A, class B, int kBN>
__device__ __forceinline__ void mma_stage(float (&d)[kBN / 2], uint32_t a, uint32_t b, bool accumulate) {
  wgmma_fence();
  fence_regs(d);
#pragma unroll
  for (int kk = 0; kk < kBytesK / 32; ++kk)
    wgmma<A, B, kBN>(d, desc_sw128(a + kk * 32), desc_sw128(b + kk * 32), accumulate || kk != 0);
  wgmma_commit();
  fence_regs(d);
}

// The promotion of an f8 k step's partial sums (its WGMMAs complete) into the f32 total, each
// times its row's scale: s0 for the thread's first row (fragment index bit 1 clear), s1 for the
// row 8 below (1 and 1 without block scales).
template <int R>
__device__ __forceinline__ void promote(float (&acc)[R], float (&part)[R], float s0, float s1) {
  fence_regs(part);
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = fmaf(part[i], (i & 2) ? s1 : s0, acc[i]);
}

// A consumer thread's values of its row h (0: its first row, 1: the row 8 below), columns 8j and
// 8j + 1 from `at` in Y's elements, each rounded once, two a store.
template <class Y, int R>
__device__ __forceinline__ void store_row(void* y, int64_t at, const float (&acc)[R], int h) {
  Y* out = static_cast<Y*>(y) + at;
#pragma unroll
  for (int j = 0; j < R / 4; ++j) store_pair(out + 8 * j, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
}

// A consumer warpgroup's 64 rows of the tile (all of them the group's) out through its staging
// buffer `ys` and TMA stores, 128 columns at a time, so that the stores' traffic overlaps the
// next tile's products instead of holding the warpgroup: each thread writes its values rounded,
// two a 32-bit word, at row r (in the 128-byte swizzle: 16-byte chunk j ^ (r % 8), which puts a
// warp's 32 words of one instruction in 32 banks), then one thread issues the two boxes' stores.
// Before writing, that thread waits until the buffer's last stores have read it. ys is
// 1024-byte aligned, as the swizzle needs.
template <class Y, int R>
__device__ __forceinline__ void store_tile_tma(const float (&acc)[R], uint32_t ys, const CUtensorMap* map_y, int col0,
                                               int row0, int wg_id, bool leader, int wq, int lane) {
#pragma unroll
  for (int half = 0; half < R / 64; ++half) {
    if (leader) bulk_wait_read<0>();
    named_sync(wg_id, 128);
#pragma unroll
    for (int jj = 0; jj < 16; ++jj) {
      const int j = 16 * half + jj;
      const uint32_t box = ys + (jj >> 3) * kYBox + (((jj & 7) ^ (lane >> 2)) << 4) + (lane & 3) * 4;
#pragma unroll
      for (int h = 0; h < 2; ++h)
        st_shared_u32(box + (16 * wq + (lane >> 2) + 8 * h) * kTmaRowBytes, pack_pair(Y{}, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]));
    }
    fence_async_smem();
    named_sync(wg_id, 128);
    if (leader) {
      tma_store_2d(map_y, ys, col0 + 128 * half, row0);
      tma_store_2d(map_y, ys + kYBox, col0 + 128 * half + 64, row0);
      bulk_commit();
    }
  }
}
#endif  // GEXEC_SM90A

template <class A, class B, int kBN>
__global__ void __launch_bounds__(kThreads, 1)
    grouped_wgmma(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_w,
                  const __grid_constant__ CUtensorMap map_y, const Sm90Args p) {
#ifdef GEXEC_SM90A
  constexpr int kStages = stages_for_bn(kBN);
  constexpr int kABytes = kBM * kBytesK, kBBytes = kBN * kBytesK;
  constexpr int kAcc = kBN / 2;  // f32 accumulators a consumer thread holds
  constexpr bool kF8 = sizeof(A) == 1;
  constexpr int kStepK = kBytesK / int(sizeof(A));  // K's values a k step

  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + kAlign - 1) & ~uint32_t(kAlign - 1);
  const uint32_t s_a = base, s_b = base + kStages * kABytes;
  const uint32_t s_y = s_b + kStages * kBBytes;  // the consumers' staging buffers, kYBytes each
  const uint32_t full0 = s_y + 2 * kYBytes, empty0 = full0 + kStages * 8;  // 8 bytes a barrier
  const int tid = threadIdx.x, wg = tid >> 7;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, kConsumerWarps);
    }
    // The initialised barriers visible to the async proxy (TMA's complete_tx) and the other threads.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }

  // The rows no group owns: zeros (none where the offsets were bad: the tail starts at tokens).
  {
    const int64_t es = p.out == DType::f32 ? 4 : 2;
    const int64_t tail = p.tile_end[p.groups];
    const int64_t vecs = (p.tokens - tail) * p.n * es / 16;  // n % 128 == 0: whole 16-byte vectors
    uint4* y4 = reinterpret_cast<uint4*>(static_cast<char*>(p.y) + tail * p.n * es);
    for (int64_t i = int64_t(blockIdx.x) * kThreads + tid; i < vecs; i += int64_t(gridDim.x) * kThreads)
      y4[i] = make_uint4(0, 0, 0, 0);
  }
  __syncthreads();

  const GroupedWork work = grouped_work(p.tile_end[p.groups - 1], int(gridDim.x));

  if (wg == 0) {
    // The producer. 40 registers: the sum with 2 x 232 fits the 168 x 3 the launch allotted.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      tma_prefetch_map(&map_x);
      tma_prefetch_map(&map_w);
      int stage = 0;
      uint32_t phase = 0;
      for (int unit = blockIdx.x; unit < work.count; unit += gridDim.x) {
        const Tile t = locate_unit(p, work, unit, kBN);
        if (t.rows <= 0) continue;
        const int row_x = int(t.m0), row_w = t.g * int(p.n) + t.n0;  // the plan keeps both below 2^31
        for (int kt = 0; kt < p.ktiles; ++kt) {
          const uint32_t full = full0 + 8 * stage;
          mbar_wait(empty0 + 8 * stage, phase ^ 1);
          mbar_arrive_expect_tx(full, kABytes + kBBytes);
          tma_load_2d(s_a + stage * kABytes, &map_x, kt * kStepK, row_x, full);
          tma_load_2d(s_b + stage * kBBytes, &map_w, kt * kStepK, row_w, full);
          if (++stage == kStages) stage = 0, phase ^= 1;
        }
      }
    }
    return;
  }

  // The consumers.
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int c = wg - 1;  // rows 64c .. 64c + 63 of the tile
  const int lane = tid & 31, wq = (tid >> 5) & 3;
  int stage = 0;
  uint32_t phase = 0;
  float acc[kAcc];
  // f8: each k step's partial sums, promoted into acc (Hopper's FP8 accumulation keeps fewer bits
  // than f32: the promotion every 128 of K bounds what it loses, as Precision's block model says).
  float part[kF8 ? kAcc : 1];

  for (int unit = blockIdx.x; unit < work.count; unit += gridDim.x) {
    const Tile t = locate_unit(p, work, unit, kBN);
    if (t.rows <= 0) continue;
    if (t.rows <= 64 * c) {
      // All of this warpgroup's rows lie past the group's end (a group's last tile of 64 rows or
      // fewer: most tiles where groups are small) or past the half (grouped_work.hpp): their
      // products would never be stored, so it only passes the stages on, each once it is full
      // (so that its arrival counts in that fill's phase of `empty`, never the next). The other
      // warpgroup alone keeps the tensor cores busy, and the tile costs about half the arithmetic.
      for (int kt = 0; kt < p.ktiles; ++kt) {
        mbar_wait(full0 + 8 * stage, phase);
        if (lane == 0) mbar_arrive(empty0 + 8 * stage);
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
      continue;
    }
    if constexpr (kF8) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
      // Each k step's sums go to `part` and are added to acc once its WGMMAs complete (wait_group
      // 0: reading part while a later group may write it makes ptxas serialize every WGMMA). The
      // other consumer warpgroup's WGMMAs keep the tensor cores busy meanwhile.
      // Block scales: this thread's two rows' scales of X (rows past T read T - 1's: their sums
      // are not stored) times the tile's block of W, loaded before the step's wait.
      const int64_t r0 = t.m0 + 64 * c + 16 * wq + (lane >> 2);
      const int64_t last = p.tokens - 1;
      const float* sx0 = p.sx ? p.sx + (r0 < last ? r0 : last) * p.ktiles : nullptr;
      const float* sx1 = p.sx ? p.sx + (r0 + 8 < last ? r0 + 8 : last) * p.ktiles : nullptr;
      const float* sw = p.sw ? p.sw + (int64_t(t.g) * (p.n / kBN) + t.n0 / kBN) * p.ktiles : nullptr;
      for (int kt = 0; kt < p.ktiles; ++kt) {
        float s0 = 1.0f, s1 = 1.0f;
        if (sx0) {
          const float w = __ldg(sw + kt);
          s0 = __ldg(sx0 + kt) * w, s1 = __ldg(sx1 + kt) * w;
        }
        mbar_wait(full0 + 8 * stage, phase);
        mma_stage<A, B, kBN>(part, s_a + stage * kABytes + c * (64 * kBytesK), s_b + stage * kBBytes, false);
        wgmma_wait<0>();
        if (lane == 0) mbar_arrive(empty0 + 8 * stage);
        promote(acc, part, s0, s1);
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
    } else {
      int prev = 0;
      for (int kt = 0; kt < p.ktiles; ++kt) {
        mbar_wait(full0 + 8 * stage, phase);
        mma_stage<A, B, kBN>(acc, s_a + stage * kABytes + c * (64 * kBytesK), s_b + stage * kBBytes, kt != 0);
        if (kt > 0) {
          wgmma_wait<1>();  // k step kt - 1's WGMMAs are done: its stage may be refilled
          if (lane == 0) mbar_arrive(empty0 + 8 * prev);
        }
        prev = stage;
        if (++stage == kStages) stage = 0, phase ^= 1;
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (lane == 0) mbar_arrive(empty0 + 8 * prev);
    }

    // The epilogue, as grouped_main's: alpha X W in f32 (not fused with the bias add), + bias,
    // the activation, one rounding.
    const int col0 = t.n0 + 2 * (lane & 3);  // + 8j + e
    if (p.has_bias) {
      const int64_t bias0 = int64_t(t.g) * p.n + col0;
#pragma unroll
      for (int j = 0; j < kAcc / 4; ++j) {
        const float b0 = load_f32(p.bias, p.bias_t, bias0 + 8 * j), b1 = load_f32(p.bias, p.bias_t, bias0 + 8 * j + 1);
        acc[4 * j + 0] = __fmul_rn(p.alpha, acc[4 * j + 0]) + b0;
        acc[4 * j + 1] = __fmul_rn(p.alpha, acc[4 * j + 1]) + b1;
        acc[4 * j + 2] = __fmul_rn(p.alpha, acc[4 * j + 2]) + b0;
        acc[4 * j + 3] = __fmul_rn(p.alpha, acc[4 * j + 3]) + b1;
      }
    } else {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = __fmul_rn(p.alpha, acc[i]) + 0.0f;
    }
    activate_all(p.act, p.out != DType::f32, acc);
    if (p.tma_y && t.rows >= 64 * (c + 1)) {
      const uint32_t ys = s_y + c * kYBytes;
      const int row0 = int(t.m0) + 64 * c;  // below 2^31: grouped_sm90_unfit
      if (p.out == DType::bf16) store_tile_tma<__nv_bfloat16>(acc, ys, &map_y, t.n0, row0, 1 + c, (tid & 127) == 0, wq, lane);
      else store_tile_tma<__half>(acc, ys, &map_y, t.n0, row0, 1 + c, (tid & 127) == 0, wq, lane);
      continue;
    }
    // A tile that the group ends inside (its rows past the end belong to the next group), or f32.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rl = 64 * c + 16 * wq + (lane >> 2) + 8 * h;
      if (rl >= t.rows) continue;
      const int64_t at = (t.m0 + rl) * p.n + col0;
      if (p.out == DType::bf16) store_row<__nv_bfloat16>(p.y, at, acc, h);
      else if (p.out == DType::f16) store_row<__half>(p.y, at, acc, h);
      else store_row<float>(p.y, at, acc, h);
    }
  }
  // The shared memory stays until the stores have read it; done, their writes are the kernel's.
  if (p.tma_y && (tid & 127) == 0) bulk_wait<0>();
#endif  // GEXEC_SM90A
}

// ---- The host side.

template <class A, class B, int kBN>
Status launch_typed(const GroupedGemmPlan& plan, const CUtensorMap& mx, const CUtensorMap& mw, const CUtensorMap& my,
                    const Sm90Args& args, cudaStream_t stream) {
  auto* kernel = grouped_wgmma<A, B, kBN>;
  constexpr int smem = smem_for_bn(kBN);
  GEXEC_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const unsigned grid = unsigned(std::max(1, std::min(plan.grid, plan.sm_count)));
  kernel<<<grid, kThreads, size_t(smem), stream>>>(mx, mw, my, args);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return Status::success();
}

// The f8 instances: X's code by W's, 128-column tiles.
template <class A>
Status launch_f8(const GroupedGemmPlan& p, const CUtensorMap& mx, const CUtensorMap& mw, const CUtensorMap& my,
                 const Sm90Args& a, cudaStream_t stream) {
  return p.in_w == DType::f8e4m3 ? launch_typed<A, __nv_fp8_e4m3, 128>(p, mx, mw, my, a, stream)
                                 : launch_typed<A, __nv_fp8_e5m2, 128>(p, mx, mw, my, a, stream);
}

}  // namespace

std::string grouped_sm90_unfit(const GroupedGemmPlan& p) {
  const bool f8 = is_f8(p.in);
  if (!p.trans_b) return "W is [G,K,N] (the WGMMA kernel reads W [G,N,K])";
  if (p.in != DType::f16 && p.in != DType::bf16 && !f8) return "X and W are not f16, bf16 or f8";
  if (f8 ? !is_f8(p.in_w) : p.in_w != p.in) return "X and W differ in dtype (other than two f8)";
  if (p.block_scales && !f8) return "block scales on operands that are not f8";
  const int64_t step = wgmma_step_k(p.in);  // kBytesK of p.in (kBytesK == kWgmmaBytesK, asserted above)
  if (p.k <= 0 || p.k % step != 0)
    return "K = " + std::to_string(p.k) + " is not a positive multiple of " + std::to_string(step);
  if (p.block_n != 128 && !(p.block_n == 256 && !f8))
    return "block_n " + std::to_string(p.block_n) + (f8 ? " (128 for f8)" : " (128 or 256)");
  if (p.n <= 0 || p.n % p.block_n != 0)
    return "N = " + std::to_string(p.n) + " is not a positive multiple of " + std::to_string(p.block_n);
  if (p.block_m != kBM || p.block_k != step)
    return "the tile is not 128 x n x " + std::to_string(step);
  if (p.tokens <= 0 || p.tokens > INT32_MAX) return "tokens out of TMA's int32 coordinates";
  if (int64_t(p.groups) * p.n > INT32_MAX) return "G N rows of W out of TMA's int32 coordinates";
  if (p.k > (int64_t(1) << 24)) return "K too large";
  return {};
}

Status launch_grouped_sm90(const GroupedGemmPlan& p, const GroupedOperands& o, const int32_t* tile_end,
                           cudaStream_t stream) {
  if (const std::string why = grouped_sm90_unfit(p); !why.empty())
    return runtime_error("grouped GEMM (WGMMA) launched for a shape it does not take: " + why);
  if (p.stages != stages_for_bn(p.block_n))
    return runtime_error("grouped GEMM (WGMMA): the plan's stages do not match the kernel's");
  CUtensorMap mx, mw;
  if (Status s = encode_tma_map(&mx, p.in, o.x, uint64_t(p.tokens), uint64_t(p.k), kBM, kWho); !s.ok()) return s;
  if (Status s = encode_tma_map(&mw, p.in_w, o.w, uint64_t(p.groups) * uint64_t(p.n), uint64_t(p.k), uint32_t(p.block_n), kWho);
      !s.ok())
    return s;
  Sm90Args a{};
  a.offsets = o.offsets, a.bias = o.bias, a.y = o.y, a.tile_end = tile_end;
  if (p.block_scales) {
    if (!o.sx || !o.sw) return runtime_error("grouped GEMM (WGMMA): the block scales' S are not bound");
    a.sx = o.sx, a.sw = o.sw;
  }
  a.tokens = p.tokens, a.n = p.n;
  a.groups = p.groups, a.n_tiles = int(p.n_tiles), a.m_panel = p.m_panel, a.ktiles = int(p.k / p.block_k);
  a.alpha = p.alpha, a.out = p.out, a.bias_t = p.bias, a.act = p.act, a.has_bias = p.has_bias;
  // Y's map (16-bit Y, 16-byte aligned: TMA's condition; n % 128 == 0 makes its rows so); an f32
  // Y is stored from the registers, and the kernel receives X's map in its place, unread.
  CUtensorMap my = mx;
  a.tma_y = p.out != DType::f32 && (reinterpret_cast<uintptr_t>(o.y) & 15) == 0;
  if (a.tma_y)
    if (Status s = encode_tma_map(&my, p.out, o.y, uint64_t(p.tokens), uint64_t(p.n), 64, kWho); !s.ok()) return s;
  switch (p.in) {
    case DType::f8e4m3: return launch_f8<__nv_fp8_e4m3>(p, mx, mw, my, a, stream);
    case DType::f8e5m2: return launch_f8<__nv_fp8_e5m2>(p, mx, mw, my, a, stream);
    case DType::bf16:
      return p.block_n == 256 ? launch_typed<__nv_bfloat16, __nv_bfloat16, 256>(p, mx, mw, my, a, stream)
                              : launch_typed<__nv_bfloat16, __nv_bfloat16, 128>(p, mx, mw, my, a, stream);
    default:
      return p.block_n == 256 ? launch_typed<__half, __half, 256>(p, mx, mw, my, a, stream)
                              : launch_typed<__half, __half, 128>(p, mx, mw, my, a, stream);
  }
}

}  // namespace gexec::cuda
