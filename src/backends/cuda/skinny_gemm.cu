// The skinny GEMM's device code: C = act(alpha * A W + beta * R + bias) for M <= 128 rows of A
// against a large f16/bf16 weight W, bound by reading W once.
//
// W stored [N,K] (trans_b, nn.Linear's layout) runs on tensor cores: on an sm_90 device with WGMMA
// fed by TMA (skinny_gemm_sm90.cu, launch_skinny_sm90); elsewhere here, with mma.sync (skinny_mma).
// There each lane loads 16 bytes, 8 consecutive K of one weight row, straight from global memory,
// and these are the MMA's B fragments as they stand: the sum over K does not depend on which K a
// fragment slot holds, so slot L = 2q + i (q = lane % 4) holds K 8q + 4s + i of the 32-K chunk for
// MMA s = 0, 1 (and slot 2q + 8 + i holds 8q + 4s + 2 + i), and the activations' A fragments are
// read with the same map: again one 16-byte load per row. The CTA's 8 warps take its K range's
// 32-K chunks in turn, all 16 weight rows each; their sums are added in warp order through shared
// memory, then the epilogue. M is padded to whole m-tiles of 16 rows with zeros (the MMA's work is
// free here: the weight's bytes bound the time).
//
// W stored [K,N] runs on CUDA cores (f32 FMAs, skinny_kn). Each CTA takes a row tile of A (1 to 8
// rows), a block of 256 output columns and one split of K. It stages its rows of A for its split in
// shared memory as f32 (once), then streams its part of W with 16-byte loads straight from global
// memory, several in flight per thread: a warp reads 32 consecutive 16-byte vectors of one weight
// row (512 bytes), the 8 warps every 8th row of the split; the warps' sums are added in warp order
// through shared memory.
//
// One split: the CTA applies the epilogue and writes C. Several: each writes its f32 partial sums
// to a workspace [split][M][N], and a second launch adds them in split order, then the epilogue.
// The order is fixed (skinny_plan.hpp, skinny_order), so runs are bit-identical.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "check.hpp"
#include "fault.hpp"
#include "pdl.cuh"
#include "skinny_args.cuh"
#include "skinny_gemm.hpp"

namespace gexec::cuda {
namespace {

using G = SkinnyGeometry;
using Args = SkinnyArgs;

// Eight weight elements of one 16-byte vector, widened to f32 (exactly).
template <class T> __device__ __forceinline__ void widen8(const uint4& v, float* f);
template <> __device__ __forceinline__ void widen8<__half>(const uint4& v, float* f) {
  const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __half22float2(h[i]);
    f[2 * i] = x.x, f[2 * i + 1] = x.y;
  }
}
template <> __device__ __forceinline__ void widen8<__nv_bfloat16>(const uint4& v, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __bfloat1622float2(h[i]);
    f[2 * i] = x.x, f[2 * i + 1] = x.y;
  }
}

__device__ __forceinline__ uint4 load16(const void* p) { return __ldg(static_cast<const uint4*>(p)); }

// Where a CTA's sum for (m, n) goes: C through the epilogue, or the workspace.
__device__ __forceinline__ void finish(const Args& p, int split, int64_t m, int64_t n, float sum) {
  if (p.splits == 1) store_f32(p.c, p.c_t, m * p.n + n, skinny_epilogue(p, m, n, sum));
  else p.partial[(int64_t(split) * p.m + m) * p.n + n] = sum;
}

// Rows [m0, m0 + RT) of A, K [k0, k0 + split_k), as f32 in shared memory; zero beyond M and K.
template <class T, int RT>
__device__ __forceinline__ void stage_a(const Args& p, float* as, int64_t m0, int64_t k0) {
  const T* a = static_cast<const T*>(p.a);
  const int split = int(p.split_k);  // at most SkinnyGeometry::kMaxStagedK
#pragma unroll
  for (int r = 0; r < RT; ++r)
    for (int kk = threadIdx.x; kk < split; kk += G::kThreads)
      as[r * split + kk] = m0 + r < p.m && k0 + kk < p.k ? as_f32(a[(m0 + r) * p.k + k0 + kk]) : 0.0f;
  __syncthreads();
}

