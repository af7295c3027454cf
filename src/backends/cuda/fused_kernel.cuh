// The program interpreter of the FUSED_ELEMENTWISE kernel: the fallback where the group's own
// kernel could not be compiled (fused_source.hpp; fused_elementwise.cu chooses). One launch runs
// a group's register-slot program (fused_program.hpp) over every element, reading each input once
// and writing each output once, kVec elements per thread through 16-byte accesses; decoding the
// program costs it several times the generated kernel's time on long chains.
//
// Each instruction works on all of a thread's elements at once and its branches (on the
// instruction, the op, the dtype, the slots) are uniform across a warp, so the program costs a
// few instructions per element, not divergence. What decides the speed is the memory in flight:
// the inputs the program loads first go straight into their slot registers before any
// instruction runs (Program::n_eager), so that all their requests are outstanding together;
// a load through the interpreter's slot switch would wait for its data before the next load
// starts. The kernel is instantiated per number of slots the program uses, so that a short
// chain does not pay the registers of the widest group. Each step computes in f32 and rounds to
// its dtype (round to nearest even), as the graph says; inputs and outputs are read and written
// in their own dtypes, row-major (the pass and the selector see to that).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "activations.cuh"
#include "fused_program.hpp"
#include "gexec/ir/dtype.hpp"

namespace gexec::cuda::fused {

// Elements per thread and chunk: 16 bytes of a 16-bit dtype, 32 of f32.
constexpr int kVec = 8;
constexpr int kThreads = 256;

struct Program {
  int n_in = 0, n_out = 0, n_code = 0;
  int n_eager = 0;          // code[0, n_eager) loads input k into slot k: done before the program runs
  int64_t n = 0, cols = 1;  // elements of the group's shape, and its last dimension
  const void* in[kGroupMaxInputs] = {};
  uint8_t in_t[kGroupMaxInputs] = {};     // DType
  uint8_t in_bias[kGroupMaxInputs] = {};  // a [cols] vector, read at the element's column
  void* out[kGroupMaxOutputs] = {};
  uint8_t out_t[kGroupMaxOutputs] = {};
  FusedInstr code[kFusedMaxInstrs] = {};
};

__device__ inline float from_bits(uint8_t t, uint16_t b) {
  return DType(t) == DType::f16 ? __half2float(__ushort_as_half(b)) : __uint_as_float(uint32_t(b) << 16);
}

__device__ inline uint16_t to_bits(uint8_t t, float v) {
  return DType(t) == DType::f16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

__device__ inline float load1(const void* p, uint8_t t, int64_t i) {
  if (DType(t) == DType::f32) return static_cast<const float*>(p)[i];
  return from_bits(t, static_cast<const uint16_t*>(p)[i]);
}

__device__ inline void store1(void* p, uint8_t t, int64_t i, float v) {
  if (DType(t) == DType::f32) static_cast<float*>(p)[i] = v;
  else static_cast<uint16_t*>(p)[i] = to_bits(t, v);
}

// Elements [8c, 8c + 8) through one 16-byte access (16-bit dtypes) or two (f32); the buffer is
// 16-byte aligned.
__device__ inline void loadv(const void* p, uint8_t t, int64_t c, float v[kVec]) {
  if (DType(t) == DType::f32) {
    const float4 q0 = static_cast<const float4*>(p)[2 * c], q1 = static_cast<const float4*>(p)[2 * c + 1];
    v[0] = q0.x, v[1] = q0.y, v[2] = q0.z, v[3] = q0.w, v[4] = q1.x, v[5] = q1.y, v[6] = q1.z, v[7] = q1.w;
    return;
  }
  const uint4 w = static_cast<const uint4*>(p)[c];
  const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {  // little-endian: the lower half holds the earlier element
    v[2 * j] = from_bits(t, uint16_t(words[j] & 0xFFFFu));
    v[2 * j + 1] = from_bits(t, uint16_t(words[j] >> 16));
  }
}

__device__ inline void storev(void* p, uint8_t t, int64_t c, const float v[kVec]) {
  if (DType(t) == DType::f32) {
    static_cast<float4*>(p)[2 * c] = make_float4(v[0], v[1], v[2], v[3]);
    static_cast<float4*>(p)[2 * c + 1] = make_float4(v[4], v[5], v[6], v[7]);
    return;
  }
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) w[j] = uint32_t(to_bits(t, v[2 * j])) | (uint32_t(to_bits(t, v[2 * j + 1])) << 16);
  static_cast<uint4*>(p)[c] = make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ inline float round_as(uint8_t t, float v) {
  switch (DType(t)) {
    case DType::f16: return __half2float(__float2half_rn(v));
    case DType::bf16: return __bfloat162float(__float2bfloat16_rn(v));
    default: return v;
  }
}

// The formulas of activations.cuh, as elementwise.cu's, so that a fused group and its separate ops agree.
// k: POW's exponent.
__device__ inline float unary(uint8_t op, bool erf_form, float k, float x) {
  switch (OpType(op)) {
    case OpType::RELU: return act::relu(x);
    case OpType::GELU: return erf_form ? act::gelu_erf(x) : act::gelu_tanh(x);
    case OpType::SILU: return act::silu(x);
    case OpType::SIGMOID: return act::sigmoid(x);
    case OpType::TANH: return act::act_tanh(x);
    case OpType::ERF: return act::act_erf(x);
    case OpType::POW: return act::act_pow(x, k);
    default: return x;  // CAST: the rounding
  }
}

// The slots, kVec elements each: accessed only with constant indices (the switches below), so
// that they live in registers. S is the number of slots the program uses (at most kFusedSlots).
template <int S>
struct Slots {
  float r[S][kVec];
};

#define GEXEC_SLOT_CASES(BODY) \
  GEXEC_SLOT(0, BODY) GEXEC_SLOT(1, BODY) GEXEC_SLOT(2, BODY) GEXEC_SLOT(3, BODY) GEXEC_SLOT(4, BODY) GEXEC_SLOT(5, BODY)
#define GEXEC_SLOT(K, BODY)                                  \
  case K:                                                    \
    if constexpr (K < S) {                                   \
      constexpr int slot = K;                                \
      _Pragma("unroll") for (int j = 0; j < kVec; ++j) BODY; \
    }                                                        \
    break;
static_assert(kFusedSlots == 6, "GEXEC_SLOT_CASES names every slot");

template <int S>
__device__ inline void get(const Slots<S>& s, int k, float x[kVec]) {
  switch (k) { GEXEC_SLOT_CASES(x[j] = s.r[slot][j]) }
}

template <int S>
__device__ inline void put(Slots<S>& s, int k, const float x[kVec]) {
  switch (k) { GEXEC_SLOT_CASES(s.r[slot][j] = x[j]) }
}
#undef GEXEC_SLOT
#undef GEXEC_SLOT_CASES

__device__ inline void load_input(const Program& p, int i, int64_t e0, int count, bool vec, float x[kVec]) {
  if (p.in_bias[i]) {
    int64_t col = e0 % p.cols;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      x[j] = j < count ? load1(p.in[i], p.in_t[i], col) : 0.0f;
      if (++col == p.cols) col = 0;
    }
  } else if (vec) {
    loadv(p.in[i], p.in_t[i], e0 / kVec, x);
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) x[j] = j < count ? load1(p.in[i], p.in_t[i], e0 + j) : 0.0f;
  }
}

