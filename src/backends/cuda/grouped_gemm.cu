// The grouped GEMM's device code: Y[r,:] = act(alpha X[r,:] W_g + bias_g) for the rows r that
// group g owns (offsets: cumulative ends, as torch._grouped_mm's `offs`), on the tensor cores with
// mma.sync m16n8k16 and f32 accumulators, fed by ldmatrix from a cp.async pipeline. It runs on
// sm_80 and later; on Hopper it is the portable kernel, not a WGMMA/TMA one.
//
// Two launches. The first, one CTA (grouped_prep), reads the offsets where they are, on the device,
// and checks them: the first bad g (smallest: offsets[g] < offsets[g-1], offsets[0] < 0, or
// offsets[g] > tokens) goes to status, and then every tile count is zero and the tail start is
// `tokens`, so the second launch reads and writes nothing. With good offsets it writes each
// group's cumulative tile count, tile_end[g] = (sum over h <= g of ceil(rows_h / block_m)) x n_tiles
// (a block-wide scan, 1024 groups per pass), and the first row no group owns, offsets[G-1].
//
// The second (grouped_main) is persistent: sm_count x 2 CTAs, each walking the linear tile
// indices blockIdx.x, + gridDim.x, ... below tile_end[G-1]. The host cannot size a grid to the
// tiles (the offsets are device data, and the launch must not wait for them: it is captured in
// CUDA graphs), and a grid sized for the worst case would be mostly empty CTAs; a persistent grid
// also keeps the CTAs that run at the same time on neighbouring tiles. A CTA finds the tile's group
// by binary search in tile_end (empty groups have tile_end[g] == tile_end[g-1] and are never
// found). Within a group the tiles go panel by panel, a panel being m_panel m-tiles (2048 rows),
// and within a panel n-block by n-block, the panel's m-tiles of one n-block adjacent: the CTAs
// running together share a few of W_g's column blocks and a panel of X, which stay in L2, rather
// than streaming all of W_g (the largest operand) once per m-tile.
//
// Group edges: a tile starts at a multiple of block_m from its group's first row, so it may hold
// fewer rows than block_m; its rows at or past the group's end are not loaded (cp.async with
// src-size 0 fills zeros) and not stored, so the next group's rows are only ever written by the
// next group's tiles. K and N past their ends load zeros in the same way, and columns past N are
// not stored. The rows no group owns, offsets[G-1] .. tokens-1, are zeroed by the same grid, in a
// grid-stride loop before its tiles: no tile writes them, so nothing races.
//
// The tile: block_m (128, or 64 or 32 where the groups average few rows, which the plan guesses
// from tokens / groups) x 128 columns, 64 of K per step, 8 warps as 2 (M) x 4 (N), each warp
// block_m/2 x 32 of Y. Shared memory rows are 128 bytes (X, and W stored [N,K]) or 256 bytes (W
// stored [K,N]); the 16-byte chunk c of row r is stored at chunk c ^ (r % 8), so that the eight
// rows an ldmatrix phase reads, and the eight chunks a cp.async row writes, fall in distinct banks.
// W [N,K] is read with ldmatrix as X is (its rows are the MMA's B columns); W [K,N] with
// ldmatrix.trans. The epilogue (alpha, bias, activation) is in f32 from the accumulators, rounded
// once to Y's dtype (round to nearest even), two columns per store.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <type_traits>

#include "check.hpp"
#include "grouped_fit.hpp"
#include "grouped_gemm.hpp"
#include "grouped_gemm_common.cuh"
#include "grouped_gemm_sm90.hpp"

