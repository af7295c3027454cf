// The skinny GEMM's Hopper path: C = act(alpha * A W^T + beta * R + bias) for M <= 128 rows of A
// against a weight W stored [N,K] (trans_b), with wgmma.mma_async (sm_90a) reading shared memory
// that TMA (cp.async.bulk.tensor) fills. Bound by reading W once: the point is to keep enough of
// its bytes in flight on every SM, which TMA does without registers, and to give every SM a CTA
// without splitting K (a split's partial sums cost a reduction whose latency outweighs it here).
//
// A CTA takes BN = 32, 64 or 128 rows of W (skinny_plan.hpp: the widest that still gives each SM
// a CTA) and all of K. It is WG consumer warpgroups (1 where M <= 64, else 2), warpgroup c
// computing rows 64c .. 64c + 63 of C (the buffers' rows past M are never loaded; their results
// are not stored), and a producer warp. The producer's one thread issues, for each
// 64-K step, the TMA loads of W's BN-row box and A's M-row box into a ring of `stages` buffers
// (as many as the shared memory of the plan's CTAs per SM holds), each guarded by two mbarriers:
// `full` (armed with the two boxes' bytes; the loads complete it) and `empty` (the consumer warps
// arrive when their WGMMAs no longer read it). Each consumer warpgroup issues the step's four
// m64nBNk16 WGMMAs, keeping one step's group in flight (wgmma.wait_group 1) before releasing the
// stage it read; then the epilogue from the registers, straight to C. Layout, swizzle and
// descriptors as in grouped_gemm_sm90.cu (sm90_async.cuh, desc_sw128): both operands K-major.
//
// The accumulator fragment of wgmma .m64nBNk16 (sm90_async.cuh): thread t of warpgroup c (warp w
// of it, lane l) holds d[4j + 2h + e] = C[64c + 16w + l/4 + 8h][n0 + 8j + 2(l%4) + e].
#include <cuda.h>  // CUtensorMap: a type only
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "check.hpp"
#include "pdl.cuh"
#include "skinny_args.cuh"
#include "sm90_async.cuh"
#include "tma_map.hpp"

namespace gexec::cuda {
namespace {

using G = SkinnyGeometry;
constexpr int kAlign = 1024;  // the 128-byte swizzle's period
constexpr const char* kWho = "skinny GEMM (WGMMA)";
static_assert(G::kWgStepK * 2 == kTmaRowBytes, "a step is one swizzle row of 16-bit values");

constexpr int threads_for(int wg) { return wg * 128 + 32; }
constexpr int smem_for(int stages, int bn, int wg) { return stages * G::wg_stage_bytes(bn, wg * 64) + kAlign + 16 * stages; }

// Where a consumer thread's accumulators go: d[4j + 2h + e] is C[m0 + 8h][col0 + 8j + e].
struct Place {
  int64_t m0, col0, m, n;  // and C's rows and columns
  __device__ __forceinline__ bool in(int h, int j) const { return m0 + 8 * h < m && col0 + 8 * j < n; }
  __device__ __forceinline__ int64_t offset(int h, int j) const { return (m0 + 8 * h) * n + col0 + 8 * j; }
};

template <class R, int N>
__device__ __forceinline__ void add_residual(float (&d)[N], const Place& at, const void* res, float beta) {
  const R* r = static_cast<const R*>(res);
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int j = 0; j < N / 4; ++j)
      if (at.in(h, j)) {
        d[4 * j + 2 * h] += beta * as_f32(r[at.offset(h, j)]);
        d[4 * j + 2 * h + 1] += beta * as_f32(r[at.offset(h, j) + 1]);
      }
}

template <class B, int N>
__device__ __forceinline__ void add_bias(float (&d)[N], const Place& at, const void* bias) {
  const B* b = static_cast<const B*>(bias);
#pragma unroll
  for (int j = 0; j < N / 4; ++j) {
    if (at.col0 + 8 * j >= at.n) continue;
    const float b0 = as_f32(b[at.col0 + 8 * j]), b1 = as_f32(b[at.col0 + 8 * j + 1]);
    d[4 * j] += b0, d[4 * j + 1] += b1, d[4 * j + 2] += b0, d[4 * j + 3] += b1;
  }
}

// Two consecutive columns a store (col0 even, N even: aligned to the pair).
template <class C, int N>
__device__ __forceinline__ void store(const float (&d)[N], const Place& at, void* out) {
  C* c = static_cast<C*>(out);
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int j = 0; j < N / 4; ++j)
      if (at.in(h, j)) store_pair(c + at.offset(h, j), d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
}

#ifdef GEXEC_SM90A
// D (64 x BN, f32) += A B, one instruction's k (16 values).
template <class T, int BN>
__device__ __forceinline__ void wgmma_skinny(float (&d)[BN / 2], uint64_t da, uint64_t db) {
  constexpr bool kBf = std::is_same_v<T, __nv_bfloat16>;
  const int scale_d = 1;
  if constexpr (BN == 32) {
    if constexpr (kBf) GEXEC_WGMMA_32("m64n32k16.f32.bf16.bf16", ", 1, 1, 0, 0");
    else GEXEC_WGMMA_32("m64n32k16.f32.f16.f16", ", 1, 1, 0, 0");
  } else if constexpr (BN == 64) {
    if constexpr (kBf) GEXEC_WGMMA_64("m64n64k16.f32.bf16.bf16", ", 1, 1, 0, 0");
    else GEXEC_WGMMA_64("m64n64k16.f32.f16.f16", ", 1, 1, 0, 0");
  } else {
    static_assert(BN == 128, "blocks of 32, 64 or 128 weight rows");
    if constexpr (kBf) GEXEC_WGMMA_128("m64n128k16.f32.bf16.bf16", ", 1, 1, 0, 0");
    else GEXEC_WGMMA_128("m64n128k16.f32.f16.f16", ", 1, 1, 0, 0");
  }
}
#endif  // GEXEC_SM90A

// Grid: one CTA per block of BN weight rows.
template <class T, int BN, int WG>
__global__ void __launch_bounds__(threads_for(WG), 1)
    skinny_wgmma(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a,
                 const SkinnyArgs p, int stages) {
#ifdef GEXEC_SM90A
  constexpr int kWBytes = BN * kTmaRowBytes, kABytes = WG * 64 * kTmaRowBytes;
  constexpr int kConsumerWarps = 4 * WG;
  constexpr int kAcc = BN / 2;  // f32 accumulators a consumer thread holds
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + kAlign - 1) & ~uint32_t(kAlign - 1);
  const uint32_t s_a = base, s_w = base + stages * kABytes;
  const uint32_t full0 = s_w + stages * kWBytes, empty0 = full0 + stages * 8;  // 8 bytes a barrier
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int n0 = int(blockIdx.x) * BN;
  const int steps = int((p.k + G::kWgStepK - 1) / G::kWgStepK);

