// The FUSED_ELEMENTWISE kernels: one launch runs a group's steps over every element, reading each
// input once and writing each output once, 4 elements per thread through 8- or 16-byte accesses.
//
// The group is a small register-slot program in the kernel's parameters (fused_program.hpp),
// decoded by every thread: each instruction works on all 4 elements of a thread at once, and its
// branches (on the instruction, the op, the dtype, the slots) are uniform across a warp, so they
// cost a few instructions per 4 elements, not divergence; the values stay in registers. Each step
// computes in f32 and rounds to its dtype (round to nearest even), as the graph says; the inputs
// and outputs are read and written in their own dtypes, row-major (the pass and the selector see
// to that).
#include "fused_elementwise.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "check.hpp"
#include "fault.hpp"
#include "fused_program.hpp"

namespace gexec::cuda {
namespace {

// Elements per thread and chunk: 8 bytes of a 16-bit dtype, 16 of f32. Four, not eight: eight
// elements per slot take more registers than two blocks of 256 threads per SM leave.
constexpr int kVec = 4;

struct Program {
  int n_in = 0, n_out = 0, n_code = 0;
  int64_t n = 0, cols = 1;  // elements of the group's shape, and its last dimension
  const void* in[kGroupMaxInputs] = {};
  uint8_t in_t[kGroupMaxInputs] = {};     // DType
  uint8_t in_bias[kGroupMaxInputs] = {};  // a [cols] vector, read at the element's column
  void* out[kGroupMaxOutputs] = {};
  uint8_t out_t[kGroupMaxOutputs] = {};
  FusedInstr code[kFusedMaxInstrs] = {};
};

__device__ inline float load1(const void* p, uint8_t t, int64_t i) {
  switch (DType(t)) {
    case DType::f16: return __half2float(__ushort_as_half(static_cast<const uint16_t*>(p)[i]));
    case DType::bf16: return __uint_as_float(uint32_t(static_cast<const uint16_t*>(p)[i]) << 16);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ inline uint16_t to_bits(uint8_t t, float v) {
  return DType(t) == DType::f16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

__device__ inline void store1(void* p, uint8_t t, int64_t i, float v) {
  if (DType(t) == DType::f32) static_cast<float*>(p)[i] = v;
  else static_cast<uint16_t*>(p)[i] = to_bits(t, v);
}

// Elements [4c, 4c + 4) through one 8-byte (16-bit dtypes) or 16-byte (f32) access; the buffer is
// 16-byte aligned.
__device__ inline void loadv(const void* p, uint8_t t, int64_t c, float v[kVec]) {
  if (DType(t) == DType::f32) {
    const float4 q = static_cast<const float4*>(p)[c];
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    return;
  }
  const uint2 w = static_cast<const uint2*>(p)[c];
  const uint32_t words[2] = {w.x, w.y};
  const bool half = DType(t) == DType::f16;
#pragma unroll
  for (int j = 0; j < 2; ++j) {  // little-endian: the lower half holds the earlier element
    const uint16_t lo = uint16_t(words[j] & 0xFFFFu), hi = uint16_t(words[j] >> 16);
    v[2 * j] = half ? __half2float(__ushort_as_half(lo)) : __uint_as_float(uint32_t(lo) << 16);
    v[2 * j + 1] = half ? __half2float(__ushort_as_half(hi)) : __uint_as_float(uint32_t(hi) << 16);
  }
}

__device__ inline void storev(void* p, uint8_t t, int64_t c, const float v[kVec]) {
  if (DType(t) == DType::f32) {
    static_cast<float4*>(p)[c] = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
  uint32_t w[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) w[j] = uint32_t(to_bits(t, v[2 * j])) | (uint32_t(to_bits(t, v[2 * j + 1])) << 16);
  static_cast<uint2*>(p)[c] = make_uint2(w[0], w[1]);
}

__device__ inline float round_as(uint8_t t, float v) {
  switch (DType(t)) {
    case DType::f16: return __half2float(__float2half_rn(v));
    case DType::bf16: return __bfloat162float(__float2bfloat16_rn(v));
    default: return v;
  }
}

// The same formulas as elementwise.cu's, so that a fused group and its separate ops agree.
__device__ inline float step(uint8_t op, bool erf_form, float x, float y) {
  switch (OpType(op)) {
    case OpType::ADD:
    case OpType::BIAS_ADD: return x + y;
    case OpType::MUL: return x * y;
    case OpType::RELU: return x < 0.0f ? 0.0f : x;  // a NaN stays a NaN
    case OpType::GELU:
      if (erf_form) return 0.5f * x * erfcf(-x * 0.7071067811865476f);
      return x / (1.0f + expf(-2.0f * 0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case OpType::SILU: return x / (1.0f + expf(-x));
    default: return x;  // CAST: the rounding
  }
}

// The slots, 4 elements each: accessed only with constant indices (the switches below), so
// that they live in registers.
struct Slots {
  float r[kFusedSlots][kVec];
};

__device__ inline void get(const Slots& s, int k, float x[kVec]) {
  switch (k) {
#define GEXEC_SLOT(K) \
  case K:             \
    _Pragma("unroll") for (int j = 0; j < kVec; ++j) x[j] = s.r[K][j]; \
    break;
    GEXEC_SLOT(0) GEXEC_SLOT(1) GEXEC_SLOT(2) GEXEC_SLOT(3) GEXEC_SLOT(4) GEXEC_SLOT(5)
#undef GEXEC_SLOT
  }
}

__device__ inline void put(Slots& s, int k, const float x[kVec]) {
  switch (k) {
#define GEXEC_SLOT(K) \
  case K:             \
    _Pragma("unroll") for (int j = 0; j < kVec; ++j) s.r[K][j] = x[j]; \
    break;
    GEXEC_SLOT(0) GEXEC_SLOT(1) GEXEC_SLOT(2) GEXEC_SLOT(3) GEXEC_SLOT(4) GEXEC_SLOT(5)
#undef GEXEC_SLOT
  }
}
static_assert(kFusedSlots == 6, "get() and put() name every slot");

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

// z = op(x, y) rounded to the dtype, for all 4 elements: one uniform branch per instruction.
__device__ inline void compute(const FusedInstr& in, const float x[kVec], const float y[kVec], float z[kVec]) {
  switch (OpType(in.op)) {
    case OpType::ADD:
    case OpType::BIAS_ADD:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = x[j] + y[j];
      break;
    case OpType::MUL:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = x[j] * y[j];
      break;
    default:
#pragma unroll
      for (int j = 0; j < kVec; ++j) z[j] = step(in.op, in.erf, x[j], 0.0f);
      break;
  }
  if (DType(in.dtype) != DType::f32) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) z[j] = round_as(in.dtype, z[j]);
  }
}

// One chunk of `count` elements starting at element e0 (count == kVec and `vec`: vector accesses).
__device__ inline void run_chunk(const Program& p, int64_t e0, int count, bool vec) {
  Slots s;
#pragma unroll
  for (int k = 0; k < kFusedSlots; ++k)
#pragma unroll
    for (int j = 0; j < kVec; ++j) s.r[k][j] = 0.0f;
  for (int pc = 0; pc < p.n_code; ++pc) {
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

// At most 85 registers (it needs 83 without spilling, nvcc 13, sm_90), so that three blocks of 256
// threads fit on an SM: a streaming kernel needs many loads in flight more than registers.
__global__ void __launch_bounds__(256, 3) fused_kernel(Program p, bool vec) {
  const int64_t chunks = (p.n + kVec - 1) / kVec;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {
    const int64_t e0 = c * kVec;
    const int count = int(std::min<int64_t>(kVec, p.n - e0));
    run_chunk(p, e0, count, vec && count == kVec);
  }
}

constexpr int kThreads = 256;

class FusedKernel final : public Kernel {
 public:
  FusedKernel(const Program& p, cudaStream_t stream) : p_(p), stream_(stream) {}
  Status prepare() override {
    int sms = 0, dev = 0;
    GEXEC_CUDA_TRY(cudaGetDevice(&dev));
    GEXEC_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Enough blocks to keep every SM busy several times over; the loop strides past the rest.
    const int64_t chunks = (p_.n + kVec - 1) / kVec;
    blocks_ = int(std::clamp<int64_t>((chunks + kThreads - 1) / kThreads, 1, int64_t(std::max(sms, 1)) * 16));
    return {};
  }
  Status run() override {
    if (p_.n <= 0) return {};
    const int threads = fault::break_launch() ? 0 : kThreads;
    fused_kernel<<<blocks_, threads, 0, stream_>>>(p_, vec());
    GEXEC_CUDA_TRY(cudaGetLastError());
    return {};
  }
  // Nothing is kept from the buffers between runs; the 16-byte path is chosen per run.
  bool move_operands(const Binding& b) override {
    if (int(b.inputs.size()) != p_.n_in || int(b.outputs.size()) != p_.n_out) return false;
    for (int i = 0; i < p_.n_in; ++i) p_.in[i] = b.inputs[size_t(i)];
    for (int k = 0; k < p_.n_out; ++k) p_.out[k] = b.outputs[size_t(k)];
    return true;
  }

 private:
  bool vec() const {
    auto aligned = [](const void* q) { return (reinterpret_cast<uintptr_t>(q) & 15u) == 0; };
    for (int i = 0; i < p_.n_in; ++i)
      if (!p_.in_bias[i] && !aligned(p_.in[i])) return false;
    for (int k = 0; k < p_.n_out; ++k)
      if (!aligned(p_.out[k])) return false;
    return true;
  }
  Program p_;
  cudaStream_t stream_;
  int blocks_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_fused_elementwise_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                              const Binding& b, cudaStream_t stream) {
  const std::string where = "kernel " + def.name + " for op " + op.name;
  if (def.impl != KernelImpl::cuda_fused_elementwise || op.type != OpType::FUSED_ELEMENTWISE)
    return runtime_error(where + ": not its kernel");
  if (auto problems = check_op(g, op); !problems.empty()) return runtime_error(where + ": " + problems[0]);
  if (b.inputs.size() != op.inputs.size() || b.outputs.size() != op.outputs.size())
    return runtime_error(where + ": the binding does not match the op's operands");
  const Tensor& first = g.tensor(op.outputs[0]);
  const Layout layout = first.layout;
  const FusedProgram prog = plan_fused_program(op.attrs, int(op.inputs.size()));
  if (!prog.error.empty()) return runtime_error(where + ": " + prog.error);
  if (int(prog.code.size()) > kFusedMaxInstrs) return runtime_error(where + ": the group's program is too long");
  Program p;
  p.n_in = int(op.inputs.size());
  p.n_out = int(op.outputs.size());
  p.n_code = int(prog.code.size());
  for (size_t i = 0; i < prog.code.size(); ++i) p.code[i] = prog.code[i];
  p.n = first.numel();
  p.cols = first.shape.back();
  for (int i = 0; i < p.n_in; ++i) {
    const Tensor& t = g.tensor(op.inputs[size_t(i)]);
    if (!b.inputs[size_t(i)]) return runtime_error(where + ": an input has no buffer");
    p.in[i] = b.inputs[size_t(i)];
    p.in_t[i] = uint8_t(t.dtype);
    p.in_bias[i] = t.numel() != p.n;
    if (!p.in_bias[i] && t.layout != layout) return runtime_error(where + ": operands stored in different layouts");
  }
  for (int k = 0; k < p.n_out; ++k) {
    const Tensor& t = g.tensor(op.outputs[size_t(k)]);
    if (!b.outputs[size_t(k)]) return runtime_error(where + ": an output has no buffer");
    if (t.layout != layout) return runtime_error(where + ": operands stored in different layouts");
    p.out[k] = b.outputs[size_t(k)];
    p.out_t[k] = uint8_t(t.dtype);
  }
  return std::unique_ptr<Kernel>(std::make_unique<FusedKernel>(p, stream));
}

}  // namespace gexec::cuda