namespace gexec::cuda {
namespace {

// The fixed geometry; block_m and the stage count are the kernel's template parameters.
constexpr int kThreads = 256;  // 8 warps: 2 along M x 4 along N
constexpr int kBN = 128;
constexpr int kBK = 64;
constexpr int kCtasPerSm = 2;      // __launch_bounds__: at most 128 registers a thread
constexpr int kPanelRows = 2048;   // rows of a raster panel: m_panel = kPanelRows / block_m
constexpr int kPrepThreads = 1024; // grouped_prep: groups per scan pass

constexpr int stages_for(int bm) { return bm == 128 ? 3 : 4; }  // 96 KiB (80 at 32 rows): two CTAs an SM

struct MainArgs {
  const void* x;
  const void* w;
  const int32_t* offsets;
  const void* bias;
  void* y;
  const int32_t* tile_end;  // workspace: [groups] cumulative tile counts, then the tail start
  int64_t tokens, k, n;
  int groups, n_tiles, m_panel;
  float alpha;
  DType out, bias_t;
  Act act;
  bool has_bias;
};

// ---- The prep launch: check the offsets, count the tiles.

// Inclusive sum over the block's 1024 threads; `warp_sums` is shared scratch of 32.
__device__ __forceinline__ int block_inclusive_scan(int v, int* warp_sums, int& block_total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += u;
  }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int s = warp_sums[lane];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int u = __shfl_up_sync(0xffffffffu, s, d);
      if (lane >= d) s += u;
    }
    warp_sums[lane] = s;
  }
  __syncthreads();
  if (warp > 0) v += warp_sums[warp - 1];
  block_total = warp_sums[31];
  __syncthreads();  // warp_sums is reused by the next pass
  return v;
}

__global__ void __launch_bounds__(kPrepThreads) grouped_prep(const int32_t* offsets, int groups, int64_t tokens,
                                                             int block_m, int n_tiles, int32_t* tile_end,
                                                             int32_t* status) {
  __shared__ int first_bad;
  __shared__ int warp_sums[32];
  if (threadIdx.x == 0) first_bad = INT_MAX;
  __syncthreads();
  for (int g = threadIdx.x; g < groups; g += kPrepThreads) {
    const int64_t prev = g > 0 ? offsets[g - 1] : 0, cur = offsets[g];
    if (cur < prev || cur > tokens) atomicMin(&first_bad, g);
  }
  __syncthreads();
  const int bad = first_bad;
  if (bad != INT_MAX) {
    // Nothing to do for the main launch: no tiles, no tail.
    for (int g = threadIdx.x; g < groups; g += kPrepThreads) tile_end[g] = 0;
    if (threadIdx.x == 0) {
      tile_end[groups] = int32_t(tokens);
      status[0] = 1 + bad;
      status[1] = offsets[bad];
    }
    return;
  }
  if (threadIdx.x == 0) {
    tile_end[groups] = offsets[groups - 1];
    status[0] = 0;
    status[1] = 0;
  }
  // The plan checked that (tokens / block_m + min(groups, tokens)) * n_tiles fits an int32.
  int carry = 0;
  for (int g0 = 0; g0 < groups; g0 += kPrepThreads) {
    const int g = g0 + int(threadIdx.x);
    int m_tiles = 0;
    if (g < groups) {
      const int rows = offsets[g] - (g > 0 ? offsets[g - 1] : 0);
      m_tiles = (rows + block_m - 1) / block_m;
    }
    int total = 0;
    const int sum = block_inclusive_scan(m_tiles, warp_sums, total);
    if (g < groups) tile_end[g] = (carry + sum) * n_tiles;
    carry += total;
  }
}

// ---- The main launch.

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// 16 bytes global -> shared, or 16 zero bytes where !ok (src-size 0: nothing is read from `src`).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool ok) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0));
#else
  __trap();  // the kernel needs compute capability 8.0
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
#if __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  __trap();
#endif
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], uint32_t addr) {
#if __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  __trap();
#endif
}

// d += A B: A 16x16 (4 words), B 16x8 (2 words), f32 accumulators.
template <class E>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<E, __half>)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

// Byte offset of 16-byte chunk c of row r in a tile of 128-byte rows (8 chunks) or 256-byte rows
// (16 chunks): the chunk index's low 3 bits XOR r % 8.
__device__ __forceinline__ uint32_t swz128(int r, int c) { return uint32_t(r * 128 + ((c ^ (r & 7)) << 4)); }
__device__ __forceinline__ uint32_t swz256(int r, int c) { return uint32_t(r * 256 + ((c ^ (r & 7)) << 4)); }