  // A's box is its M rows. The rows past M of every stage's buffer, which WGMMA reads too, hold
  // whatever the shared memory held: row r of D is row r of A times W, whatever the other rows
  // hold (NaN included), and the rows past M of D are not stored. (A box of all 64 rows, TMA
  // filling those past the tensor with zeros, took about 1 ns more a filled row and step on each
  // SM: at 1 x 4096 x 4096 on an H100, 20.59 us against 16.59 at 64 rows; zeroing them once at
  // the start cost 0.9 us at 32 rows.)
  const int rows_a = int(p.m);
  if (tid == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Launched as a programmatic dependent (pdl.cuh): the grid behind may start as our CTAs leave
  // their SMs, and nothing global is touched before the grid ahead is done: its outputs may be A,
  // W, the bias or the residual, and it may still read C. (An L2 prefetch of W's first boxes
  // meanwhile, a hint that reads no value, cost 1 to 2 us more than it saved on an H100.)
  allow_dependents();
  if (warp == kConsumerWarps) {
    // The producer.
    if (lane == 0) {
      tma_prefetch_map(&map_w);
      tma_prefetch_map(&map_a);
      dependency_wait();
      int stage = 0;
      uint32_t phase = 0;
      for (int s = 0; s < steps; ++s) {
        const uint32_t full = full0 + 8 * stage;
        mbar_wait(empty0 + 8 * stage, phase ^ 1);
        mbar_arrive_expect_tx(full, kWBytes + rows_a * kTmaRowBytes);
        // Past K, TMA fills zeros. skinny-drop-split (the seeded error): the last step's boxes are
        // read from past K, so its products are left out of the sums.
        const int kc = (p.drop_step && s == steps - 1 ? steps : s) * G::kWgStepK;
        tma_load_2d(s_w + stage * kWBytes, &map_w, kc, n0, full);
        tma_load_2d(s_a + stage * kABytes, &map_a, kc, 0, full);
        if (++stage == stages) stage = 0, phase ^= 1;
      }
    }
    return;
  }

  // A consumer: warpgroup c, rows 64c .. 64c + 63 of C.
  const int c = warp / 4, wq = warp % 4;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  int stage = 0, prev = 0;
  uint32_t phase = 0;
  for (int s = 0; s < steps; ++s) {
    mbar_wait(full0 + 8 * stage, phase);
    wgmma_fence();
    fence_regs(acc);
#pragma unroll
    for (int kk = 0; kk < kTmaRowBytes / 32; ++kk)
      wgmma_skinny<T, BN>(acc, desc_sw128(s_a + stage * kABytes + c * 64 * kTmaRowBytes + kk * 32),
                          desc_sw128(s_w + stage * kWBytes + kk * 32));
    wgmma_commit();
    fence_regs(acc);
    if (s > 0) {
      wgmma_wait<1>();  // step s - 1's WGMMAs are done: its stage may be refilled
      if (lane == 0) mbar_arrive(empty0 + 8 * prev);
    }
    prev = stage;
    if (++stage == stages) stage = 0, phase ^= 1;
  }
  wgmma_wait<0>();
  fence_regs(acc);
  dependency_wait();  // the bias and the residual are read, C written, below

  // The epilogue, in place on the accumulators (static indices, the dtype switches outside the
  // loops: the loops unroll and the accumulators stay in registers): alpha, the residual, the
  // bias, the activation in f32, then one rounding to C. A thread's rows m0 and m0 + 8, its
  // columns col0 + 8j (+ 1); rows past M and columns past N (N % 8 == 0: a group of 8 is all in
  // or all out) are not stored.
  const Place at{64 * c + 16 * wq + lane / 4, n0 + 2 * (lane % 4), p.m, p.n};
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = p.alpha * acc[i];
  if (p.res) switch (p.res_t) {
      case DType::f16: add_residual<__half>(acc, at, p.res, p.beta); break;
      case DType::bf16: add_residual<__nv_bfloat16>(acc, at, p.res, p.beta); break;
      default: add_residual<float>(acc, at, p.res, p.beta); break;
    }
  if (p.bias) switch (p.bias_t) {
      case DType::f16: add_bias<__half>(acc, at, p.bias); break;
      case DType::bf16: add_bias<__nv_bfloat16>(acc, at, p.bias); break;
      default: add_bias<float>(acc, at, p.bias); break;
    }
  activate_all(p.act, p.c_t != DType::f32, acc);
  switch (p.c_t) {
    case DType::f16: store<__half>(acc, at, p.c); break;
    case DType::bf16: store<__nv_bfloat16>(acc, at, p.c); break;
    default: store<float>(acc, at, p.c); break;
  }
#endif  // GEXEC_SM90A
}

template <class T, int BN, int WG>
Status launch_typed(const SkinnyPlan& plan, const CUtensorMap& mw, const CUtensorMap& ma, const SkinnyArgs& args,
                    cudaStream_t stream) {
  auto* kernel = skinny_wgmma<T, BN, WG>;
  const int smem = smem_for(plan.stages, BN, WG);
  GEXEC_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  GEXEC_CUDA_TRY(launch_pdl(kernel, dim3(unsigned(plan.col_blocks)), dim3(threads_for(WG)), size_t(smem), stream,
                            plan.pdl, mw, ma, args, plan.stages));
  return Status::success();
}

template <class T, int WG>
Status launch_bn(const SkinnyPlan& plan, const CUtensorMap& mw, const CUtensorMap& ma, const SkinnyArgs& args,
                 cudaStream_t stream) {
  switch (plan.block_n) {
    case 32: return launch_typed<T, 32, WG>(plan, mw, ma, args, stream);
    case 64: return launch_typed<T, 64, WG>(plan, mw, ma, args, stream);
    default: return launch_typed<T, 128, WG>(plan, mw, ma, args, stream);
  }
}

template <class T>
Status launch_tile(const SkinnyPlan& plan, const CUtensorMap& mw, const CUtensorMap& ma, const SkinnyArgs& args,
                   cudaStream_t stream) {
  return plan.row_tile == 64 ? launch_bn<T, 1>(plan, mw, ma, args, stream) : launch_bn<T, 2>(plan, mw, ma, args, stream);
}

}  // namespace

