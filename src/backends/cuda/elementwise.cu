// The fallback elementwise kernels: one grid-stride family that reads each operand in its own
// dtype and layout, computes in f32 and rounds once to the output dtype (round to nearest even).
// Every op of kGroupStepTypes is one (second operand, combination, post) triple.
#include "elementwise.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "activations.cuh"
#include "check.hpp"
#include "fault.hpp"

namespace gexec::cuda {
namespace {

// Storage types: reading an element as float (exact) and rounding a float back (RNE).
struct F16 {
  using Bits = uint16_t;
  __device__ static float to_float(uint16_t b) { return __half2float(__ushort_as_half(b)); }
  __device__ static uint16_t from_float(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
struct BF16 {
  using Bits = uint16_t;
  __device__ static float to_float(uint16_t b) { return __uint_as_float(uint32_t(b) << 16); }
  __device__ static uint16_t from_float(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
struct F32 {
  using Bits = float;
  __device__ static float to_float(float f) { return f; }
  __device__ static float from_float(float f) { return f; }
};

template <class T>
__device__ inline float load1(const void* base, int64_t i) {
  return T::to_float(static_cast<const typename T::Bits*>(base)[i]);
}
template <class T>
__device__ inline void store1(void* base, int64_t i, float v) {
  static_cast<typename T::Bits*>(base)[i] = T::from_float(v);
}

// Elements [8 * chunk, 8 * chunk + 8) through 16-byte accesses; base must be 16-byte aligned.
template <class T>
__device__ inline void load8(const void* base, int64_t chunk, float v[8]) {
  if constexpr (sizeof(typename T::Bits) == 2) {
    const uint4 w = static_cast<const uint4*>(base)[chunk];
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
    for (int j = 0; j < 4; ++j) {  // little-endian: the lower half holds the earlier element
      v[2 * j] = T::to_float(uint16_t(words[j] & 0xFFFFu));
      v[2 * j + 1] = T::to_float(uint16_t(words[j] >> 16));
    }
  } else {
    const float4* p = static_cast<const float4*>(base) + 2 * chunk;
    const float4 lo = p[0], hi = p[1];
    v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w;
    v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
  }
}
template <class T>
__device__ inline void store8(void* base, int64_t chunk, const float v[8]) {
  if constexpr (sizeof(typename T::Bits) == 2) {
    uint32_t words[4];
    for (int j = 0; j < 4; ++j)
      words[j] = uint32_t(T::from_float(v[2 * j])) | (uint32_t(T::from_float(v[2 * j + 1])) << 16);
    static_cast<uint4*>(base)[chunk] = make_uint4(words[0], words[1], words[2], words[3]);
  } else {
    float4* p = static_cast<float4*>(base) + 2 * chunk;
    p[0] = make_float4(v[0], v[1], v[2], v[3]);
    p[1] = make_float4(v[4], v[5], v[6], v[7]);
  }
}

// The second operand: absent, same shape, per column, or the constant k.
enum class Second : int { none, same, bias, scalar };
enum class Combine : int { add, sub, mul, div };  // how x meets the second operand
// The _fast forms: activations.cuh's, for a result rounded to f16 or bf16 right after.
enum class Post : int { none, relu, gelu_tanh, gelu_erf, silu, sigmoid, tanh, erf, pow, gelu_tanh_fast, gelu_erf_fast, silu_fast };

struct EwArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* out = nullptr;
  int64_t n = 0;               // output elements
  int64_t rows = 1, cols = 1;  // the logical matrix of one batch entry; cols is the last dimension
  bool a_col = false, b_col = false, out_col = false;  // colmajor storage (rank 2 only)
  Second second = Second::none;
  Combine combine = Combine::add;  // for a same-shape or scalar second operand; a bias adds
  Post post = Post::none;
  float k = 0;  // Second::scalar's value, or Post::pow's exponent
};

// x combined with the same-shape or scalar second operand y.
__device__ inline float combine(const EwArgs& p, float x, float y) {
  switch (p.combine) {
    case Combine::add: return x + y;
    case Combine::sub: return x - y;
    case Combine::mul: return x * y;
    case Combine::div: return x / y;
  }
  return x;
}

// The post-step P on x (k: POW's exponent), fixed at compile time: the one-input kernel below is
// built per op, so that each holds only its own function's code. With every function's code in
// one kernel (erfcf, powf, tanhf, ...) the erf GELU of a 256 x 16384 f16 tensor took 15.0 us on
// the H200, twice PyTorch's kernel (7.3 us); built for itself, 13.25 us (profiled on another
// machine of the same kind). The rest was the GELU's own instructions: through erff, 7.4-7.5 us
// on an H100; through the branch-free form (gelu_erf_fast, for 16-bit results), 6.8-6.9.
template <Post P>
__device__ __forceinline__ float post_of(float x, float k) {
  if constexpr (P == Post::relu) return act::relu(x);
  if constexpr (P == Post::gelu_tanh) return act::gelu_tanh(x);
  if constexpr (P == Post::gelu_erf) return act::gelu_erf(x);
  if constexpr (P == Post::silu) return act::silu(x);
  if constexpr (P == Post::sigmoid) return act::sigmoid(x);
  if constexpr (P == Post::tanh) return act::act_tanh(x);
  if constexpr (P == Post::erf) return act::act_erf(x);
  if constexpr (P == Post::pow) return act::act_pow(x, k);
  if constexpr (P == Post::gelu_tanh_fast) return act::gelu_tanh_fast(x);
  if constexpr (P == Post::gelu_erf_fast) return act::gelu_erf_fast(x);
  if constexpr (P == Post::silu_fast) return act::silu_fast(x);
  return x;  // Post::none: a CAST between f16, bf16 and f32
}

// The post-step chosen at run time (the kernels that combine two operands first).
__device__ inline float apply_post(const EwArgs& a, float x) {
  switch (a.post) {
    case Post::none: return x;
    case Post::relu: return post_of<Post::relu>(x, a.k);
    case Post::gelu_tanh: return post_of<Post::gelu_tanh>(x, a.k);
    case Post::gelu_erf: return post_of<Post::gelu_erf>(x, a.k);
    case Post::silu: return post_of<Post::silu>(x, a.k);
    case Post::sigmoid: return post_of<Post::sigmoid>(x, a.k);
    case Post::tanh: return post_of<Post::tanh>(x, a.k);
    case Post::erf: return post_of<Post::erf>(x, a.k);
    case Post::pow: return post_of<Post::pow>(x, a.k);
    case Post::gelu_tanh_fast: return post_of<Post::gelu_tanh_fast>(x, a.k);
    case Post::gelu_erf_fast: return post_of<Post::gelu_erf_fast>(x, a.k);
    case Post::silu_fast: return post_of<Post::silu_fast>(x, a.k);
  }
  return x;
}

// One input stored like the output (an activation, or a CAST): 16-byte accesses where both
// buffers allow (vec), elements one by one for the rest.
template <class TA, class TO, Post P>
__global__ void ew_unary(const void* a, void* out, int64_t n, float k, bool vec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t start = 0;
  if (vec) {
    const int64_t chunks = n / 8;
    for (int64_t c = tid; c < chunks; c += stride) {
      float v[8];
      load8<TA>(a, c, v);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = post_of<P>(v[j], k);
      store8<TO>(out, c, v);
    }
    start = chunks * 8;
  }
  for (int64_t i = start + tid; i < n; i += stride) store1<TO>(out, i, post_of<P>(load1<TA>(a, i), k));
}

// A GEMM's tail (launch_bias_act) over a row-major C whose rows are whole 16-byte chunks: the grid's
// y runs over rows and its x over a row's chunks, so each chunk's bias is read by chunk with no
// division, and the activation P is compiled alone. Through the general kernel (a 64-bit
// remainder per element for its column, the activation chosen per element) the bias and SiLU
// after a 128 x 11008 f16 product took 11.3 us on an H100 (PyTorch's SiLU: 4.3); through this
// one, 5.6 us.
template <class TC, class TB, Post P>
__global__ void ew_bias_rows(void* c, const void* bias, int64_t rows, int64_t row_chunks) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t ch = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; ch < row_chunks; ch += step) {
      float v[8];
      load8<TC>(c, r * row_chunks + ch, v);
      if (bias) {  // absent, nothing is added (x + 0 would turn -0 into +0)
        float b[8];
        load8<TB>(bias, ch, b);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] += b[j];
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = post_of<P>(v[j], 0.0f);
      store8<TC>(c, r * row_chunks + ch, v);
    }
}

// The column of storage element i when every operand is stored like the output.
__device__ inline int64_t linear_col(const EwArgs& p, int64_t i) {
  return p.out_col ? (i % (p.rows * p.cols)) / p.rows : i % p.cols;
}

// Every operand stored alike: element i of each is the same logical element.
template <class TA, class TB, class TO>
__global__ void ew_linear(EwArgs p, bool vec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t start = 0;
  if (vec) {
    const int64_t chunks = p.n / 8;
    for (int64_t k = tid; k < chunks; k += stride) {
      float a[8], b[8] = {}, o[8];
      load8<TA>(p.a, k, a);
      if (p.second == Second::same) load8<TB>(p.b, k, b);
      for (int j = 0; j < 8; ++j) {
        float x = a[j];
        if (p.second == Second::same) x = combine(p, x, b[j]);
        else if (p.second == Second::scalar) x = combine(p, x, p.k);
        else if (p.second == Second::bias) x += load1<TB>(p.b, linear_col(p, 8 * k + j));
        o[j] = apply_post(p, x);
      }
      store8<TO>(p.out, k, o);
    }
    start = chunks * 8;
  }
  for (int64_t i = start + tid; i < p.n; i += stride) {
    float x = load1<TA>(p.a, i);
    if (p.second == Second::same) x = combine(p, x, load1<TB>(p.b, i));
    else if (p.second == Second::scalar) x = combine(p, x, p.k);
    else if (p.second == Second::bias) x += load1<TB>(p.b, linear_col(p, i));
    store1<TO>(p.out, i, apply_post(p, x));
  }
}

// Rank-2 operands stored differently: each element is found from its logical (row, col).
template <class TA, class TB, class TO>
__global__ void ew_mixed(EwArgs p) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    int64_t r, c;
    if (p.out_col) {
      c = i / p.rows;
      r = i - c * p.rows;
    } else {
      r = i / p.cols;
      c = i - r * p.cols;
    }
    float x = load1<TA>(p.a, p.a_col ? c * p.rows + r : r * p.cols + c);
    if (p.second == Second::same) x = combine(p, x, load1<TB>(p.b, p.b_col ? c * p.rows + r : r * p.cols + c));
    else if (p.second == Second::scalar) x = combine(p, x, p.k);
    else if (p.second == Second::bias) x += load1<TB>(p.b, c);
    store1<TO>(p.out, i, apply_post(p, x));
  }
}

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;  // enough to fill any current GPU; the loops stride past it

int blocks_for(int64_t work) { return int(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks)); }
bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <class TA, class TO, Post P>
void launch_unary(const EwArgs& p, int threads, cudaStream_t stream) {
  const bool vec = p.n >= 8 && aligned16(p.a) && aligned16(p.out);
  ew_unary<TA, TO, P><<<blocks_for(vec ? p.n / 8 : p.n), threads, 0, stream>>>(p.a, p.out, p.n, p.k, vec);
}