template <class E, bool kTransB, int kBM, int kStages>
__global__ void __launch_bounds__(kThreads, kCtasPerSm) grouped_main(const MainArgs p) {
  constexpr int kMI = kBM / 32;          // m16 fragments per warp
  constexpr int kWarpRows = kBM / 2;
  constexpr int kABytes = kBM * kBK * 2, kBBytes = kBK * kBN * 2;
  constexpr int kAIters = kBM * (kBK / 8) / kThreads;  // 16-byte chunks of X per thread per stage
  constexpr int kBIters = kBN * (kBK / 8) / kThreads;  // of W: 4
  static_assert(kAIters >= 1 && kBIters == 4, "the load maps below assume these");

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t s_a = smem_addr(smem), s_b = s_a + kStages * kABytes;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp >> 2, wn = warp & 3;

  // The rows no group owns: zeros (none where the offsets were bad: the tail starts at tokens).
  {
    const int64_t es = p.out == DType::f32 ? 4 : 2;
    const int64_t tail = p.tile_end[p.groups];
    const int64_t vecs = (p.tokens - tail) * p.n * es / 16;  // n % 8 == 0: whole 16-byte vectors
    uint4* y4 = reinterpret_cast<uint4*>(static_cast<char*>(p.y) + tail * p.n * es);
    for (int64_t i = int64_t(blockIdx.x) * kThreads + tid; i < vecs; i += int64_t(gridDim.x) * kThreads)
      y4[i] = make_uint4(0, 0, 0, 0);
  }

  const E* x = static_cast<const E*>(p.x);
  const E* w = static_cast<const E*>(p.w);
  const int total = p.tile_end[p.groups - 1];
  const int ktiles = int((p.k + kBK - 1) / kBK);

  for (int tile = blockIdx.x; tile < total; tile += gridDim.x) {
    // The group: the first g whose cumulative count passes the tile.
    int lo = 0, hi = p.groups - 1;
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (p.tile_end[mid] > tile) hi = mid;
      else lo = mid + 1;
    }
    const int g = lo;
    const int before = g > 0 ? p.tile_end[g - 1] : 0;
    const int local = tile - before;
    const int m_tiles = (p.tile_end[g] - before) / p.n_tiles;
    const int row0 = g > 0 ? p.offsets[g - 1] : 0, row_end = p.offsets[g];
    // Panel by panel, n-block by n-block in a panel, the panel's m-tiles adjacent.
    const int span = p.m_panel * p.n_tiles;
    const int panel = local / span;
    const int in_panel = min(p.m_panel, m_tiles - panel * p.m_panel);
    const int r = local - panel * span;
    const int n_tile = r / in_panel, m_tile = panel * p.m_panel + r % in_panel;
    const int64_t m0 = int64_t(row0) + int64_t(m_tile) * kBM;
    const int rows = min(kBM, int(row_end - m0));  // this tile's rows in the group, >= 1
    const int64_t n0 = int64_t(n_tile) * kBN;

    // The loads: X as 128-byte rows (k) of the tile's rows, 8 threads a row; W [N,K] the same
    // with W's rows n; W [K,N] as 256-byte rows (n) of its k rows, 16 threads a row.
    const int a_row = tid >> 3, a_chunk = tid & 7;
    const E* a_src = x + (m0 + a_row) * p.k + a_chunk * 8;  // advanced by kBK per stage loaded
    const int a_step = 32 * int(p.k);                        // the plan keeps K and N below 2^24
    uint32_t a_ok = 0;
#pragma unroll
    for (int i = 0; i < kAIters; ++i)
      if (a_row + i * 32 < rows) a_ok |= 1u << i;
    const int b_row = kTransB ? tid >> 3 : tid >> 4, b_chunk = kTransB ? tid & 7 : tid & 15;
    const E* b_src = kTransB ? w + int64_t(g) * p.n * p.k + (n0 + b_row) * p.k + b_chunk * 8
                             : w + int64_t(g) * p.k * p.n + int64_t(b_row) * p.n + n0 + b_chunk * 8;
    const int b_step = kTransB ? 32 * int(p.k) : 16 * int(p.n);
    const int b_advance = kTransB ? kBK : kBK * int(p.n);
    uint32_t b_ok = 0;
#pragma unroll
    for (int i = 0; i < kBIters; ++i)
      if (kTransB ? n0 + b_row + i * 32 < p.n : n0 + b_chunk * 8 < p.n) b_ok |= 1u << i;

    // Loads the next k step into `stage`; k_left: K not yet loaded.
    auto load_stage = [&](int stage, int k_left) {
      const uint32_t sa = s_a + stage * kABytes, sb = s_b + stage * kBBytes;
      const bool a_k = a_chunk * 8 < k_left;
#pragma unroll
      for (int i = 0; i < kAIters; ++i) {
        const bool ok = a_k && (a_ok >> i & 1u);
        cp_async16(sa + swz128(a_row + i * 32, a_chunk), ok ? a_src + i * a_step : x, ok);
      }
      if constexpr (kTransB) {
        const bool b_k = b_chunk * 8 < k_left;
#pragma unroll
        for (int i = 0; i < kBIters; ++i) {
          const bool ok = b_k && (b_ok >> i & 1u);
          cp_async16(sb + swz128(b_row + i * 32, b_chunk), ok ? b_src + i * b_step : w, ok);
        }
      } else {
#pragma unroll
        for (int i = 0; i < kBIters; ++i) {
          const bool ok = (b_ok >> i & 1u) && b_row + i * 16 < k_left;
          cp_async16(sb + swz256(b_row + i * 16, b_chunk), ok ? b_src + i * b_step : w, ok);
        }
      }
      a_src += kBK;
      b_src += b_advance;
    };

    float acc[kMI][4][4];
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < ktiles) load_stage(s, int(p.k) - s * kBK);
      cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<kStages - 2>();
      __syncthreads();  // stage kt has landed for all threads; stage kt - 1 is no longer read
      const int next = kt + kStages - 1;
      if (next < ktiles) load_stage(next % kStages, int(p.k) - next * kBK);
      cp_async_commit();
      const uint32_t sa = s_a + (kt % kStages) * kABytes, sb = s_b + (kt % kStages) * kBBytes;