Status launch_skinny_sm90(const SkinnyPlan& plan, const SkinnyArgs& args, cudaStream_t stream) {
  const bool fits = plan.wgmma && plan.splits == 1 && (plan.row_tile == 64 || plan.row_tile == 128) &&
                    plan.shape.m <= plan.row_tile && (plan.block_n == 32 || plan.block_n == 64 || plan.block_n == 128) &&
                    plan.stages >= 2 && smem_for(plan.stages, plan.block_n, plan.row_tile / 64) <= G::kWgSmemPerSm + kAlign + 16 * plan.stages;
  if (!fits) return runtime_error(std::string(kWho) + ": launched with a plan it does not take");
  CUtensorMap mw, ma;
  const auto k = uint64_t(plan.shape.k);
  if (Status s = encode_tma_map(&mw, plan.ab, args.w, uint64_t(plan.shape.n), k, uint32_t(plan.block_n), kWho); !s.ok())
    return s;
  if (Status s = encode_tma_map(&ma, plan.ab, args.a, uint64_t(plan.shape.m), k, uint32_t(plan.shape.m), kWho); !s.ok())
    return s;
  return plan.ab == DType::bf16 ? launch_tile<__nv_bfloat16>(plan, mw, ma, args, stream)
                                : launch_tile<__half>(plan, mw, ma, args, stream);
}

}  // namespace gexec::cuda