template <class TA, class TO>
void launch_unary(const EwArgs& p, int threads, cudaStream_t stream) {
  switch (p.post) {
    case Post::none: return launch_unary<TA, TO, Post::none>(p, threads, stream);
    case Post::relu: return launch_unary<TA, TO, Post::relu>(p, threads, stream);
    case Post::gelu_tanh: return launch_unary<TA, TO, Post::gelu_tanh>(p, threads, stream);
    case Post::gelu_erf: return launch_unary<TA, TO, Post::gelu_erf>(p, threads, stream);
    case Post::silu: return launch_unary<TA, TO, Post::silu>(p, threads, stream);
    case Post::sigmoid: return launch_unary<TA, TO, Post::sigmoid>(p, threads, stream);
    case Post::tanh: return launch_unary<TA, TO, Post::tanh>(p, threads, stream);
    case Post::erf: return launch_unary<TA, TO, Post::erf>(p, threads, stream);
    case Post::pow: return launch_unary<TA, TO, Post::pow>(p, threads, stream);
    case Post::gelu_tanh_fast: return launch_unary<TA, TO, Post::gelu_tanh_fast>(p, threads, stream);
    case Post::gelu_erf_fast: return launch_unary<TA, TO, Post::gelu_erf_fast>(p, threads, stream);
    case Post::silu_fast: return launch_unary<TA, TO, Post::silu_fast>(p, threads, stream);
  }
}

