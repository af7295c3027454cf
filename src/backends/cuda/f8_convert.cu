// The CUDA FP8 conversions (f8_convert.hpp). The CAST computes as the reference does: the real
// value in double (stored x scale, real_value.cuh), divided by Y's scale in double, rounded once
// with the shared codec (include/gexec/ir/f8.hpp), so that its bytes equal the reference's.
#include "f8_convert.hpp"
#include "transpose.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <type_traits>

#include "check.hpp"
#include "element_f32.cuh"
#include "gexec/ir/f8.hpp"
#include "real_value.cuh"

namespace gexec::cuda {
namespace {

using Side = F8Side;

// v, already divided by the side's scale, stored in its dtype.
__device__ void store_value(const Side& s, int64_t storage, double v) {
  switch (DType(s.dtype)) {
    // One rounding from double, as the reference's (rounding.hpp gives the same bits on both sides).
    case DType::f16: static_cast<uint16_t*>(s.data)[storage] = round_to_f16_bits(v); break;
    case DType::bf16: static_cast<uint16_t*>(s.data)[storage] = round_to_bf16_bits(v); break;
    case DType::f32: static_cast<float*>(s.data)[storage] = float(v); break;
    case DType::f8e4m3: static_cast<uint8_t*>(s.data)[storage] = f8::encode(v, f8::e4m3()); break;
    case DType::f8e5m2: static_cast<uint8_t*>(s.data)[storage] = f8::encode(v, f8::e5m2()); break;
    case DType::i32: break;  // no CAST reads or writes i32 (graph.cpp refuses it)
  }
}

__device__ void store_real(const Side& s, int64_t storage, int64_t logical, double v) {
  store_value(s, storage, v / side_scale(s, logical));
}

// x / S coded in double, as f8::encode gives it; kept out of line, so that the registers it needs
// do not lower the occupancy of the kernel that (almost never) calls it.
__device__ __noinline__ uint8_t encode_quotient_in_double(float x, float scale, bool e4m3) {
  return f8::encode(double(x) / double(scale), e4m3 ? f8::e4m3() : f8::e5m2());
}

// The code of the exact quotient x / S, as f8::encode(double(x) / double(S)) gives it, in f32:
// the quotient rounded to nearest, its remainder x - q S (exact in an FMA: a correctly rounded
// quotient's remainder is representable) telling whether it was exact and on which side it fell;
// stepped back toward zero where it overshot and given an odd last bit where inexact, it is x / S
// rounded to odd with 24 bits, which the hardware's f32 -> f8 conversion (nearest even,
// saturating) rounds once more exactly as a single rounding of x / S would (24 >= 4 + 2 bits).
// The remainder is exact while nothing underflows: S from 2^-100 to the largest float. Beyond that
// (S computed from a block whose largest value is below about 3e-28, or infinite) the division is
// done in double. Out of line: the quantizing kernel calls it only for f8 subnormals, NaN and an S
// out of range, and its registers should not lower that kernel's occupancy.
__device__ __noinline__ uint8_t encode_quotient(float x, float scale, bool e4m3) {
  if (x != x) return uint8_t((signbit(x) ? 0x80u : 0u) | 0x7Fu);
  if (!(scale >= 0x1p-100f && scale <= 3.40282347e38f)) return encode_quotient_in_double(x, scale, e4m3);
  float q = x / scale;
  const float r = fmaf(-q, scale, x);
  if (r != 0.0f) {
    uint32_t bits = __float_as_uint(q);
    if ((r < 0.0f) != (q < 0.0f) && q != 0.0f) bits -= 1;  // |q| beyond |x / S|: one step toward zero
    q = __uint_as_float(bits | 1u);
  }
  return uint8_t(__nv_cvt_float_to_fp8(q, __NV_SATFINITE, e4m3 ? __NV_E4M3 : __NV_E5M2));
}

// Sixteen bytes of a row-major x as floats (exact: f16, bf16 and f32 all are): eight f16 or bf16
// values, or four f32.
template <typename T>
__device__ inline void unpack16(const uint4 w, float* v) {
  if constexpr (std::is_same_v<T, float>) {
    v[0] = __uint_as_float(w.x), v[1] = __uint_as_float(w.y), v[2] = __uint_as_float(w.z), v[3] = __uint_as_float(w.w);
  } else {
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        v[2 * i] = __uint_as_float(words[i] << 16);
        v[2 * i + 1] = __uint_as_float(words[i] & 0xFFFF0000u);
      } else {
        const __half2 h = *reinterpret_cast<const __half2*>(&words[i]);
        v[2 * i] = __low2float(h);
        v[2 * i + 1] = __high2float(h);
      }
    }
  }
}

