// GROUPED_GEMM on the CPU: per group, its rows of X against its weight through cblas_sgemm (f32
// copies of f16/bf16 operands, real values of f8 ones), then alpha, bias, activation and rounding to Y's dtype in one pass;
// rows no group owns are written as 0. Offsets that decrease or exceed T fail the run (exit 3).
#include <cblas.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "cpu_math.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/grouped_shape.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec::cpu {
namespace {

// The n elements of tensor t's buffer as f32 (a copy only where t is not f32); an f8 tensor's
// real values, code x scale (a block scale's S given, as it is in this run).
const float* widened(const void* data, const Tensor& graph_t, const void* s, int64_t n, std::vector<float>& copy) {
  if (graph_t.dtype == DType::f32) return static_cast<const float*>(data);
  const Tensor t = s ? with_block_values(graph_t, static_cast<const float*>(s)) : graph_t;
  copy.resize(size_t(n));
  parallel_for(n, int64_t(1) << 16, [&](int64_t b, int64_t e) {
    if (is_f8(t.dtype))
      for (int64_t i = b; i < e; ++i) copy[size_t(i)] = float(load_real(data, t, i));
    else
      for (int64_t i = b; i < e; ++i) copy[size_t(i)] = load_as_float(data, t.dtype, i);
  });
  return copy.data();
}

class GroupedKernel final : public Kernel {
 public:
  GroupedKernel(const Graph& g, const Op& op, const GroupedShape& s, const Binding& b)
      : s_(s), b_(b), x_t_(g.tensor(op.inputs[0])), w_t_(g.tensor(op.inputs[1])),
        y_t_(g.tensor(op.outputs[0]).dtype), bias_t_(s.has_bias ? g.tensor(op.inputs[3]) : Tensor{}),
        x_s_(block_s(g, op, op.inputs[0], b)), w_s_(block_s(g, op, op.inputs[1], b)) {}

  Status prepare() override { return {}; }

  Status run() override {
    const auto* ends = static_cast<const int32_t*>(b_.inputs[2]);
    if (std::string p = offsets_problem(ends, s_.groups, s_.tokens); !p.empty()) return runtime_error(p);
    if ((x_t_.scale.is_block() && !x_s_) || (w_t_.scale.is_block() && !w_s_))
      return runtime_error("cpu.grouped_gemm: a block scale's S is not bound");
    const float* x = widened(b_.inputs[0], x_t_, x_s_, s_.tokens * s_.k, x32_);
    const float* w = widened(b_.inputs[1], w_t_, w_s_, s_.groups * s_.k * s_.n, w32_);
    const float* bias = s_.has_bias ? widened(b_.inputs[3], bias_t_, nullptr, s_.groups * s_.n, bias32_) : nullptr;
    y32_.resize(size_t(s_.tokens * s_.n));
    int64_t begin = 0;
    for (int64_t e = 0; e < s_.groups; ++e) {
      const int64_t end = ends[e], rows = end - begin;
      if (rows > 0) {
        // Row-major: Y_g [rows, N] = alpha X_g [rows, K] op(W_g); W_g is [K, N], or [N, K] with trans_b.
        cblas_sgemm(CblasRowMajor, CblasNoTrans, s_.trans_b ? CblasTrans : CblasNoTrans, int(rows), int(s_.n),
                    int(s_.k), float(s_.alpha), x + begin * s_.k, int(s_.k), w + e * s_.k * s_.n,
                    int(s_.trans_b ? s_.k : s_.n), 0.0f, y32_.data() + begin * s_.n, int(s_.n));
      }
      begin = end;
    }
    const int64_t owned = begin;
    std::vector<int32_t> group_of(static_cast<size_t>(owned));
    for (int64_t e = 0, r = 0; e < s_.groups; ++e)
      for (; r < ends[e]; ++r) group_of[size_t(r)] = int32_t(e);
    void* y = b_.outputs[0];
    parallel_for(s_.tokens, 64, [&](int64_t r0, int64_t r1) {
      constexpr int64_t kTile = 256;
      float v[kTile];
      for (int64_t r = r0; r < r1; ++r) {
        const float* in = y32_.data() + r * s_.n;
        const float* bb = bias && r < owned ? bias + int64_t(group_of[size_t(r)]) * s_.n : nullptr;
        for (int64_t j0 = 0; j0 < s_.n; j0 += kTile) {  // a tile at a time, activated as one loop
          const int64_t n = std::min(kTile, s_.n - j0);
          if (r >= owned) std::fill_n(v, n, 0.0f);
          else if (bb)
            for (int64_t j = 0; j < n; ++j) v[j] = in[j0 + j] + bb[j0 + j];
          else
            std::copy_n(in + j0, n, v);
          if (r < owned) activate_tile(s_.act, v, n);
          for (int64_t j = 0; j < n; ++j) store_from_float(y, y_t_, r * s_.n + j0 + j, v[j]);
        }
      }
    });
    return {};
  }

  // The sums in f32 by OpenBLAS, whose order along K is its own: the f32 bound over K.
  Precision precision() const override { return {}; }

 private:
  GroupedShape s_;
  Binding b_;
  Tensor x_t_, w_t_;  // copies: their dtypes and (f8) scales
  DType y_t_;
  Tensor bias_t_;
  const void *x_s_, *w_s_;  // the S of a block-scaled X and W (read in every run), else null
  std::vector<float> x32_, w32_, bias32_, y32_;

  static const void* block_s(const Graph& g, const Op& op, TensorId t, const Binding& b) {
    const int slot = scale_slot(g, op, t);
    return slot >= 0 && size_t(slot) < b.scales.size() ? b.scales[size_t(slot)] : nullptr;
  }
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_grouped_kernel(const Graph& g, const Op& op, const Binding& binding) {
  std::string why;
  const auto s = grouped_shape(g, op, &why);
  if (!s) return bad_input(why);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != 1)
    return bad_input("op " + op.name + ": GROUPED_GEMM bound to the wrong number of buffers");
  // cblas takes int dimensions.
  if (s->tokens > INT32_MAX || s->k > INT32_MAX || s->n > INT32_MAX)
    return runtime_error("op " + op.name + ": a dimension above 2^31 - 1, which cblas_sgemm cannot take");
  return std::unique_ptr<Kernel>(new GroupedKernel(g, op, *s, binding));
}

}  // namespace gexec::cpu
