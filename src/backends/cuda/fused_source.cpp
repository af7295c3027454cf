// The generated source of a FUSED_ELEMENTWISE group (fused_source.hpp). Each thread takes one
// chunk of 8 elements (the launch has a thread per chunk: on the H200 a grid-stride loop over
// fewer threads left the 4-op chain 7% slower, its arithmetic no longer hidden behind the
// loads). A full chunk of aligned buffers has a body of its own, without bounds or branches
// (the shared body with per-input bounds tests cost the chain 10%); the tail and unaligned
// buffers go element by element. Every input is read first (one 16-byte access per 16-bit
// input, two for f32, so that all requests are in flight together), then the steps are written
// out element by element, and the outputs stored the same way. A step rounded to f16 or bf16
// rounds its elements in pairs with the packed conversion (cvt.rn.f16x2.f32 / bf16x2): sm_90
// runs the scalar bf16 conversion on its slow conversion pipe, which made the bf16 chain 1.4x
// slower than the f16 one. Such a step also uses the fast exp and division intrinsics and the
// erf GELU's branch-free form (their error, about 2^-21 and 2^-16 relative, vanishes in a
// rounding to 11 or 8 bits, which the check bounds);
// an f32 step uses expf and true division, the formulas of elementwise.cu. The activations are
// those of activations.cuh, which NVRTC receives as a named header (nvrtc_kernel.cpp); the
// conversions are PTX cvt instructions, so that the source needs no CUDA headers.
#include "fused_source.hpp"

#include <cstdint>
#include <cstring>
#include <sstream>

namespace gexec::cuda {
namespace {

constexpr const char* kPrelude = R"(
#include "activations.cuh"
using namespace gexec::cuda::act;
typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;
struct Params {
  const void* in[8];
  void* out[4];
  i64 n, cols;
  int vec;
};
__device__ __forceinline__ float h2f(u16 b) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b)); return f; }
__device__ __forceinline__ u16 f2h(float f) { u16 b; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
__device__ __forceinline__ float bf2f(u16 b) { return __uint_as_float(u32(b) << 16); }
__device__ __forceinline__ u16 f2bf(float f) { u16 b; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
// Two values rounded to f16 / bf16 with one packed conversion; the earlier element is the lower half.
__device__ __forceinline__ u32 pack_f16(float lo, float hi) { u32 w; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo)); return w; }
__device__ __forceinline__ u32 pack_bf16(float lo, float hi) { u32 w; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo)); return w; }
__device__ __forceinline__ void r2_f16(float& a, float& b) { const u32 w = pack_f16(a, b); a = h2f(u16(w & 0xFFFFu)); b = h2f(u16(w >> 16)); }
__device__ __forceinline__ void r2_bf16(float& a, float& b) { const u32 w = pack_bf16(a, b); a = __uint_as_float(w << 16); b = __uint_as_float(w & 0xFFFF0000u); }
// 8 elements of a 16-bit tensor from one 16-byte word, or of f32 from two.
__device__ __forceinline__ void unpack16(uint4 w, bool half, float v[8]) {
  const u32 ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {  // little-endian: the lower half holds the earlier element
    const u16 lo = u16(ws[j] & 0xFFFFu), hi = u16(ws[j] >> 16);
    v[2 * j] = half ? h2f(lo) : bf2f(lo);
    v[2 * j + 1] = half ? h2f(hi) : bf2f(hi);
  }
}
__device__ __forceinline__ uint4 pack16(const float v[8], bool half) {
  u32 w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) w[j] = half ? pack_f16(v[2 * j], v[2 * j + 1]) : pack_bf16(v[2 * j], v[2 * j + 1]);
  return make_uint4(w[0], w[1], w[2], w[3]);
}
)";

// "v3", "p.in[1]": the names the source gives values and operands.
std::string named(const char* prefix, int i, const char* suffix = "") {
  std::ostringstream s;
  s << prefix << i << suffix;
  return s.str();
}