// The largest of each 16-bit half: one instruction on sm_90 (max.u16x2).
__device__ inline uint32_t max_u16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t r;
  asm("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return __vmaxu2(a, b);
#endif
}

// A value of T's magnitude bits (sign cleared): for non-negative values their integer order is the
// values' order, infinity's bits are kInfBits and a NaN's are above it.
template <typename T>
constexpr uint32_t kInfBits = std::is_same_v<T, float> ? 0x7F800000u : std::is_same_v<T, __half> ? 0x7C00u : 0x7F80u;

template <typename T>
__device__ inline float magnitude_value(uint32_t bits) {
  if constexpr (std::is_same_v<T, float>) return __uint_as_float(bits);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __uint_as_float(bits << 16);
  else return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}

// The largest magnitude bits among N uint4s of T; with kFinite, NaNs left out (as fmaxf leaves
// them out of the host's amax). The integer maximum keeps a NaN, so that a thread can tell that it
// holds one; 16-bit values take two a max.u16x2.
template <typename T, int N, bool kFinite = false>
__device__ inline uint32_t magnitude_bits(const uint4* w) {
  uint32_t m = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint32_t words[4] = {w[j].x, w[j].y, w[j].z, w[j].w};
#pragma unroll
    for (uint32_t word : words) {
      if constexpr (std::is_same_v<T, float>) {
        const uint32_t a = word & 0x7FFFFFFFu;
        if (!kFinite || a <= kInfBits<T>) m = max(m, a);
      } else if constexpr (kFinite) {
        const uint32_t a = word & 0x7FFFu, b = (word >> 16) & 0x7FFFu;
        if (a <= kInfBits<T>) m = max(m, a);
        if (b <= kInfBits<T>) m = max(m, b);
      } else {
        m = max_u16x2(m, word & 0x7FFF7FFFu);
      }
    }
  }
  if constexpr (!std::is_same_v<T, float> && !kFinite) m = max(m & 0xFFFFu, m >> 16);
  return m;
}

// The codes of four values times r.lo and times r.hi (f8::reciprocal_bracket), four to a word from
// the low byte; the hardware's conversion rounds to nearest even and saturates, as f8::encode.
template <bool E4M3>
__device__ inline void bracket_codes(const float* v, f8::ReciprocalBracket r, uint32_t& lo, uint32_t& hi) {
  constexpr __nv_fp8_interpretation_t kind = E4M3 ? __NV_E4M3 : __NV_E5M2;
  const uint32_t l0 = __nv_cvt_float2_to_fp8x2(make_float2(v[0] * r.lo, v[1] * r.lo), __NV_SATFINITE, kind);
  const uint32_t l1 = __nv_cvt_float2_to_fp8x2(make_float2(v[2] * r.lo, v[3] * r.lo), __NV_SATFINITE, kind);
  const uint32_t h0 = __nv_cvt_float2_to_fp8x2(make_float2(v[0] * r.hi, v[1] * r.hi), __NV_SATFINITE, kind);
  const uint32_t h1 = __nv_cvt_float2_to_fp8x2(make_float2(v[2] * r.hi, v[3] * r.hi), __NV_SATFINITE, kind);
  lo = __byte_perm(l0, l1, 0x5410);
  hi = __byte_perm(h0, h1, 0x5410);
}