template <class TA, class TB, class TO>
Status launch_typed(const EwArgs& p, cudaStream_t stream) {
  const bool b_same = p.second == Second::same;
  const bool linear = p.a_col == p.out_col && (!b_same || p.b_col == p.out_col);
  // An empty block is an invalid configuration: how a test makes a launch fail (fault.hpp).
  const int threads = fault::break_launch() ? 0 : kThreads;
  if (linear && p.second == Second::none) {
    launch_unary<TA, TO>(p, threads, stream);
  } else if (linear) {
    const bool vec = p.n >= 8 && aligned16(p.a) && aligned16(p.out) && (!b_same || aligned16(p.b));
    ew_linear<TA, TB, TO><<<blocks_for(vec ? p.n / 8 : p.n), threads, 0, stream>>>(p, vec);
  } else {
    ew_mixed<TA, TB, TO><<<blocks_for(p.n), threads, 0, stream>>>(p);
  }
  GEXEC_CUDA_TRY(cudaGetLastError());
  return Status::success();
}

template <class F>
Status with_type(DType t, F&& f) {
  switch (t) {
    case DType::f16: return f(F16{});
    case DType::bf16: return f(BF16{});
    case DType::f32: return f(F32{});
    case DType::f8e4m3:
    case DType::f8e5m2: break;  // f8 casts are f8_convert.cu's; the table sends none here
    case DType::i32: break;     // no elementwise op reads i32 (graph.cpp refuses it)
  }
  return runtime_error("no elementwise kernel for dtype " + std::string(dtype_name(t)));
}