// The prelude's Params spells FusedParams out.
static_assert(kGroupMaxInputs == 8 && kGroupMaxOutputs == 4 && sizeof(FusedParams) == 8 * 8 + 4 * 8 + 2 * 8 + 8,
              "the generated Params must keep FusedParams' layout");

// Element i of a tensor of dtype t at address expression `p` as float.
std::string load1(DType t, const std::string& p, const std::string& i) {
  std::ostringstream s;
  if (t == DType::f32) s << "((const float*)" << p << ")[" << i << "]";
  else s << (t == DType::f16 ? "h2f" : "bf2f") << "(((const u16*)" << p << ")[" << i << "])";
  return s.str();
}

// The f32 nearest c as an exact literal: its bits, so that no decimal conversion can differ from
// the kernels' float(c) (the value the reference uses too).
std::string f32_literal(double c) {
  const float f = float(c);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  std::ostringstream s;
  s << "__uint_as_float(0x" << std::hex << bits << "u)";
  return s.str();
}

// The value of step `st` at element `j` ("j" or "j + 1") before its rounding.
std::string step_expr(const GroupStep& st, const std::string& j) {
  std::ostringstream x, y, s;
  x << "v" << st.args[0] << "[" << j << "]";
  if (st.args.size() > 1) y << "v" << st.args[1] << "[" << j << "]";
  else if (st.constant) y << f32_literal(*st.constant);  // a scalar operand, or POW's exponent
  const bool fast = st.dtype != DType::f32;
  switch (st.type) {
    case OpType::ADD:
    case OpType::BIAS_ADD: s << x.str() << " + " << y.str(); break;
    case OpType::SUB: s << x.str() << " - " << y.str(); break;
    case OpType::MUL: s << x.str() << " * " << y.str(); break;
    case OpType::DIV: s << x.str() << " / " << y.str(); break;
    case OpType::SIGMOID: s << "sigmoid(" << x.str() << ")"; break;
    case OpType::TANH: s << "act_tanh(" << x.str() << ")"; break;
    case OpType::ERF: s << "act_erf(" << x.str() << ")"; break;
    case OpType::POW: s << "act_pow(" << x.str() << ", " << y.str() << ")"; break;
    case OpType::RELU: s << "relu(" << x.str() << ")"; break;
    case OpType::GELU:
      if (st.approximate == GeluApprox::none) s << (fast ? "gelu_erf_fast(" : "gelu_erf(") << x.str() << ")";
      else s << (fast ? "gelu_tanh_fast(" : "gelu_tanh(") << x.str() << ")";
      break;
    case OpType::SILU: s << (fast ? "silu_fast(" : "silu(") << x.str() << ")"; break;
    default: s << x.str(); break;  // CAST: the rounding alone
  }
  return s.str();
}

// Step `st`, whose result is value v, at elements j and j + 1, rounded to its dtype.
std::string step_pair(const GroupStep& st, int v) {
  std::ostringstream s;
  s << "      v" << v << "[j] = " << step_expr(st, "j") << "; v" << v << "[j + 1] = " << step_expr(st, "j + 1") << ";";
  if (st.dtype != DType::f32) s << " r2_" << dtype_name(st.dtype) << "(v" << v << "[j], v" << v << "[j + 1]);";
  s << "\n";
  return s.str();
}