__device__ inline void store_output(const Program& p, int k, int64_t e0, int count, bool vec, const float x[kVec]) {
  if (vec) {
    storev(p.out[k], p.out_t[k], e0 / kVec, x);
  } else {
    for (int j = 0; j < count; ++j) store1(p.out[k], p.out_t[k], e0 + j, x[j]);
  }
}

// z = op(x, y) rounded to the dtype, for all of a thread's elements: one uniform branch.
// A step whose second operand is its constant (in.scalar) reads k in place of y.
__device__ inline void compute(const FusedInstr& in, const float x[kVec], const float y_slot[kVec], float z[kVec]) {
  float y[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) y[j] = in.scalar ? in.k : y_slot[j];
  switch (OpType(in.op)) {
    case OpType::ADD:
    case OpType::BIAS_ADD:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = x[j] + y[j];
      break;
    case OpType::SUB:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = x[j] - y[j];
      break;
    case OpType::MUL:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = x[j] * y[j];
      break;
    case OpType::DIV:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = x[j] / y[j];
      break;
    default:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = unary(in.op, in.erf, in.k, x[j]);
      break;
  }
  if (DType(in.dtype) != DType::f32) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) z[j] = round_as(in.dtype, z[j]);
  }
}

// One chunk of `count` elements starting at element e0 (count == kVec and `vec`: vector accesses).
template <int S>
__device__ inline void run_chunk(const Program& p, int64_t e0, int count, bool vec) {
  Slots<S> s;
  // The eager loads, each into its own slot by a constant index: every request leaves before
  // the first is waited for. A slot past n_eager is written by the program before it is read.
#pragma unroll
  for (int k = 0; k < S; ++k)
    if (k < p.n_eager) load_input(p, k, e0, count, vec, s.r[k]);
  for (int pc = p.n_eager; pc < p.n_code; ++pc) {
    const FusedInstr in = p.code[pc];
    float x[kVec], y[kVec], z[kVec];
    switch (in.kind) {
      case FusedKind::load:
        load_input(p, in.a, e0, count, vec, z);
        put(s, in.c, z);
        break;
      case FusedKind::op:
        get(s, in.a, x);
        get(s, in.b, y);
        compute(in, x, y, z);
        put(s, in.c, z);
        break;
      case FusedKind::store:
        get(s, in.a, z);
        store_output(p, in.c, e0, count, vec, z);
        break;
    }
  }
}

// At most 128 registers, so that two blocks of 256 threads fit on an SM: two to four slots fit in
// them (77 to 113 registers, nvcc 13, sm_90), six spill a little; the narrower use fewer.
template <int S>
__global__ void __launch_bounds__(kThreads, 2) fused_kernel(Program p, bool vec) {
  const int64_t chunks = (p.n + kVec - 1) / kVec;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {
    const int64_t e0 = c * kVec;
    const int count = int(e0 + kVec <= p.n ? kVec : p.n - e0);
    run_chunk<S>(p, e0, count, vec && count == kVec);
  }
}

}  // namespace gexec::cuda::fused