#pragma unroll
      for (int ks = 0; ks < kBK / 16; ++ks) {
        uint32_t af[kMI][4], bf[4][2];
#pragma unroll
        for (int i = 0; i < kMI; ++i)
          // Matrices: rows 0-7 / 8-15 (lanes 0-15) by k 0-7 / 8-15 (lanes 16-31).
          ldsm_x4(af[i], sa + swz128(wm * kWarpRows + i * 16 + (lane & 15), ks * 2 + (lane >> 4)));
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
          uint32_t t[4];
          if constexpr (kTransB)
            // Matrices: n 0-7 k 0-7, n 0-7 k 8-15, n 8-15 k 0-7, n 8-15 k 8-15.
            ldsm_x4(t, sb + swz128(wn * 32 + jj * 16 + (lane & 7) + ((lane >> 4) << 3), ks * 2 + ((lane >> 3) & 1)));
          else
            // Matrices (transposed): k 0-7 n 0-7, k 8-15 n 0-7, k 0-7 n 8-15, k 8-15 n 8-15.
            ldsm_x4_trans(t, sb + swz256(ks * 16 + (lane & 7) + (((lane >> 3) & 1) << 3), wn * 4 + jj * 2 + (lane >> 4)));
          bf[2 * jj][0] = t[0], bf[2 * jj][1] = t[1], bf[2 * jj + 1][0] = t[2], bf[2 * jj + 1][1] = t[3];
        }
#pragma unroll
        for (int i = 0; i < kMI; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) mma16816<E>(acc[i][j], af[i], bf[j]);
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // the next tile's first loads overwrite the stages

    // The epilogue: a thread holds rows lane/4 and lane/4 + 8 of each m16 fragment, columns
    // 2 (lane % 4) and the next of each n8 fragment.
    const int lr = lane >> 2, lc = (lane & 3) * 2;
    const bool fast = p.out != DType::f32;  // rounded to 16 bits right after (activate.cuh)
    float bv[4][2];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t col = n0 + wn * 32 + j * 8 + lc;
      const bool ok = p.has_bias && col < p.n;
      bv[j][0] = ok ? load_f32(p.bias, p.bias_t, int64_t(g) * p.n + col) : 0.0f;
      bv[j][1] = ok ? load_f32(p.bias, p.bias_t, int64_t(g) * p.n + col + 1) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int rl = wm * kWarpRows + i * 16 + h * 8 + lr;
        if (rl >= rows) continue;
        const int64_t base = (m0 + rl) * p.n;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int64_t col = n0 + wn * 32 + j * 8 + lc;
          if (col >= p.n) continue;
          const float v0 = activate(p.act, __fmul_rn(p.alpha, acc[i][j][2 * h]) + bv[j][0], fast);
          const float v1 = activate(p.act, __fmul_rn(p.alpha, acc[i][j][2 * h + 1]) + bv[j][1], fast);
          store2(p.y, p.out, base + col, v0, v1);
        }
      }
  }
}

