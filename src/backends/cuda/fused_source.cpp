// The generated source of a FUSED_ELEMENTWISE group (fused_source.hpp). Each thread takes chunks
// of 8 elements: every input read first (one 16-byte access per 16-bit input, two for f32, so
// that all requests are in flight together), the steps written out per element, each rounded to
// its dtype, and the outputs stored the same way. A step whose result is rounded to f16 or bf16
// uses the fast exp and division intrinsics (their error, about 2^-21 relative, vanishes in a
// rounding to 11 or 8 bits, which the check bounds); an f32 step uses expf and true division,
// the formulas of elementwise.cu. Conversions are PTX cvt instructions, so that the source needs
// no headers.
#include "fused_source.hpp"

#include <sstream>

namespace gexec::cuda {
namespace {

constexpr const char* kPrelude = R"(
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
__device__ __forceinline__ float r_f16(float v) { return h2f(f2h(v)); }
__device__ __forceinline__ float r_bf16(float v) { return bf2f(f2bf(v)); }
__device__ __forceinline__ float r_f32(float v) { return v; }
__device__ __forceinline__ float relu(float x) { return x < 0.0f ? 0.0f : x; }
__device__ __forceinline__ float gelu_tanh(float x) {
  return x / (1.0f + expf(-2.0f * 0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float gelu_tanh_fast(float x) {
  return __fdividef(x, 1.0f + __expf(-2.0f * 0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * erfcf(-x * 0.7071067811865476f); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu_fast(float x) { return __fdividef(x, 1.0f + __expf(-x)); }
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
  for (int j = 0; j < 4; ++j) {
    const u16 lo = half ? f2h(v[2 * j]) : f2bf(v[2 * j]), hi = half ? f2h(v[2 * j + 1]) : f2bf(v[2 * j + 1]);
    w[j] = u32(lo) | (u32(hi) << 16);
  }
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

const char* round_fn(DType t) { return t == DType::f16 ? "r_f16" : t == DType::bf16 ? "r_bf16" : "r_f32"; }

// Element i of a tensor of dtype t at address expression `p` as float.
std::string load1(DType t, const std::string& p, const std::string& i) {
  std::ostringstream s;
  if (t == DType::f32) s << "((const float*)" << p << ")[" << i << "]";
  else s << (t == DType::f16 ? "h2f" : "bf2f") << "(((const u16*)" << p << ")[" << i << "])";
  return s.str();
}

std::string step_expr(const GroupStep& st) {
  std::ostringstream x, y, s;
  x << "v" << st.args[0] << "[j]";
  if (st.args.size() > 1) y << "v" << st.args[1] << "[j]";
  const bool fast = st.dtype != DType::f32;
  s << round_fn(st.dtype) << "(";
  switch (st.type) {
    case OpType::ADD:
    case OpType::BIAS_ADD: s << x.str() << " + " << y.str(); break;
    case OpType::MUL: s << x.str() << " * " << y.str(); break;
    case OpType::RELU: s << "relu(" << x.str() << ")"; break;
    case OpType::GELU:
      s << (st.approximate == GeluApprox::none ? "gelu_erf(" : fast ? "gelu_tanh_fast(" : "gelu_tanh(") << x.str() << ")";
      break;
    case OpType::SILU: s << (fast ? "silu_fast(" : "silu(") << x.str() << ")"; break;
    default: s << x.str(); break;  // CAST: the rounding alone
  }
  s << ")";
  return s.str();
}

}  // namespace

std::string fused_source(const Attrs& a, const std::vector<FusedOperand>& inputs, const std::vector<DType>& outputs) {
  const int n_in = int(inputs.size());
  std::ostringstream s;
  s << kPrelude;
  s << "extern \"C\" __global__ void __launch_bounds__(256) " << kFusedEntry << "(const Params p) {\n"
    << "  const i64 chunks = (p.n + 7) / 8, stride = i64(gridDim.x) * blockDim.x;\n"
    << "  for (i64 c = i64(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {\n"
    << "    const i64 e0 = c * 8;\n"
    << "    const int count = e0 + 8 <= p.n ? 8 : int(p.n - e0);\n"
    << "    const bool full = p.vec && count == 8;\n";
  // Which values are read at all: an input no step reads is not loaded.
  std::vector<bool> read(size_t(n_in) + a.steps.size(), false);
  for (const GroupStep& st : a.steps)
    for (int32_t v : st.args) read[size_t(v)] = true;
  for (int i = 0; i < n_in; ++i) {
    if (!read[size_t(i)]) continue;
    const std::string v = named("v", i), p = named("p.in[", i, "]");
    const DType t = inputs[size_t(i)].dtype;
    s << "    float " << v << "[8];\n";
    if (inputs[size_t(i)].bias) {
      s << "    { i64 col = e0 % p.cols;\n"
        << "#pragma unroll\n"
        << "      for (int j = 0; j < 8; ++j) { " << v << "[j] = j < count ? " << load1(t, p, "col") << " : 0.0f;"
        << " if (++col == p.cols) col = 0; } }\n";
      continue;
    }
    s << "    if (full) {\n";
    if (t == DType::f32)
      s << "      const float4 q0 = ((const float4*)" << p << ")[2 * c], q1 = ((const float4*)" << p << ")[2 * c + 1];\n"
        << "      " << v << "[0] = q0.x; " << v << "[1] = q0.y; " << v << "[2] = q0.z; " << v << "[3] = q0.w;\n"
        << "      " << v << "[4] = q1.x; " << v << "[5] = q1.y; " << v << "[6] = q1.z; " << v << "[7] = q1.w;\n";
    else
      s << "      unpack16(((const uint4*)" << p << ")[c], " << (t == DType::f16 ? "true" : "false") << ", " << v
        << ");\n";
    s << "    } else {\n"
      << "#pragma unroll\n"
      << "      for (int j = 0; j < 8; ++j) " << v << "[j] = j < count ? " << load1(t, p, "e0 + j") << " : 0.0f;\n"
      << "    }\n";
  }
  // The steps, element by element.
  for (size_t k = 0; k < a.steps.size(); ++k) s << "    float v" << n_in + int(k) << "[8];\n";
  s << "#pragma unroll\n    for (int j = 0; j < 8; ++j) {\n";
  for (size_t k = 0; k < a.steps.size(); ++k)
    s << "      v" << n_in + int(k) << "[j] = " << step_expr(a.steps[k]) << ";\n";
  s << "    }\n";
  // The outputs.
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::string v = named("v", a.results[o]), p = named("p.out[", int(o), "]");
    const DType t = outputs[o];
    s << "    if (full) {\n";
    if (t == DType::f32)
      s << "      ((float4*)" << p << ")[2 * c] = make_float4(" << v << "[0], " << v << "[1], " << v << "[2], " << v
        << "[3]);\n"
        << "      ((float4*)" << p << ")[2 * c + 1] = make_float4(" << v << "[4], " << v << "[5], " << v << "[6], "
        << v << "[7]);\n";
    else
      s << "      ((uint4*)" << p << ")[c] = pack16(" << v << ", " << (t == DType::f16 ? "true" : "false") << ");\n";
    s << "    } else {\n      for (int j = 0; j < count; ++j) ";
    if (t == DType::f32) s << "((float*)" << p << ")[e0 + j] = " << v << "[j];\n";
    else s << "((u16*)" << p << ")[e0 + j] = " << (t == DType::f16 ? "f2h(" : "f2bf(") << v << "[j]);\n";
    s << "    }\n";
  }
  s << "  }\n}\n";
  return s.str();
}

}  // namespace gexec::cuda