// tb is ignored (any value) when there is no second operand.
Status launch_ew(const EwArgs& p, DType ta, DType tb, DType to, cudaStream_t stream) {
  if (p.n <= 0) return Status::success();
  return with_type(ta, [&](auto a) {
    return with_type(tb, [&](auto b) {
      return with_type(to, [&](auto o) { return launch_typed<decltype(a), decltype(b), decltype(o)>(p, stream); });
    });
  });
}

class ElementwiseKernel final : public Kernel {
 public:
  ElementwiseKernel(const EwArgs& args, DType ta, DType tb, DType to, cudaStream_t stream)
      : args_(args), ta_(ta), tb_(tb), to_(to), stream_(stream) {}
  Status prepare() override { return Status::success(); }
  Status run() override { return launch_ew(args_, ta_, tb_, to_, stream_); }
  // Nothing is kept from the buffers between runs.
  bool move_operands(const Binding& b) override {
    const bool two = args_.second == Second::same || args_.second == Second::bias;
    if (b.inputs.empty() || b.outputs.size() != 1 || two != (b.inputs.size() == 2))
      return false;
    args_.a = b.inputs[0];
    if (b.inputs.size() == 2) args_.b = b.inputs[1];
    args_.out = b.outputs[0];
    return true;
  }

 private:
  EwArgs args_;
  DType ta_, tb_, to_;
  cudaStream_t stream_;
};

std::string dims(const Tensor& t) { return t.name + " " + shape_str(t.shape); }

}  // namespace