// W [K,N]: grid (row tiles, column blocks of 256, splits).
template <class T, int RT>
__global__ void __launch_bounds__(G::kThreads) skinny_kn(const Args p) {
  allow_dependents();
  dependency_wait();  // launched as a programmatic dependent: nothing read or written before
  extern __shared__ float smem[];
  float* as = smem;                    // RT x split_k
  float* red = smem + RT * p.split_k;  // RT x kColsKN
  const int64_t m0 = int64_t(blockIdx.x) * RT, k0 = int64_t(blockIdx.z) * p.split_k;
  stage_a<T, RT>(p, as, m0, k0);
  const int vec = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t n0 = int64_t(blockIdx.y) * G::kColsKN + vec * G::kVec;
  const int64_t kc = min(p.split_k, p.k - k0);
  const bool col_ok = n0 < p.n;  // N % 8 == 0: a vector is all in or all out
  float acc[RT][G::kVec] = {};
  if (col_ok) {
    const T* w = static_cast<const T*>(p.w) + k0 * p.n + n0;
    constexpr int U = 4;  // loads in flight per thread
    for (int64_t kk = warp; kk < kc; kk += U * G::kKLanesKN) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t k = kk + int64_t(u) * G::kKLanesKN;
        v[u] = k < kc ? load16(w + k * p.n) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t k = kk + int64_t(u) * G::kKLanesKN;
        if (k >= kc) break;
        float f[G::kVec];
        widen8<T>(v[u], f);
#pragma unroll
        for (int r = 0; r < RT; ++r) {
          const float x = as[r * p.split_k + k];
#pragma unroll
          for (int j = 0; j < G::kVec; ++j) acc[r][j] = fmaf(x, f[j], acc[r][j]);
        }
      }
    }
  }
  // The warps' sums, added in warp order.
  for (int l = 0; l < G::kKLanesKN; ++l) {
    if (warp == l)
#pragma unroll
      for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int j = 0; j < G::kVec; ++j) {
          float& s = red[r * G::kColsKN + vec * G::kVec + j];
          s = l == 0 ? acc[r][j] : s + acc[r][j];
        }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < RT * G::kColsKN; i += G::kThreads) {
    const int64_t m = m0 + i / G::kColsKN, n = int64_t(blockIdx.y) * G::kColsKN + i % G::kColsKN;
    if (m < p.m && n < p.n) finish(p, blockIdx.z, m, n, red[i]);
  }
}

// The 32-bit word i of a 16-byte vector: two consecutive f16/bf16 elements.
__device__ __forceinline__ uint32_t word(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// d += A B on the tensor cores: A 16x16 (4 words: rows g and g + 8, slots 2q.. and 2q + 8..), B
// 16x8 (2 words), f32 accumulators (rows g and g + 8, columns 2q and 2q + 1).
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();  // the declaration asks for compute capability 8.0 (skinny_caps.cpp)
#endif
}