template <class E, bool kTransB, int kBM>
Status launch_main(const GroupedGemmPlan& plan, const MainArgs& args, cudaStream_t stream) {
  constexpr int kStages = stages_for(kBM);
  auto* kernel = grouped_main<E, kTransB, kBM, kStages>;
  const int smem = int(plan.smem_bytes());
  GEXEC_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // Two CTAs of 96 KiB an SM need the largest shared memory carveout.
  GEXEC_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
  // A persistent grid larger than what is resident leaves its last CTAs to start late, on the
  // tiles of the tail: ask how many fit (one on an A100, whose SM has 164 KiB).
  int resident = 0;
  GEXEC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, size_t(smem)));
  if (resident < 1)
    return runtime_error("no CTA of " + std::to_string(kThreads) + " threads and " + std::to_string(smem) +
                         " bytes of shared memory fits an SM of this device");
  const int64_t fit = int64_t(plan.sm_count) * std::min(resident, plan.ctas_per_sm);
  const unsigned grid = unsigned(std::max<int64_t>(1, std::min<int64_t>(plan.grid, fit)));
  kernel<<<grid, kThreads, size_t(smem), stream>>>(args);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return Status::success();
}

template <class E, bool kTransB>
Status launch_typed(const GroupedGemmPlan& plan, const MainArgs& args, cudaStream_t stream) {
  switch (plan.block_m) {
    case 32: return launch_main<E, kTransB, 32>(plan, args, stream);
    case 64: return launch_main<E, kTransB, 64>(plan, args, stream);
    default: return launch_main<E, kTransB, 128>(plan, args, stream);
  }
}

Status launch(const GroupedGemmPlan& p, const GroupedOperands& o, cudaStream_t stream) {
  auto* tile_end = static_cast<int32_t*>(o.workspace);
  grouped_prep<<<1, kPrepThreads, 0, stream>>>(o.offsets, p.groups, p.tokens, p.block_m, int(p.n_tiles), tile_end,
                                               o.status);
  GEXEC_CUDA_TRY(cudaGetLastError());
  if (p.wgmma) return launch_grouped_sm90(p, o, tile_end, stream);
  MainArgs a{};
  a.x = o.x, a.w = o.w, a.offsets = o.offsets, a.bias = o.bias, a.y = o.y, a.tile_end = tile_end;
  a.tokens = p.tokens, a.k = p.k, a.n = p.n;
  a.groups = p.groups, a.n_tiles = int(p.n_tiles), a.m_panel = p.m_panel;
  a.alpha = p.alpha, a.out = p.out, a.bias_t = p.bias, a.act = p.act, a.has_bias = p.has_bias;
  if (p.in == DType::bf16)
    return p.trans_b ? launch_typed<__nv_bfloat16, true>(p, a, stream) : launch_typed<__nv_bfloat16, false>(p, a, stream);
  return p.trans_b ? launch_typed<__half, true>(p, a, stream) : launch_typed<__half, false>(p, a, stream);
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

std::string name(DType t) { return std::string(dtype_name(t)); }

// The WGMMA plan where the device is a Hopper (cc 9.0) and the shape fits (grouped_sm90_unfit),
// else none: the tile 128 rows x 256 columns where N allows and the groups, spread evenly, give
// at least a wave of such tiles, else 128 x 128; 128 bytes of K a step. f8 operands take it
// whatever the groups' sizes (it is their only kernel, and where groups are small the weights'
// bytes, half of bf16's, bound the time) and always 128 x 128: promoting the FP8 partial sums
// takes a second register set, for which 256 columns (128 + 128 a thread) leave no room.
// Returns why it is not taken (p unchanged), or nothing (p the WGMMA plan).
std::string plan_wgmma(GroupedGemmPlan& p) {
  const bool f8 = is_f8(p.in);
  if (p.cc != 90) return "the device is not sm_90 (Hopper)";
  if (p.mma_sync_only) return "the mma.sync kernel is forced";
  if (!f8 && p.tokens / p.groups < kWgmmaMinAvgRows) return "the groups average fewer than 64 rows";
  GroupedGemmPlan w = p;
  const int64_t m_tiles_even = int64_t(p.groups) * ((p.tokens / p.groups + 127) / 128);
  w.block_m = 128;
  w.block_k = int(wgmma_step_k(p.in));
  w.block_n = !f8 && p.n % 256 == 0 && m_tiles_even * (p.n / 256) >= p.sm_count ? 256 : 128;
  w.stages = w.block_n == 256 ? 4 : 6;  // the kernel's (launch_grouped_sm90 checks)
  w.warps = 12;
  w.m_panel = kPanelRows / w.block_m;
  w.ctas_per_sm = 1;
  w.n_tiles = w.n / w.block_n;
  w.max_tiles = (w.tokens / w.block_m + std::min<int64_t>(w.groups, w.tokens)) * w.n_tiles;
  w.wgmma = true;
  if (std::string why = grouped_sm90_unfit(w); !why.empty()) return why;
  if (w.max_tiles > INT32_MAX) return std::to_string(w.max_tiles) + " tiles at most, beyond int32";
  w.grid = int(std::max<int64_t>(1, std::min<int64_t>(w.sm_count, w.max_tiles)));
  p = std::move(w);
  return {};
}

}  // namespace