// Codes again, one by one from x, the values whose bytes are set in `differ` (their brackets coded
// apart: next to a midpoint), or all W * 4 where `all`: f8::quotient_code, or the exact division
// for what it does not take (f8 subnormals, NaN, S outside the bracket's range). Few threads come
// here (bf16 inputs put a few values in a thousand on a midpoint), so x is read again rather than
// kept, and each code is stored over the one the thread has just written.
template <bool E4M3, int W>
__device__ inline void recode(const void* x, DType xt, uint8_t* y, const uint32_t* differ, bool all, float scale) {
  constexpr f8::Format format = E4M3 ? f8::e4m3() : f8::e5m2();
  const bool bracket = f8::reciprocal_bracket_holds(scale);
  const float rcp = 1.0f / scale;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    for (uint32_t d = all ? ~0u : differ[w]; d != 0;) {
      const int i = 4 * w + ((__ffs(int(d)) - 1) >> 3);
      d &= ~(0xFFu << (8 * (i - 4 * w)));
      const float v = load_f32(x, xt, i);
      const int code = bracket ? f8::quotient_code(v, scale, v * rcp, format) : -1;
      y[i] = uint8_t(code >= 0 ? uint32_t(code) : encode_quotient(v, scale, E4M3));
    }
  }
}

// How many rows ahead of the one being coded each warp asks L2 to fetch (cp.async.bulk.prefetch
// on sm_90: no registers held for them, where the registers hold only the next row at the
// occupancy that the coding leaves). Measured on an H100, 8192 x 8192 bf16 against a device copy of
// the same bytes in the same run: 1.20x the copy without it, 1.21x with 1 row, 1.10x with 2, 1.16x
// with 3; 2 or 3 rows in registers instead (3 CTAs an SM) 1.36x and 1.38x, and copies into shared
// memory (cp.async, 1 or 3 rows ahead) 1.55x and 1.62x.
constexpr int kL2Ahead = 2;