Result<std::unique_ptr<Kernel>> make_elementwise_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                        const Binding& b, cudaStream_t stream) {
  const std::string where = "kernel " + def.name + " for op " + op.name;
  if (def.op != op.type)
    return runtime_error(where + ": the kernel computes " + std::string(op_type_name(def.op)) + ", the op is " +
                         std::string(op_type_name(op.type)));
  if (!is_group_step_type(op.type)) return runtime_error(where + ": not an elementwise op");
  const size_t n_in = operand_count(op.type, op.attrs.constant.has_value());
  if (op.inputs.size() != n_in || op.outputs.size() != 1)
    return runtime_error(where + ": expected " + std::to_string(n_in) + " inputs and 1 output");
  if (b.inputs.size() != n_in || b.outputs.size() != 1)
    return runtime_error(where + ": the binding has " + std::to_string(b.inputs.size()) + " inputs and " +
                         std::to_string(b.outputs.size()) + " outputs");
  for (const auto* ptrs : {&b.inputs, &b.outputs})
    for (const void* ptr : *ptrs)
      if (!ptr) return runtime_error(where + ": an operand has no buffer");
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (TensorId id : *ids) {
      const Tensor& t = g.tensor(id);
      if (t.shape.empty() || t.numel() <= 0) return runtime_error(where + ": " + dims(t) + " has no elements");
      if (t.layout == Layout::colmajor && t.rank() != 2)
        return runtime_error(where + ": " + dims(t) + " is colmajor but not rank 2");
    }
  auto is_col = [](const Tensor& t) { return t.layout == Layout::colmajor; };

  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (x.shape != y.shape) return runtime_error(where + ": " + dims(x) + " and " + dims(y) + " differ in shape");
  EwArgs p;
  p.a = b.inputs[0];
  p.out = b.outputs[0];
  p.n = y.numel();
  p.cols = y.shape.back();
  p.rows = p.n / p.cols;
  p.a_col = is_col(x);
  p.out_col = is_col(y);
  DType tb = DType::f32;
  // A result rounded to f16 or bf16 takes the fast GELU and SiLU (activations.cuh), whose error
  // vanishes in that rounding: these kernels are bound by their instructions (post_of's note),
  // most of which are the exact forms' IEEE division and erff.
  const bool fast = y.dtype == DType::f16 || y.dtype == DType::bf16;
  switch (op.type) {
    case OpType::BIAS_ADD: {
      const Tensor& bias = g.tensor(op.inputs[1]);
      if (bias.numel() != p.cols)
        return runtime_error(where + ": bias " + dims(bias) + " does not match the last dimension of " + dims(x));
      p.b = b.inputs[1];
      p.second = Second::bias;
      tb = bias.dtype;
      break;
    }
    case OpType::ADD:
    case OpType::SUB:
    case OpType::MUL:
    case OpType::DIV: {
      p.combine = op.type == OpType::ADD ? Combine::add
                  : op.type == OpType::SUB ? Combine::sub
                  : op.type == OpType::MUL ? Combine::mul
                                           : Combine::div;
      if (op.attrs.constant) {  // the kernels compute with its nearest f32 (graph-format.md)
        p.second = Second::scalar;
        p.k = float(*op.attrs.constant);
        break;
      }
      const Tensor& x2 = g.tensor(op.inputs[1]);
      if (x2.shape != y.shape)
        return runtime_error(where + ": " + dims(x2) + " and " + dims(y) + " differ in shape");
      p.b = b.inputs[1];
      p.b_col = is_col(x2);
      p.second = Second::same;
      tb = x2.dtype;
      break;
    }
    case OpType::RELU: p.post = Post::relu; break;
    case OpType::SILU: p.post = fast ? Post::silu_fast : Post::silu; break;
    case OpType::SIGMOID: p.post = Post::sigmoid; break;
    case OpType::TANH: p.post = Post::tanh; break;
    case OpType::ERF: p.post = Post::erf; break;
    case OpType::POW:
      p.post = Post::pow;
      p.k = float(op.attrs.constant.value_or(1.0));
      break;
    case OpType::GELU:
      p.post = op.attrs.approximate == GeluApprox::tanh ? (fast ? Post::gelu_tanh_fast : Post::gelu_tanh)
                                                        : (fast ? Post::gelu_erf_fast : Post::gelu_erf);
      break;
    case OpType::CAST: break;
    default: return runtime_error(where + ": not an elementwise op");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ElementwiseKernel>(p, x.dtype, tb, y.dtype, stream));
}