GroupedGemmPlan plan_grouped_gemm(GroupedGemmPlan p) {
  p.rejected.clear();
  auto refuse = [&](std::string why) {
    p.rejected = std::move(why);
    return p;
  };
  const bool f8 = is_f8(p.in);
  if (p.in != DType::f16 && p.in != DType::bf16 && !f8)
    return refuse("X is " + name(p.in) + "; the grouped GEMM takes f16, bf16 or f8");
  if (f8 ? !is_f8(p.in_w) : p.in_w != p.in)
    return refuse("X is " + name(p.in) + " and W " + name(p.in_w) + "; they must match (or both be f8)");
  if (p.block_scales && !f8) return refuse("block scales on X and W that are not f8");
  if (p.out != DType::f16 && p.out != DType::bf16 && p.out != DType::f32)
    return refuse("Y is " + name(p.out) + "; the grouped GEMM writes f16, bf16 or f32");
  if (p.has_bias && p.bias != DType::f16 && p.bias != DType::bf16 && p.bias != DType::f32)
    return refuse("the bias is " + name(p.bias) + "; the grouped GEMM reads f16, bf16 or f32");
  if (p.act != Act::none && p.act != Act::relu && p.act != Act::gelu && p.act != Act::gelu_erf && p.act != Act::silu)
    return refuse("an activation the grouped GEMM does not know");
  if (p.groups < 1) return refuse("groups is " + std::to_string(p.groups) + "; it takes at least one");
  if (p.tokens < 0 || p.k < 0 || p.n < 0) return refuse("a negative size");
  if (p.k % 8 != 0 || p.n % 8 != 0)
    return refuse("K = " + std::to_string(p.k) + ", N = " + std::to_string(p.n) +
                  ": both must be multiples of 8 (16-byte rows)");
  if (p.tokens > INT32_MAX) return refuse(std::to_string(p.tokens) + " tokens: the int32 offsets cannot hold them");
  if (p.k >= (int64_t(1) << 24) || p.n >= (int64_t(1) << 24))
    return refuse("K = " + std::to_string(p.k) + ", N = " + std::to_string(p.n) +
                  ": both must be below 2^24 (the kernel steps through rows with int32 strides)");
  if (p.sm_count < 1) return refuse("sm_count is " + std::to_string(p.sm_count));
  p.wgmma = false;
  const std::string not_wgmma = plan_wgmma(p);
  if (not_wgmma.empty()) return p;
  if (f8)
    return refuse(std::string(p.block_scales ? "block-scaled " : "") +
                  "f8 X and W run on the FP8 WGMMA kernel only, which does not take this: " + not_wgmma);

  // Few rows a group on average (decode, or many experts): a shorter tile wastes fewer of the
  // MMA's rows on the group's last, partial m-tile; the weight, read once per m-tile, bounds the
  // time there, not the MMAs.
  const int64_t avg = p.tokens / p.groups;
  p.block_m = avg >= 96 ? 128 : avg >= 40 ? 64 : 32;
  p.block_n = kBN;
  p.block_k = kBK;
  p.stages = stages_for(p.block_m);
  p.warps = kThreads / 32;
  p.m_panel = kPanelRows / p.block_m;
  p.ctas_per_sm = kCtasPerSm;
  p.n_tiles = (p.n + kBN - 1) / kBN;
  p.max_tiles = (p.tokens / p.block_m + std::min<int64_t>(p.groups, p.tokens)) * p.n_tiles;
  if (p.max_tiles > INT32_MAX)
    return refuse(std::to_string(p.max_tiles) + " tiles at most: more than the int32 tile counts hold");
  p.grid = int(std::max<int64_t>(1, std::min<int64_t>(int64_t(p.sm_count) * p.ctas_per_sm, p.max_tiles)));
  return p;
}

