// The CPU backend's FP8 conversions: CAST to and from f8 (quantize, dequantize) in double with
// the tensors' scales (a block scale's S read, or computed by the quantizing CAST), and the
// quantization of an f8 product's result, each with its amax.
#include <algorithm>
#include <atomic>
#include <cmath>

#include "cpu_kernels.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec::cpu {
namespace {

// Raises *to to v where v is larger; the chunks of parallel_for meet here once each.
void atomic_max(std::atomic<float>& to, float v) {
  float cur = to.load();
  while (v > cur && !to.compare_exchange_weak(cur, v)) {
  }
}

// A CAST to, from or between f8 tensors. With block scales: X's S is read; Y's S is read where
// it is given, or computed per block (amax / the largest finite f8 value) and written as the
// second output where the CAST computes it.
class F8CastKernel final : public Kernel {
 public:
  F8CastKernel(const Graph& g, const Op& op, const Binding& b)
      : x_(g.tensor(op.inputs[0])), y_(g.tensor(op.outputs[0])), writes_s_(writes_block_scale(g, op)),
        x_slot_(scale_slot(g, op, op.inputs[0])), y_slot_(writes_s_ ? -1 : scale_slot(g, op, op.outputs[0])) {
    bound_ = move_operands(b);
  }

  Status prepare() override { return {}; }
  // Nothing is kept from the buffers between runs (the scales are the tensors' or S's, read in each run).
  bool move_operands(const Binding& b) override {
    const size_t outputs = writes_s_ ? 2u : 1u;  // and an optional amax
    const size_t scales = size_t(std::max(x_slot_, y_slot_) + 1);
    if (b.inputs.size() != 1 || b.outputs.size() < outputs || b.scales.size() < scales) return false;
    in_ = b.inputs[0];
    out_ = b.outputs[0];
    second_ = b.outputs.size() > 1 ? b.outputs[1] : nullptr;
    x_scale_ = x_slot_ >= 0 ? static_cast<const float*>(b.scales[size_t(x_slot_)]) : nullptr;
    y_scale_ = y_slot_ >= 0 ? static_cast<const float*>(b.scales[size_t(y_slot_)]) : nullptr;
    return true;
  }

  Status run() override {
    if (!bound_ || (x_slot_ >= 0 && !x_scale_) || (y_slot_ >= 0 && !y_scale_) || (writes_s_ && !second_))
      return runtime_error("cpu.f8_cast: its operands (or a block scale's S) are not bound");
    const Tensor x = x_scale_ ? with_block_values(x_, x_scale_) : x_;
    if (writes_s_) {
      float* s = static_cast<float*>(second_);
      compute_block_scales(x, s);
      cast(x, with_block_values(y_, s));
    } else {
      const float amax = cast(x, y_scale_ ? with_block_values(y_, y_scale_) : y_);
      if (second_) *static_cast<float*>(second_) = amax;
    }
    return {};
  }

 private:
  // Every element of x stored into y (each side in its own layout); returns max |x|.
  float cast(const Tensor& x, const Tensor& y) {
    std::atomic<float> amax{0.0f};
    parallel_for(x.numel(), int64_t(1) << 15, [&](int64_t b, int64_t e) {
      double m = 0;
      for (int64_t l = b; l < e; ++l) {
        const double v = load_real(in_, x, storage_index(x, l));
        if (std::fabs(v) > m) m = std::fabs(v);
        store_real(out_, y, storage_index(y, l), v);
      }
      atomic_max(amax, float(m));
    });
    return amax.load();
  }

  // S of every block of y_ from the real values of x (rank 2, y_'s blocks), in f32.
  void compute_block_scales(const Tensor& x, float* s) const {
    const int64_t rows = y_.shape[0], cols = y_.shape[1], br = y_.scale.block[0], bc = y_.scale.block[1];
    const std::vector<int64_t> blocks = block_scale_shape(y_);
    const int64_t block_rows = blocks[0], block_cols = blocks[1];
    parallel_for(block_rows, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i)
        for (int64_t j = 0; j < block_cols; ++j) {
          double m = 0;  // NaN compares false: left out
          for (int64_t r = i * br; r < std::min(rows, (i + 1) * br); ++r)
            for (int64_t c = j * bc; c < std::min(cols, (j + 1) * bc); ++c) {
              const double v = std::fabs(load_real(in_, x, storage_index(x, r * cols + c)));
              if (v > m) m = v;
            }
          s[i * block_cols + j] = block_scale_of(float(m), y_.dtype);
        }
    });
  }

  const Tensor& x_;
  const Tensor& y_;
  const bool writes_s_;
  const int x_slot_, y_slot_;
  bool bound_ = false;
  const void* in_ = nullptr;
  void* out_ = nullptr;
  void* second_ = nullptr;  // the amax, or S where this CAST computes it
  const float* x_scale_ = nullptr;
  const float* y_scale_ = nullptr;
};

}  // namespace

void quantize_output(const float* src, int64_t n, const Tensor& t, void* dst, float* amax) {
  std::atomic<float> m{0.0f};
  parallel_for(n, int64_t(1) << 15, [&](int64_t b, int64_t e) {
    float local = 0;
    for (int64_t i = b; i < e; ++i) {
      local = std::fabs(src[i]) > local ? std::fabs(src[i]) : local;
      store_real(dst, t, i, src[i]);
    }
    atomic_max(m, local);
  });
  if (amax) *amax = m.load();
}

Result<std::unique_ptr<Kernel>> make_f8_cast_kernel(const Graph& g, const Op& op, const Binding& binding) {
  if (op.inputs.size() != 1 || binding.inputs.size() != 1 || op.outputs.empty() ||
      binding.outputs.size() != op.outputs.size())
    return bad_input("op " + op.name + ": expected one input and one output (and an amax), bound");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (x.numel() != y.numel()) return bad_input("op " + op.name + ": input and output element counts differ");
  std::unique_ptr<Kernel> k = std::make_unique<F8CastKernel>(g, op, binding);
  return k;
}

}  // namespace gexec::cpu