// Blocks of 1 x 2^bshift (VEC to 256) along the rows of a row-major x of T. Each thread holds VEC
// (8 or 16) consecutive elements of a row, the 2^bshift / VEC lanes of a block reduce its amax (as
// magnitude bits, one warp reduction); a CTA covers VEC x blockDim.x columns, and the grid's CTAs
// step over the rows by gridDim.y, each loading its next row into registers and the one kL2Ahead
// on into L2 before it codes this one, so that loads stay in flight while it computes. Every value
// is converted twice, times the two sides of f8::reciprocal_bracket: where the codes agree they
// are x / S's, and the rare values where they do not are coded again (recode). That is two
// multiplications and a conversion (of a pair) a value, where a test of the product's bits against
// the midpoints took about ten integer operations and made the kernel bound by its arithmetic
// (1.4x a copy of its bytes on an H100, 1.85x on the H200). Indices are 32-bit within a row. cols
// is a multiple of VEC; a block cut by the end of its row has lanes that hold nothing.
template <typename T, bool E4M3, int VEC>
__global__ void __launch_bounds__(256) quantize_row_blocks(Side x, Side y, float* s, int bshift) {
  constexpr int kWords = VEC * int(sizeof(T)) / 16, kPer = 16 / int(sizeof(T));  // uint4s per thread, values per uint4
  constexpr f8::Format format = E4M3 ? f8::e4m3() : f8::e5m2();
  const int cols = int(y.cols), group = (1 << bshift) / VEC;
  const int64_t rows = y.rows;
  const int block_cols = (cols + (1 << bshift) - 1) >> bshift;
  const int lane = int(threadIdx.x & 31);
  const unsigned mask = group >= 32 ? 0xFFFFFFFFu : ((1u << group) - 1u) << (lane / group * group);
  const int col = (int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x)) * VEC;
  const bool holds = col < cols, first = (threadIdx.x & (group - 1)) == 0;
  const T* xs = static_cast<const T*>(x.data);
  uint8_t* ys = static_cast<uint8_t*>(y.data);
  auto fetch = [&](uint4* w, int64_t row) {
#pragma unroll
    for (int j = 0; j < kWords; ++j) {
      w[j] = make_uint4(0, 0, 0, 0);
      if (holds && row < rows) w[j] = reinterpret_cast<const uint4*>(xs + row * cols + col)[j];
    }
  };
  uint4 cur[kWords];
  int64_t row = blockIdx.y;
  const int64_t step = gridDim.y;
  fetch(cur, row);
  // Every thread of a CTA takes the same rows, so that the reductions see all their lanes.
  for (; row < rows; row += step) {
    uint4 next[kWords];
    fetch(next, row + step);
    // The row kL2Ahead on into L2: lane 0 of each warp asks for the warp's bytes (a multiple of 16).
    if (kL2Ahead > 0 && lane == 0 && holds && row + kL2Ahead * step < rows) {
      const char* ahead = reinterpret_cast<const char*>(xs + (row + kL2Ahead * step) * cols + col);
      const int bytes = min(32, (cols - col) / VEC) * VEC * int(sizeof(T));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(ahead), "r"(bytes) : "memory");
#else
      for (int b = 0; b < bytes; b += 128) asm volatile("prefetch.global.L2 [%0];\n" ::"l"(ahead + b));
#endif
    }
    const uint32_t mine = magnitude_bits<T, kWords>(cur);
    uint32_t amax = __reduce_max_sync(mask, mine);
    // A NaN in the block (the same answer on all its lanes): its amax again without NaNs.
    if (amax > kInfBits<T>) amax = __reduce_max_sync(mask, magnitude_bits<T, kWords, true>(cur));
    if (holds) {
      const float scale = f8::block_scale(magnitude_value<T>(amax), format);  // IEEE division: no fast-math
      if (first) s[row * block_cols + (col >> bshift)] = scale;
      const f8::ReciprocalBracket r = f8::reciprocal_bracket(scale);
      uint32_t lo[VEC / 4], differ[VEC / 4], any = 0;
#pragma unroll
      for (int j = 0; j < kWords; ++j) {
        float v[kPer];
        unpack16<T>(cur[j], v);
#pragma unroll
        for (int k = 0; k < kPer / 4; ++k) {
          uint32_t hi;
          const int w = j * kPer / 4 + k;
          bracket_codes<E4M3>(v + 4 * k, r, lo[w], hi);
          differ[w] = lo[w] ^ hi;
          any |= differ[w];
        }
      }
      uint8_t* out = ys + row * cols + col;
      if constexpr (VEC == 16)
        *reinterpret_cast<uint4*>(out) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
      else
        *reinterpret_cast<uint2*>(out) = make_uint2(lo[0], lo[1]);
      // Out of the bracket's range (S from a block of subnormals or with an infinity) or a NaN
      // among the thread's values: all of them again.
      const bool all = !f8::reciprocal_bracket_holds(scale) || mine > kInfBits<T>;
      if (all || any) recode<E4M3, VEC / 4>(xs + row * cols + col, DType(x.dtype), out, differ, all, scale);
    }
#pragma unroll
    for (int j = 0; j < kWords; ++j) cur[j] = next[j];
  }
}

template <typename T, bool E4M3>
void launch_row_blocks(const Side& x, const Side& y, float* s, int bshift, int vec, int sms, cudaStream_t stream) {
  // A power of two from 32 to 256 threads: a multiple of the lanes of a block (up to 32), and no
  // more than a row needs; CTAs for 16 per SM (the best of 4 to 16 per SM measured on the H200),
  // each stepping over rows.
  const int64_t chunks = y.cols / vec;
  int threads = 32;
  while (threads < 256 && threads < chunks) threads *= 2;
  const int64_t across = (chunks + threads - 1) / threads;
  const int64_t down = std::max<int64_t>(1, std::min<int64_t>({y.rows, int64_t(sms) * 16 / across, 65535}));
  const dim3 grid{unsigned(across), unsigned(down)};
  if constexpr (!std::is_same_v<T, float>) {
    if (vec == 16) {
      quantize_row_blocks<T, E4M3, 16><<<grid, threads, 0, stream>>>(x, y, s, bshift);
      return;
    }
  }
  quantize_row_blocks<T, E4M3, 8><<<grid, threads, 0, stream>>>(x, y, s, bshift);
}