std::string describe(const GroupedGemmPlan& p) {
  if (!p.rejected.empty()) return "grouped GEMM refused: " + p.rejected;
  std::string s = std::string(p.wgmma ? "grouped GEMM (WGMMA+TMA, sm_90a) " : "grouped GEMM (mma.sync) ") + name(p.in) + " -> " + name(p.out) + ", W " + (p.trans_b ? "[G,N,K]" : "[G,K,N]") +
                  ", G " + std::to_string(p.groups) + ", tile " + std::to_string(p.block_m) + "x" +
                  std::to_string(p.block_n) + "x" + std::to_string(p.block_k) + ", " + std::to_string(p.stages) +
                  " stages, " + std::to_string(p.warps) + " warps, " + std::to_string(p.smem_bytes() / 1024) +
                  " KiB smem, m-panel " + std::to_string(p.m_panel) + ", persistent grid " + std::to_string(p.grid) +
                  " (" + std::to_string(p.sm_count) + " SMs x " + std::to_string(p.ctas_per_sm) + ")";
  if (p.in_w != p.in) s += ", W " + name(p.in_w);
  if (p.wgmma) s += ", W tiles by TMA, 128-byte swizzle";
  if (p.wgmma && p.out != DType::f32) s += ", Y tiles staged in shared memory and stored by TMA where Y is 16-byte aligned";
  if (is_f8(p.in)) s += ", FP8 tensor cores, partial sums promoted to f32 every 128 of K";
  if (p.block_scales) s += ", block scales (X 1x128, W 128x128) applied as they are promoted";
  if (p.has_bias) s += ", bias " + name(p.bias);
  if (p.act != Act::none) s += ", " + std::string(act_name(p.act));
  return s;
}

Status launch_grouped_gemm(const GroupedGemmPlan& p, const GroupedOperands& o, cudaStream_t stream) {
  if (!p.rejected.empty()) return runtime_error("grouped GEMM launched for a shape it refused: " + p.rejected);
  if (p.block_m == 0) return runtime_error("grouped GEMM launched without a plan (plan_grouped_gemm)");
  if (!o.offsets || !o.status || !o.workspace)
    return runtime_error("grouped GEMM: the offsets, the status and the workspace are required");
  if (p.block_scales && (!o.sx || !o.sw)) return runtime_error("grouped GEMM: the block scales' S are not bound");
  const bool x_used = p.tokens > 0 && p.k > 0, w_used = p.k > 0 && p.n > 0, y_used = p.tokens > 0 && p.n > 0;
  if ((x_used && !o.x) || (w_used && !o.w) || (y_used && !o.y) || (p.has_bias && p.n > 0 && !o.bias))
    return runtime_error("grouped GEMM: an operand is missing (X, W, Y, or the bias its plan has)");
  const void* const ptrs[] = {o.x, o.w, o.bias, o.y, o.workspace};
  for (const void* ptr : ptrs)
    if (!aligned16(ptr)) return runtime_error("grouped GEMM: an operand is not 16-byte aligned");
  if (Status s = launch(p, o, stream); !s.ok()) return s.error().with(describe(p));
  return Status::success();
}

}  // namespace gexec::cuda