// One chunk's loads, steps and stores: with 16-byte vector accesses and no bounds (`full`), or
// element by element for the first `count` elements (the tail, or buffers not 16-byte aligned).
void chunk_body(std::ostringstream& s, const Attrs& a, const std::vector<FusedOperand>& inputs,
                const std::vector<DType>& outputs, bool full) {
  const int n_in = int(inputs.size());
  const std::string in_range = full ? "" : "j < count ? ";
  const std::string or_zero = full ? "" : " : 0.0f";
  // Which values are read at all: an input no step reads is not loaded.
  std::vector<bool> read(size_t(n_in) + a.steps.size(), false);
  for (const GroupStep& st : a.steps)
    for (int32_t v : st.args) read[size_t(v)] = true;
  for (int i = 0; i < n_in; ++i) {
    if (!read[size_t(i)]) continue;
    const std::string v = named("v", i), p = named("p.in[", i, "]");
    const DType t = inputs[size_t(i)].dtype;
    s << "      float " << v << "[8];\n";
    if (inputs[size_t(i)].bias) {
      s << "      { i64 col = e0 % p.cols;\n"
        << "#pragma unroll\n"
        << "        for (int j = 0; j < 8; ++j) { " << v << "[j] = " << in_range << load1(t, p, "col") << or_zero << ";"
        << " if (++col == p.cols) col = 0; } }\n";
    } else if (!full) {
      s << "#pragma unroll\n"
        << "      for (int j = 0; j < 8; ++j) " << v << "[j] = j < count ? " << load1(t, p, "e0 + j") << " : 0.0f;\n";
    } else if (t == DType::f32) {
      s << "      { const float4 q0 = ((const float4*)" << p << ")[2 * c], q1 = ((const float4*)" << p << ")[2 * c + 1];\n"
        << "        " << v << "[0] = q0.x; " << v << "[1] = q0.y; " << v << "[2] = q0.z; " << v << "[3] = q0.w;\n"
        << "        " << v << "[4] = q1.x; " << v << "[5] = q1.y; " << v << "[6] = q1.z; " << v << "[7] = q1.w; }\n";
    } else {
      s << "      unpack16(((const uint4*)" << p << ")[c], " << (t == DType::f16 ? "true" : "false") << ", " << v << ");\n";
    }
  }
  // The steps, two elements at a time.
  for (size_t k = 0; k < a.steps.size(); ++k) s << "      float v" << n_in + int(k) << "[8];\n";
  s << "#pragma unroll\n      for (int j = 0; j < 8; j += 2) {\n";
  for (size_t k = 0; k < a.steps.size(); ++k) s << "  " << step_pair(a.steps[k], n_in + int(k));
  s << "      }\n";
  // The outputs.
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::string v = named("v", a.results[o]), p = named("p.out[", int(o), "]");
    const DType t = outputs[o];
    if (!full) {
      s << "      for (int j = 0; j < count; ++j) ";
      if (t == DType::f32) s << "((float*)" << p << ")[e0 + j] = " << v << "[j];\n";
      else s << "((u16*)" << p << ")[e0 + j] = " << (t == DType::f16 ? "f2h(" : "f2bf(") << v << "[j]);\n";
    } else if (t == DType::f32) {
      s << "      ((float4*)" << p << ")[2 * c] = make_float4(" << v << "[0], " << v << "[1], " << v << "[2], " << v
        << "[3]);\n"
        << "      ((float4*)" << p << ")[2 * c + 1] = make_float4(" << v << "[4], " << v << "[5], " << v << "[6], "
        << v << "[7]);\n";
    } else {
      s << "      ((uint4*)" << p << ")[c] = pack16(" << v << ", " << (t == DType::f16 ? "true" : "false") << ");\n";
    }
  }
}

}  // namespace

std::string fused_source(const Attrs& a, const std::vector<FusedOperand>& inputs, const std::vector<DType>& outputs) {
  std::ostringstream s;
  s << kPrelude;
  // The full chunks' body is apart from the tail's, so that their code has no bounds or branches.
  s << "extern \"C\" __global__ void __launch_bounds__(256) " << kFusedEntry << "(const Params p) {\n"
    << "  const i64 chunks = (p.n + 7) / 8, stride = i64(gridDim.x) * blockDim.x;\n"
    << "  for (i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {\n"
    << "    const i64 e0 = c * 8;\n"
    << "    if (p.vec && e0 + 8 <= p.n) {\n";
  chunk_body(s, a, inputs, outputs, true);
  s << "    } else {\n"
    << "      const int count = e0 + 8 <= p.n ? 8 : int(p.n - e0);\n";
  chunk_body(s, a, inputs, outputs, false);
  s << "    }\n  }\n}\n";
  return s.str();
}

}  // namespace gexec::cuda