// W [N,K] on tensor cores: grid (column blocks, splits); MT m-tiles of 16 rows. The CTA's warps are
// WN along N (16 weight rows each) by kWarps / WN along K (its K range's 32-K chunks in turn).
// WN = 1: each CTA streams 16 weight rows with all 8 warps, the most CTAs for a given N; WN = 8:
// 128 rows per CTA, whose warps read the same activations (from L1), for large M, where the
// activations read by every column block would otherwise outweigh the weight.
//
// Each pass issues all its loads, the weight's (HBM) and the activations' (L1/L2), before its
// first MMA, so a warp waits one memory latency per pass, not one per load: U chunks per pass
// (SkinnyGeometry::mma_unroll). A chunk beyond the split loads zeros and adds nothing, so no pass
// ends early and the loads never wait behind a branch.
template <class T, int MT, int WN>
__global__ void __launch_bounds__(G::kThreads, G::kMmaCtasPerSm) skinny_mma(const Args p) {
  allow_dependents();
  dependency_wait();  // launched as a programmatic dependent: nothing read or written before
  constexpr int WK = G::kWarps / WN;
  constexpr int kCols = WN * G::kMmaCols;
  constexpr int kTile = MT * G::kMmaRows * kCols;  // the CTA's outputs
  constexpr int U = G::mma_unroll(MT);
  __shared__ float red[WK * kTile];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
  const int wn = warp % WN, wk = warp / WN;
  const int64_t n0 = int64_t(blockIdx.x) * kCols + wn * G::kMmaCols, k0 = int64_t(blockIdx.y) * p.split_k;
  const int64_t m0 = int64_t(blockIdx.z) * MT * G::kMmaRows;
  const int64_t kc = min(p.split_k, p.k - k0);  // a multiple of 8: K % 8 == 0
  const int64_t chunks = (kc + G::kMmaChunk - 1) / G::kMmaChunk;
  const T* w = static_cast<const T*>(p.w) + k0;
  const T* a = static_cast<const T*>(p.a) + k0;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  float acc[MT][2][4] = {};
  for (int64_t c0 = wk; c0 < chunks; c0 += U * WK) {
    uint4 b[U][2], x[U][MT][2];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t kk = (c0 + u * WK) * G::kMmaChunk + q * G::kVec;  // this lane's 8 K in the split
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const int64_t n = n0 + t * 8 + g;
        b[u][t] = kk < kc && n < p.n ? load16(w + n * p.k + kk) : zero;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t kk = (c0 + u * WK) * G::kMmaChunk + q * G::kVec;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // rows g and g + 8 of the m-tile
          const int64_t m = m0 + mt * G::kMmaRows + h * 8 + g;
          x[u][mt][h] = kk < kc && m < p.m ? load16(a + m * p.k + kk) : zero;
        }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
          for (int t = 0; t < 2; ++t)
            mma16816<T>(acc[mt][t], word(x[u][mt][0], 2 * s), word(x[u][mt][1], 2 * s), word(x[u][mt][0], 2 * s + 1),
                        word(x[u][mt][1], 2 * s + 1), word(b[u][t], 2 * s), word(b[u][t], 2 * s + 1));
  }
  // Accumulator c of (mt, t) is row mt * 16 + g (+ 8 for c >= 2), column t * 8 + 2q (+ 1 for odd c).
  // Each K warp stores its sums in its own slice of shared memory; after one barrier, each output
  // is the sum of the slices in warp order. Then one epilogue loop over the CTA's elements: a
  // single call site, as an epilogue per accumulator would be cloned for every path through its
  // dtype switches (minutes of ptxas).
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int row = mt * G::kMmaRows + g + (c >= 2 ? 8 : 0), col = wn * G::kMmaCols + t * 8 + 2 * q + (c & 1);
        // skinny-drop-split with one split: the CTA's last warp's sums are lost.
        red[wk * kTile + row * kCols + col] = warp < p.warps_used ? acc[mt][t][c] : 0.0f;
      }
  __syncthreads();
  const int64_t base = int64_t(blockIdx.x) * kCols;
  for (int i = threadIdx.x; i < kTile; i += G::kThreads) {
    const int64_t m = m0 + i / kCols, n = base + i % kCols;
    if (m >= p.m || n >= p.n) continue;
    float sum = red[i];
#pragma unroll
    for (int l = 1; l < WK; ++l) sum += red[l * kTile + i];
    finish(p, int(blockIdx.y), m, n, sum);
  }
}

// The split-K sum: each output element's partial sums added in split order, then the epilogue.
// p.splits_used splits are added (all of them, except under the skinny-drop-split fault).
__global__ void skinny_sum(const Args p) {
  const int64_t total = p.m * p.n;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    float s = p.partial[i];
    for (int sp = 1; sp < p.splits_used; ++sp) s += p.partial[int64_t(sp) * total + i];
    store_f32(p.c, p.c_t, i, skinny_epilogue(p, i / p.n, i % p.n, s));
  }
}