template <typename T>
void launch_row_blocks(const Side& x, const Side& y, float* s, int bshift, int vec, int sms, cudaStream_t stream) {
  if (DType(y.dtype) == DType::f8e4m3)
    launch_row_blocks<T, true>(x, y, s, bshift, vec, sms, stream);
  else
    launch_row_blocks<T, false>(x, y, s, bshift, vec, sms, stream);
}

// Any blocks, layouts and dtypes: one CTA per block, a pass for its amax, a pass for the values.
__global__ void quantize_blocks(Side x, Side y, float* s) {
  __shared__ float warp_max[32];
  __shared__ float shared_scale;
  const int64_t block_rows = (y.rows + y.br - 1) / y.br, block_cols = (y.cols + y.bc - 1) / y.bc;
  const f8::Format format = DType(y.dtype) == DType::f8e4m3 ? f8::e4m3() : f8::e5m2();
  for (int64_t b = blockIdx.x; b < block_rows * block_cols; b += gridDim.x) {
    const int64_t r0 = (b / block_cols) * y.br, c0 = (b % block_cols) * y.bc;
    const int64_t h = y.rows - r0 < y.br ? y.rows - r0 : y.br, w = y.cols - c0 < y.bc ? y.cols - c0 : y.bc;
    float m = 0;
    for (int64_t i = threadIdx.x; i < h * w; i += blockDim.x) {
      const int64_t l = (r0 + i / w) * y.cols + c0 + i % w;
      m = fmaxf(m, float(fabs(load_real(x, storage_of(x, l), l))));
    }
    for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, off));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      float all = 0;
      for (unsigned i = 0; i < blockDim.x / 32; ++i) all = fmaxf(all, warp_max[i]);
      shared_scale = f8::block_scale(all, format);
      s[b] = shared_scale;
    }
    __syncthreads();
    const double scale = shared_scale;
    for (int64_t i = threadIdx.x; i < h * w; i += blockDim.x) {
      const int64_t l = (r0 + i / w) * y.cols + c0 + i % w;
      store_value(y, storage_of(y, l), load_real(x, storage_of(x, l), l) / scale);
    }
    __syncthreads();  // warp_max and shared_scale are reused by the next block
  }
}

__global__ void arrange_scales(const float* s, float* out, int64_t outer, int64_t ld, int64_t inner, int64_t so,
                               int64_t si) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < outer * ld; k += stride) {
    const int64_t o = k / ld, i = k % ld;
    out[k] = i < inner ? s[o * so + i * si] : 1.0f;
  }
}

// amax as the bits of a non-negative float: their integer order is the floats' order.
__global__ void f8_cast(Side x, Side y, int64_t n, unsigned int* amax) {
  float local = 0;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < n; l += int64_t(gridDim.x) * blockDim.x) {
    const double v = load_real(x, storage_of(x, l), l);
    if (fabs(v) > local) local = float(fabs(v));  // NaN compares false: left out
    store_real(y, storage_of(y, l), l, v);
  }
  if (amax) {
    for (int off = 16; off > 0; off /= 2) local = fmaxf(local, __shfl_down_sync(0xffffffffu, local, off));
    if ((threadIdx.x & 31) == 0) atomicMax(amax, __float_as_uint(local));
  }
}

__global__ void pack_u8(const uint8_t* in, bool transposed, int64_t rows, int64_t cols, uint8_t* out, int64_t rows_p,
                        int64_t cols_p, int64_t batch, bool repeat_rows) {
  const int64_t per = rows_p * cols_p, n = per * batch;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t z = i / per, c = i % cols_p;
    int64_t r = (i % per) / cols_p;
    if (repeat_rows && r >= rows) r = rows - 1;
    const uint8_t* m = in + z * rows * cols;
    out[i] = r >= 0 && r < rows && c < cols ? m[transposed ? c * rows + r : r * cols + c] : uint8_t(0);
  }
}

}  // namespace

