// The skinny GEMM's device code: C = act(alpha * A W + beta * R + bias) for M <= 128 rows of A
// against a large f16/bf16 weight W, on CUDA cores (f32 FMAs), bound by reading W once.
//
// Each CTA takes a row tile of A (1 to 8 rows), a block of output columns and one split of K. It
// stages its rows of A for its split in shared memory as f32 (once), then streams its part of W
// with 16-byte loads straight from global memory, several in flight per thread:
// - W stored [K,N] (kn): a warp reads 32 consecutive 16-byte vectors of one weight row (512
//   bytes); the 8 warps take every 8th row of the split; the warps' sums are added in warp order
//   through shared memory.
// - W stored [N,K] (nk, trans_b): a warp streams 4 weight rows, its lanes 8 consecutive K each
//   (512 bytes per row and pass); the lanes' sums are added by a butterfly of shuffles and lane 0's
//   result taken.
// One split: the CTA applies the epilogue and writes C. Several: each writes its f32 partial sums
// to a workspace [split][M][N], and a second launch adds them in split order, then the epilogue.
// The order is fixed (skinny_plan.hpp, skinny_order), so runs are bit-identical.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "activations.cuh"
#include "check.hpp"
#include "fault.hpp"
#include "skinny_gemm.hpp"

namespace gexec::cuda {
namespace {

using G = SkinnyGeometry;

struct Args {
  const void* a;
  const void* w;
  void* c;
  const void* bias;
  const void* res;
  float* partial;  // [splits][m][n] where splits > 1
  int64_t m, n, k, split_k;
  int splits;
  float alpha, beta;
  DType c_t, bias_t, res_t;
  Act act;
};

__device__ __forceinline__ float load_f32(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case DType::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store_f32(void* p, DType t, int64_t i, float v) {
  switch (t) {
    case DType::f16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case DType::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

template <class T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

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

// alpha * sum + beta * R + bias, then the activation, in f32; rounded once to C's dtype by the caller.
__device__ __forceinline__ float epilogue(const Args& p, int64_t m, int64_t n, float sum) {
  float v = p.alpha * sum;
  if (p.res) v += p.beta * load_f32(p.res, p.res_t, m * p.n + n);
  if (p.bias) v += load_f32(p.bias, p.bias_t, n);
  switch (p.act) {
    case Act::relu: return act::relu(v);
    case Act::gelu: return act::gelu_tanh(v);
    default: return v;
  }
}

// Where a CTA's sum for (m, n) goes: C through the epilogue, or the workspace.
__device__ __forceinline__ void finish(const Args& p, int split, int64_t m, int64_t n, float sum) {
  if (p.splits == 1) store_f32(p.c, p.c_t, m * p.n + n, epilogue(p, m, n, sum));
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
      as[r * split + kk] = m0 + r < p.m && k0 + kk < p.k ? to_f32(a[(m0 + r) * p.k + k0 + kk]) : 0.0f;
  __syncthreads();
}

// W [K,N]: grid (row tiles, column blocks of 256, splits).
template <class T, int RT>
__global__ void __launch_bounds__(G::kThreads) skinny_kn(const Args p) {
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

// W [N,K] (trans_b): grid (row tiles, column blocks of 32, splits); warp w takes weight rows
// 4w .. 4w+3 of the block.
template <class T, int RT>
__global__ void __launch_bounds__(G::kThreads) skinny_nk(const Args p) {
  extern __shared__ float smem[];
  float* as = smem;  // RT x split_k
  const int64_t m0 = int64_t(blockIdx.x) * RT, k0 = int64_t(blockIdx.z) * p.split_k;
  stage_a<T, RT>(p, as, m0, k0);
  constexpr int R = G::kRowsPerWarpNK;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t row0 = int64_t(blockIdx.y) * G::kColsNK + int64_t(warp) * R;
  const int64_t kc = min(p.split_k, p.k - k0);  // a multiple of 8: K % 8 == 0
  float acc[R][RT] = {};
  const T* w = static_cast<const T*>(p.w);
  for (int64_t kk = int64_t(lane) * G::kVec; kk < kc; kk += 32 * G::kVec) {
    uint4 v[R];
#pragma unroll
    for (int q = 0; q < R; ++q)
      v[q] = row0 + q < p.n ? load16(w + (row0 + q) * p.k + k0 + kk) : make_uint4(0, 0, 0, 0);
    float x[RT][G::kVec];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
      for (int j = 0; j < G::kVec; ++j) x[r][j] = as[r * p.split_k + kk + j];
#pragma unroll
    for (int q = 0; q < R; ++q) {
      float f[G::kVec];
      widen8<T>(v[q], f);
#pragma unroll
      for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int j = 0; j < G::kVec; ++j) acc[q][r] = fmaf(x[r][j], f[j], acc[q][r]);
    }
  }
  // Lane q * RT + r ends with the sum of (row q, A row r); one epilogue per lane, written once
  // (an epilogue per (q, r) would be cloned for every path through its dtype switches).
  float mine = 0.0f;
#pragma unroll
  for (int q = 0; q < R; ++q)
#pragma unroll
    for (int r = 0; r < RT; ++r) {
      float s = acc[q][r];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
      s = __shfl_sync(0xffffffffu, s, 0);  // lane 0's order, the declared one
      if (lane == q * RT + r) mine = s;
    }
  const int64_t m = m0 + lane % RT, n = row0 + lane / RT;
  if (lane < R * RT && m < p.m && n < p.n) finish(p, blockIdx.z, m, n, mine);
}

// The split-K sum: each output element's partial sums added in split order, then the epilogue.
// `used` splits are added (all of them, except under the skinny-drop-split fault).
__global__ void skinny_sum(const Args p, int used) {
  const int64_t total = p.m * p.n;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    float s = p.partial[i];
    for (int sp = 1; sp < used; ++sp) s += p.partial[int64_t(sp) * total + i];
    store_f32(p.c, p.c_t, i, epilogue(p, i / p.n, i % p.n, s));
  }
}

template <class T, int RT>
cudaError_t launch_main(const SkinnyPlan& plan, const Args& args, cudaStream_t stream) {
  const dim3 grid(unsigned(plan.row_tiles), unsigned(plan.col_blocks), unsigned(plan.splits));
  const size_t smem = size_t(RT) * size_t(plan.split_k) * 4 + (plan.nk ? 0 : size_t(RT) * G::kColsKN * 4);
  if (plan.nk) skinny_nk<T, RT><<<grid, G::kThreads, smem, stream>>>(args);
  else skinny_kn<T, RT><<<grid, G::kThreads, smem, stream>>>(args);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_typed(const SkinnyPlan& plan, const Args& args, cudaStream_t stream) {
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
  if (plan.splits > 1 && !ops.workspace) return runtime_error("skinny GEMM: no workspace for the split-K sums");
  Args a{};
  a.a = ops.a, a.w = ops.w, a.c = ops.c, a.bias = ops.bias, a.res = ops.res;
  a.partial = static_cast<float*>(ops.workspace);
  a.m = plan.shape.m, a.n = plan.shape.n, a.k = plan.shape.k, a.split_k = plan.split_k;
  a.splits = int(plan.splits);
  a.alpha = float(plan.shape.alpha), a.beta = float(plan.shape.beta);
  a.c_t = plan.c, a.bias_t = plan.bias, a.res_t = plan.res, a.act = plan.act;
  if (!plan.shape.has_bias) a.bias = nullptr;
  if (!plan.shape.has_residual) a.res = nullptr;
  GEXEC_CUDA_TRY(plan.ab == DType::bf16 ? launch_typed<__nv_bfloat16>(plan, a, stream)
                                        : launch_typed<__half>(plan, a, stream));
  if (plan.splits > 1) {
    const int used = int(plan.splits) - (fault::skinny_drop_split() ? 1 : 0);
    const int64_t total = plan.shape.m * plan.shape.n;
    const int blocks = int(std::min<int64_t>((total + 255) / 256, 4096));
    skinny_sum<<<blocks, 256, 0, stream>>>(a, used);
    GEXEC_CUDA_TRY(cudaGetLastError());
  }
  return {};
}

}  // namespace gexec::cuda