template <class T, int RT>
cudaError_t launch_main(const SkinnyPlan& plan, const Args& args, cudaStream_t stream) {
  const dim3 grid(unsigned(plan.row_tiles), unsigned(plan.col_blocks), unsigned(plan.splits));
  const size_t smem = size_t(RT) * size_t(plan.split_k) * 4 + size_t(RT) * G::kColsKN * 4;
  return launch_pdl(skinny_kn<T, RT>, grid, dim3(G::kThreads), smem, stream, plan.pdl, args);
}

template <class T, int MT, int WN>
cudaError_t launch_mma(const SkinnyPlan& plan, const Args& args, cudaStream_t stream) {
  const dim3 grid(unsigned(plan.col_blocks), unsigned(plan.splits), unsigned(plan.row_tiles));
  return launch_pdl(skinny_mma<T, MT, WN>, grid, dim3(G::kThreads), 0, stream, plan.pdl, args);
}

template <class T>
cudaError_t launch_typed(const SkinnyPlan& plan, const Args& args, cudaStream_t stream) {
  // The pairs plan_skinny makes: one or two m-tiles with the warps along K, four along N.
  if (plan.mma) switch (plan.row_tile / G::kMmaRows) {
      case 1: return launch_mma<T, 1, 1>(plan, args, stream);
      case 2: return launch_mma<T, 2, 1>(plan, args, stream);
      default: return launch_mma<T, 4, G::kWarps>(plan, args, stream);
    }
  switch (plan.row_tile) {
    case 1: return launch_main<T, 1>(plan, args, stream);
    case 2: return launch_main<T, 2>(plan, args, stream);
    case 4: return launch_main<T, 4>(plan, args, stream);
    default: return launch_main<T, 8>(plan, args, stream);
  }
}

}  // namespace

Status launch_skinny_gemm(const SkinnyPlan& plan, const SkinnyOperands& ops, cudaStream_t stream) {
  if (!plan.rejected.empty()) return runtime_error("skinny GEMM: " + plan.rejected);
  if (plan.workspace_bytes() > 0 && !ops.workspace) return runtime_error("skinny GEMM: no workspace for the split-K sums");
  Args a{};
  a.a = ops.a, a.w = ops.w, a.c = ops.c, a.bias = ops.bias, a.res = ops.res;
  a.partial = static_cast<float*>(ops.workspace);
  a.m = plan.shape.m, a.n = plan.shape.n, a.k = plan.shape.k, a.split_k = plan.split_k;
  a.splits = int(plan.splits);
  a.alpha = float(plan.shape.alpha), a.beta = float(plan.shape.beta);
  a.c_t = plan.c, a.bias_t = plan.bias, a.res_t = plan.res, a.act = plan.act;
  // The seeded error: the last split's sums left out; with one split, mma.sync's last warp's, or
  // on the Hopper path the last 64-K step.
  const bool drop = fault::skinny_drop_split();
  a.splits_used = int(plan.splits) - (drop && plan.splits > 1 ? 1 : 0);
  a.warps_used = G::kWarps - (drop && plan.mma && plan.splits == 1 ? 1 : 0);
  a.drop_step = drop && plan.wgmma;
  if (!plan.shape.has_bias) a.bias = nullptr;
  if (!plan.shape.has_residual) a.res = nullptr;
  if (plan.wgmma) return launch_skinny_sm90(plan, a, stream);
  GEXEC_CUDA_TRY(plan.ab == DType::bf16 ? launch_typed<__nv_bfloat16>(plan, a, stream)
                                        : launch_typed<__half>(plan, a, stream));
  if (plan.splits > 1) {
    const int64_t total = plan.shape.m * plan.shape.n;
    const int blocks = int(std::min<int64_t>((total + 255) / 256, 4096));
    skinny_sum<<<blocks, 256, 0, stream>>>(a);
    GEXEC_CUDA_TRY(cudaGetLastError());
  }
  return {};
}

}  // namespace gexec::cuda