Status launch_convert(const void* in, DType in_t, void* out, DType out_t, int64_t n, cudaStream_t stream) {
  if (n < 0) return runtime_error("converting " + std::to_string(n) + " elements");
  if (n > 0 && (!in || !out)) return runtime_error("converting from or to a null buffer");
  EwArgs p;
  p.a = in;
  p.out = out;
  p.n = n;
  p.rows = n;
  return launch_ew(p, in_t, DType::f32, out_t, stream);
}

Status launch_bias_act(void* c, DType c_t, int64_t batch, int64_t rows, int64_t cols, Layout c_layout,
                       const void* bias, DType bias_t, Act act, cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0)
    return runtime_error("bias and activation over [" + std::to_string(batch) + "," + std::to_string(rows) + "," +
                         std::to_string(cols) + "]: every dimension must be positive");
  if (!c) return runtime_error("bias and activation on a null buffer");
  EwArgs p;
  p.a = c;
  p.out = c;  // in place: each thread reads its elements before writing them
  p.n = batch * rows * cols;
  p.rows = rows;
  p.cols = cols;
  p.a_col = p.out_col = c_layout == Layout::colmajor;
  if (bias) {
    p.b = bias;
    p.second = Second::bias;
  }
  const bool fast = c_t == DType::f16 || c_t == DType::bf16;  // as for the ops (make_elementwise_kernel)
  p.post = act == Act::relu   ? Post::relu
           : act == Act::gelu ? (fast ? Post::gelu_tanh_fast : Post::gelu_tanh)
           : act == Act::gelu_erf ? (fast ? Post::gelu_erf_fast : Post::gelu_erf)
           : act == Act::silu ? (fast ? Post::silu_fast : Post::silu)
                              : Post::none;
  if (!bias && p.post == Post::none) return Status::success();
  // Rows of at least 32 chunks of 8 take the row-wise kernel; narrower ones, column-major C and
  // unaligned buffers the general one (same arithmetic: x + bias in f32, then the activation).
  const bool whole_rows = c_layout == Layout::rowmajor && cols % 8 == 0 && cols / 8 >= 32 && aligned16(c) &&
                          (!bias || aligned16(bias));
  if (!whole_rows) return launch_ew(p, c_t, bias ? bias_t : DType::f32, c_t, stream);
  const int64_t all_rows = batch * rows, row_chunks = cols / 8;
  const int threads = fault::break_launch() ? 0 : int(std::min<int64_t>(kThreads, (row_chunks + 31) / 32 * 32));
  const dim3 grid(unsigned((row_chunks + kThreads - 1) / kThreads), unsigned(std::min<int64_t>(all_rows, 65535)));
  const auto launch = [&](auto tc, auto tb) -> Status {
    using TC = decltype(tc);
    using TB = decltype(tb);
    switch (p.post) {
      case Post::relu: ew_bias_rows<TC, TB, Post::relu><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks); break;
      case Post::gelu_tanh: ew_bias_rows<TC, TB, Post::gelu_tanh><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks); break;
      case Post::silu: ew_bias_rows<TC, TB, Post::silu><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks); break;
      case Post::gelu_erf: ew_bias_rows<TC, TB, Post::gelu_erf><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks); break;
      case Post::gelu_erf_fast:
        ew_bias_rows<TC, TB, Post::gelu_erf_fast><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks);
        break;
      case Post::gelu_tanh_fast:
        ew_bias_rows<TC, TB, Post::gelu_tanh_fast><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks);
        break;
      case Post::silu_fast: ew_bias_rows<TC, TB, Post::silu_fast><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks); break;
      case Post::none: ew_bias_rows<TC, TB, Post::none><<<grid, threads, 0, stream>>>(c, bias, all_rows, row_chunks); break;
      default: return runtime_error("bias and activation: an activation the row-wise kernel does not apply");
    }
    GEXEC_CUDA_TRY(cudaGetLastError());
    return Status::success();
  };
  return with_type(c_t, [&](auto tc) { return with_type(bias ? bias_t : DType::f32, [&](auto tb) { return launch(tc, tb); }); });
}

}  // namespace gexec::cuda