Status launch_f8_cast(const F8Side& x, const F8Side& y, int64_t n, void* amax, cudaStream_t stream) {
  if (amax) GEXEC_CUDA_TRY(cudaMemsetAsync(amax, 0, sizeof(float), stream));
  if (n <= 0) return {};
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 132 * 16);
  f8_cast<<<unsigned(blocks), threads, 0, stream>>>(x, y, n, static_cast<unsigned int*>(amax));
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_f8_quantize_blocks(const F8Side& x, const F8Side& y, float* s, int sm_count, cudaStream_t stream) {
  if (y.rows <= 0 || y.cols <= 0) return {};
  F8Side out = y;
  out.block_s = nullptr;  // y's values are stored divided by the S computed here
  const DType xt = DType(x.dtype);
  const bool vector_x = (xt == DType::f16 || xt == DType::bf16 || xt == DType::f32) && !x.colmajor && !y.colmajor;
  const bool row_blocks = y.br == 1 && y.bc >= 8 && y.bc <= 256 && (y.bc & (y.bc - 1)) == 0 && y.cols % 8 == 0 &&
                          y.cols < (int64_t(1) << 30);
  const bool aligned = reinterpret_cast<uintptr_t>(x.data) % 16 == 0 && reinterpret_cast<uintptr_t>(y.data) % 16 == 0;
  if (vector_x && row_blocks && aligned) {
    const int sms = std::max(1, sm_count);
    int bshift = 3;
    while ((int64_t(1) << bshift) < y.bc) ++bshift;
    // 16 values a thread for bf16 and f16 (8192 x 8192 on an H100: f16 in 82 us with 16, 94 us
    // with 8; bf16 was 1.6x faster with 16 on the H200 already); f32 takes 8.
    const int vec = (xt == DType::bf16 || xt == DType::f16) && y.bc >= 16 && y.cols % 16 == 0 ? 16 : 8;
    if (xt == DType::f32)
      launch_row_blocks<float>(x, out, s, bshift, vec, sms, stream);
    else if (xt == DType::bf16)
      launch_row_blocks<__nv_bfloat16>(x, out, s, bshift, vec, sms, stream);
    else
      launch_row_blocks<__half>(x, out, s, bshift, vec, sms, stream);
  } else {
    const int64_t count = ((y.rows + y.br - 1) / y.br) * ((y.cols + y.bc - 1) / y.bc);
    quantize_blocks<<<unsigned(std::min<int64_t>(count, 132 * 16)), 256, 0, stream>>>(x, out, s);
  }
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_arrange_scales(const float* s, float* out, int64_t outer, int64_t ld, int64_t inner, int64_t so,
                             int64_t si, cudaStream_t stream) {
  if (outer * ld <= 0) return {};
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((outer * ld + threads - 1) / threads, 132 * 4);
  arrange_scales<<<unsigned(blocks), threads, 0, stream>>>(s, out, outer, ld, inner, so, si);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Status launch_transpose_u8(const void* in, void* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  return launch_transpose(in, out, rows, cols, 1, stream);
}

Status launch_pack_u8(const void* in, bool transposed, int64_t rows, int64_t cols, void* out, int64_t rows_p,
                      int64_t cols_p, int64_t batch, bool repeat_rows, cudaStream_t stream) {
  const int64_t n = rows_p * cols_p * batch;
  if (n <= 0) return {};
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 132 * 16);
  pack_u8<<<unsigned(blocks), threads, 0, stream>>>(static_cast<const uint8_t*>(in), transposed, rows, cols,
                                                     static_cast<uint8_t*>(out), rows_p, cols_p, batch, repeat_rows);
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace gexec::cuda
