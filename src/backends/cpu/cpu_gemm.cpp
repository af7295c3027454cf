// The CPU product: f32 operands (converted from f16/bf16, or dequantized from f8 with their
// scales, where needed) through OpenBLAS's cblas_sgemm, or against a constant B packed once
// (gexec/backends/cpu_packed_gemm.hpp) where the CPU has AVX-512 and A is small; then bias,
// activation and rounding to C's dtype in one threaded pass; an f8 C is quantized with its scale,
// and its amax written.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "cpu_kernels.hpp"
#include "cpu_math.hpp"
#include "gexec/backends/cpu_packed_gemm.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec::cpu {
namespace {

// An operand of the product in its arena bytes, and an f32 copy when it is not f32.
struct Source {
  const Tensor* tensor = nullptr;  // for an f8 operand's scale and layout
  const void* data = nullptr;
  DType dtype = DType::f32;
  int64_t count = 0;
  bool constant = false;  // keeps its values between runs: converted once
  bool converted = false;
  std::vector<float> f32;
  int scale_slot = -1;           // a block-scaled f8 operand: its S in the binding's scales
  const void* scale = nullptr;   // that S, read in every run

  const float* ready() {
    if (dtype == DType::f32) return static_cast<const float*>(data);
    if (!(constant && converted)) {
      Tensor with_s;
      const Tensor* t = tensor;
      if (scale) with_s = with_block_values(*tensor, static_cast<const float*>(scale)), t = &with_s;
      parallel_for(count, int64_t(1) << 16, [this, t](int64_t b, int64_t e) {
        if (is_f8(dtype))  // the real value: stored x scale
          for (int64_t i = b; i < e; ++i) f32[static_cast<size_t>(i)] = float(load_real(data, *t, i));
        else
          for (int64_t i = b; i < e; ++i) f32[static_cast<size_t>(i)] = load_as_float(data, dtype, i);
      });
      converted = true;
    }
    return f32.data();
  }
};

Source source(const Tensor& t, const void* data, int64_t count, bool constant) {
  Source s;
  s.tensor = &t, s.data = data, s.dtype = t.dtype, s.count = count, s.constant = constant;
  return s;
}

// An f8 operand with a block scale reads its S from the binding; it is converted once only where
// S is fixed before the runs too (S computed in the run is read in every run).
void bind_block_scale(Source& s, const Graph& g, const Op& op, TensorId t, const Binding& binding) {
  s.scale_slot = scale_slot(g, op, t);
  if (s.scale_slot < 0) return;
  s.scale = size_t(s.scale_slot) < binding.scales.size() ? binding.scales[size_t(s.scale_slot)] : nullptr;
  s.constant = s.constant && fixed_before_runs(g, g.tensor(t).scale.tensor);
}

// How cblas_sgemm (row-major convention) reads a stored operand: its leading dimension and
// whether op(X) is the transpose of the row-major matrix in memory. A colmajor [rows, cols]
// matrix is the row-major storage of its transpose.
struct BlasView {
  int ld = 0;
  bool trans = false;
  int64_t stride = 0;  // elements between batch entries; 0 for a shared operand
};

BlasView blas_view(const Tensor& t, bool trans, bool batched) {
  const int64_t rows = t.shape[static_cast<size_t>(t.rank() - 2)], cols = t.shape.back();
  const bool col = t.rank() == 2 && t.layout == Layout::colmajor;
  return {static_cast<int>(col ? rows : cols), trans != col, batched ? rows * cols : 0};
}

template <DType D>
void store(void* dst, int64_t i, float v) {
  if constexpr (D == DType::f32) static_cast<float*>(dst)[i] = v;
  if constexpr (D == DType::f16) static_cast<uint16_t*>(dst)[i] = float_to_f16(v);
  if constexpr (D == DType::bf16) static_cast<uint16_t*>(dst)[i] = float_to_bf16(v);
}

// Elements [p0, p1) of lines [l0, l1) of the product, each line `len` elements in storage order:
// adds beta * R (given in C's storage order, or null), then the bias (along the line for row-major
// C, one value per line, a column, for colmajor C), activates, rounds: act(AB + beta R + bias),
// graph-format.md's order. A tile of a line at a time, so that the activation runs as one loop;
// an f32 C in place, without a copy into a scratch tile.
template <DType D>
void finish_lines(const float* src, void* dst, const float* bias, bool bias_along, const float* res, float beta,
                  Act act, int64_t len, int64_t l0, int64_t l1, int64_t p0, int64_t p1) {
  constexpr int64_t kTile = 256;
  float tile[kTile];
  for (int64_t line = l0; line < l1; ++line) {
    for (int64_t t0 = p0; t0 < p1; t0 += kTile) {
      const int64_t n = std::min(kTile, p1 - t0), at = line * len + t0;
      float* v = D == DType::f32 ? static_cast<float*>(dst) + at : tile;
      const float* in = src + at;
      if (res)
        for (int64_t j = 0; j < n; ++j) v[j] = in[j] + beta * res[at + j];
      else if (v != in)
        std::copy_n(in, n, v);
      if (bias && bias_along)
        for (int64_t j = 0; j < n; ++j) v[j] += bias[t0 + j];
      else if (bias)
        for (int64_t j = 0; j < n; ++j) v[j] += bias[line];
      if (act != Act::none) activate_tile(act, v, n);
      if constexpr (D != DType::f32)
        for (int64_t j = 0; j < n; ++j) store<D>(dst, at + j, v[j]);
    }
  }
}

auto finisher(DType d) {
  return d == DType::f32 ? finish_lines<DType::f32> : d == DType::f16 ? finish_lines<DType::f16>
                                                                      : finish_lines<DType::bf16>;
}

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const Graph& g, const Op& op, const GemmShape& s, const Binding& binding) : s_(s) {
    const Tensor& a = g.tensor(op.inputs[0]);
    const Tensor& b = g.tensor(op.inputs[1]);
    const Tensor& c = g.tensor(op.outputs[0]);
    a_ = source(a, binding.inputs[0], a.numel(), fixed_before_runs(g, op.inputs[0]));
    b_ = source(b, binding.inputs[1], b.numel(), fixed_before_runs(g, op.inputs[1]));
    bind_block_scale(a_, g, op, op.inputs[0], binding);
    bind_block_scale(b_, g, op, op.inputs[1], binding);
    va_ = blas_view(a, s.trans_a, s.batch > 1 || a.rank() == 3);
    vb_ = blas_view(b, s.trans_b, s.b_batched);
    if (s.has_bias)
      bias_ = source(g.tensor(op.inputs[2]), binding.inputs[2], s.n, fixed_before_runs(g, op.inputs[2]));
    if (s.has_residual) {
      const Tensor& r = g.tensor(op.inputs.back());
      // Read in every run (never converted once): its buffer may move between runs.
      res_ = source(r, binding.inputs.back(), s.batch * s.m * s.n, false);
      res_colmajor_ = r.rank() == 2 && r.layout == Layout::colmajor;
    }
    c_ = binding.outputs[0];
    c_tensor_ = &c;
    if (binding.outputs.size() > 1) amax_ = static_cast<float*>(binding.outputs[1]);
    c_dtype_ = c.dtype;
    c_colmajor_ = c.rank() == 2 && c.layout == Layout::colmajor;
    act_ = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
    // The packed path: B constant, A row-major, C row-major; batches of A against a shared B
    // stored one after another are one product of batch x M rows.
    const bool rows_follow = s.batch == 1 || (vb_.stride == 0 && va_.stride == s.m * va_.ld);
    pack_b_ = b_.constant && !va_.trans && !c_colmajor_ && rows_follow && PackedB::available() &&
              PackedB::suits(s.batch * s.m);
  }

  Status prepare() override {
    if (a_.dtype != DType::f32) a_.f32.resize(static_cast<size_t>(a_.count));
    if (b_.dtype != DType::f32) b_.f32.resize(static_cast<size_t>(b_.count));
    if (s_.has_bias && bias_.dtype != DType::f32) bias_.f32.resize(static_cast<size_t>(s_.n));
    if (c_dtype_ != DType::f32) c32_.resize(static_cast<size_t>(s_.batch * s_.m * s_.n));
    if (s_.has_residual && (c_colmajor_ || res_colmajor_)) r32_.resize(static_cast<size_t>(res_.count));
    else if (s_.has_residual && res_.dtype != DType::f32) res_.f32.resize(static_cast<size_t>(res_.count));
    prepared_ = true;
    return {};
  }

  // The constant operands were converted once from their buffers: those may not move.
  bool move_operands(const Binding& b) override {
    const size_t inputs = 2u + (s_.has_bias ? 1u : 0u) + (s_.has_residual ? 1u : 0u);
    if (b.inputs.size() != inputs || b.outputs.size() != (amax_ ? 2u : 1u)) return false;
    auto movable = [](const Source& src, const void* p) { return !src.constant || src.data == p; };
    if (!movable(a_, b.inputs[0]) || !movable(b_, b.inputs[1]) || (s_.has_bias && !movable(bias_, b.inputs[2])))
      return false;
    for (const Source* src : {&a_, &b_})  // a constant's S was read with it: a new S is a new constant
      if (src->scale_slot >= 0 &&
          (size_t(src->scale_slot) >= b.scales.size() || (src->constant && src->scale != b.scales[size_t(src->scale_slot)])))
        return false;
    for (Source* src : {&a_, &b_})
      if (src->scale_slot >= 0) src->scale = b.scales[size_t(src->scale_slot)];
    a_.data = b.inputs[0];
    b_.data = b.inputs[1];
    if (s_.has_bias) bias_.data = b.inputs[2];
    if (s_.has_residual) res_.data = b.inputs.back();
    c_ = b.outputs[0];
    if (amax_) amax_ = static_cast<float*>(b.outputs[1]);
    return true;
  }

  Status run() override {
    if (!prepared_) return runtime_error("cpu.gemm: run() before prepare()");
    if ((a_.scale_slot >= 0 && !a_.scale) || (b_.scale_slot >= 0 && !b_.scale))
      return runtime_error("cpu.gemm: a block scale's S is not bound");
    const float* a = a_.ready();
    const float* b = packed_ ? nullptr : b_.ready();  // packed B is read from the panels alone
    float* c = c_dtype_ == DType::f32 ? static_cast<float*>(c_) : c32_.data();
    const int m = static_cast<int>(s_.m), n = static_cast<int>(s_.n), k = static_cast<int>(s_.k);
    const auto tr = [](bool t) { return t ? CblasTrans : CblasNoTrans; };
    const float* bias = s_.has_bias ? bias_.ready() : nullptr;
    const float* res = s_.has_residual ? residual_in_c_order() : nullptr;
    // What follows the product: nothing for an f32 C without epilogue; for an f8 C, the residual,
    // bias and activation in place in the f32 scratch, then quantized with its scale.
    const bool plain = c_dtype_ == DType::f32 && !bias && !res && act_ == Act::none;
    const auto finish = finisher(is_f8(c_dtype_) ? DType::f32 : c_dtype_);
    void* dst = is_f8(c_dtype_) ? static_cast<void*>(c) : c_;
    if (pack_b_) {
      // op(B)'s element (k, n): row-major storage of B, or of its transpose.
      if (!packed_) {
        packed_ = std::make_unique<PackedB>(b, s_.k, s_.n, vb_.trans ? 1 : vb_.ld, vb_.trans ? vb_.ld : 1);
        std::vector<float>().swap(b_.f32);  // an f32 copy of a narrower B is no longer needed
      }
      // The epilogue on each block of C as the product completes it, by the thread that computed
      // it: beta R and the bias as the block is stored, then the activation and the rounding to
      // C's dtype where there are any. No second pass over C, no second hand-off.
      const PackedB::Finish tile = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        finish(c, dst, nullptr, true, nullptr, 0.0f, act_, s_.n, r0, r1, c0, c1);
      };
      const bool stored = c_dtype_ == DType::f32 && act_ == Act::none;
      packed_->multiply(a, va_.ld, s_.batch * s_.m, float(s_.alpha), c, s_.n,
                        {res, float(s_.beta), bias, stored ? nullptr : &tile});
      if (is_f8(c_dtype_)) quantize_output(c, s_.batch * s_.m * s_.n, *c_tensor_, c_, amax_);
      return {};
    }
    for (int64_t e = 0; e < s_.batch; ++e) {
      const float* ae = a + e * va_.stride;
      const float* be = b + e * vb_.stride;
      float* ce = c + e * s_.m * s_.n;
      if (!c_colmajor_) {
        cblas_sgemm(CblasRowMajor, tr(va_.trans), tr(vb_.trans), m, n, k, float(s_.alpha), ae, va_.ld, be, vb_.ld,
                    0.0f, ce, n);
      } else {  // C^T (row-major [n, m]) = op(B)^T op(A)^T
        cblas_sgemm(CblasRowMajor, tr(!vb_.trans), tr(!va_.trans), n, m, k, float(s_.alpha), be, vb_.ld, ae, va_.ld,
                    0.0f, ce, m);
      }
    }
    if (plain) return {};
    // Row-major C: one line per row, the bias along it; colmajor C: one line per column.
    const int64_t lines = c_colmajor_ ? s_.n : s_.batch * s_.m, len = c_colmajor_ ? s_.m : s_.n;
    const bool along = !c_colmajor_;
    // A thread from 16384 elements (about 0.5 ns each), or 2048 through the GELU's tanh or the
    // SiLU's exp (about 3 ns each): with 32768 a 64 x 1024 GELU epilogue ran on 2 of 16 threads.
    const bool costly = act_ == Act::gelu || act_ == Act::gelu_erf || act_ == Act::silu;
    const int64_t per_thread = costly ? int64_t(1) << 11 : int64_t(1) << 14;
    parallel_for(lines, std::max<int64_t>(1, per_thread / len), [&](int64_t l0, int64_t l1) {
      finish(c, dst, bias, along, res, float(s_.beta), act_, len, l0, l1, 0, len);
    });
    if (is_f8(c_dtype_)) quantize_output(c, s_.batch * s_.m * s_.n, *c_tensor_, c_, amax_);
    return {};
  }

 private:
  // R as f32 in C's storage order (it may be stored otherwise, and in another dtype).
  const float* residual_in_c_order() {
    if (!c_colmajor_ && !res_colmajor_) return res_.ready();  // the same order: R as it is, or widened
    const int64_t total = res_.count, rows = s_.m, cols = s_.n;
    // Else element by element through the logical index (divisions: 60 us of a 64 x 128 product).
    parallel_for(total, int64_t(1) << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // Storage index i of C is logical (row, col); R's storage of the same logical element.
        const int64_t row = c_colmajor_ ? i % rows : (i / cols) % rows + (i / (rows * cols)) * rows;
        const int64_t col = c_colmajor_ ? i / rows : i % cols;
        const int64_t at = res_colmajor_ ? col * rows + row : row * cols + col;
        r32_[size_t(i)] = load_as_float(res_.data, res_.dtype, at);
      }
    });
    return r32_.data();
  }

  GemmShape s_;
  Source a_, b_, bias_;
  BlasView va_, vb_;
  void* c_ = nullptr;
  DType c_dtype_ = DType::f32;
  bool c_colmajor_ = false;
  const Tensor* c_tensor_ = nullptr;
  float* amax_ = nullptr;  // the second output of an f8 C, if any
  Act act_ = Act::none;
  Source res_;  // the residual R, when s_.has_residual
  bool res_colmajor_ = false;
  std::vector<float> c32_, r32_;
  bool pack_b_ = false;  // the product runs against B packed once (in the first run)
  std::unique_ptr<PackedB> packed_;
  bool prepared_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_gemm_kernel(const Graph& g, const Op& op, const Binding& binding) {
  std::string why;
  const auto s = gemm_shape(g, op, &why);
  if (!s) return bad_input("op " + op.name + ": " + why);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != op.outputs.size())
    return bad_input("op " + op.name + ": the binding does not match the op's operands");
  if (s->m > INT32_MAX || s->n > INT32_MAX || s->k > INT32_MAX)
    return bad_input("op " + op.name + ": M, N or K beyond cblas_sgemm's 32-bit sizes");
  std::unique_ptr<Kernel> k = std::make_unique<GemmKernel>(g, op, *s, binding);
  return k;
}

}  // namespace gexec::cpu
