// The CPU backend's FP8 conversions: CAST to and from f8 (quantize, dequantize) in double with
// the tensors' scales, and the quantization of an f8 product's result, each with its amax.
#include <atomic>
#include <cmath>

#include "cpu_kernels.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec::cpu {
namespace {

// Raises *to to v where v is larger; the chunks of parallel_for meet here once each.
void atomic_max(std::atomic<float>& to, float v) {
  float cur = to.load();
  while (v > cur && !to.compare_exchange_weak(cur, v)) {
  }
}

class F8CastKernel final : public Kernel {
 public:
  F8CastKernel(const Tensor& x, const Tensor& y, const Binding& b)
      : x_(x), y_(y), in_(b.inputs[0]), out_(b.outputs[0]),
        amax_(b.outputs.size() > 1 ? static_cast<float*>(b.outputs[1]) : nullptr) {}

  Status prepare() override { return {}; }
  // Nothing is kept from the buffers between runs (the scales are the tensors').
  bool move_operands(const Binding& b) override {
    if (b.inputs.size() != 1 || b.outputs.size() != (amax_ ? 2u : 1u)) return false;
    in_ = b.inputs[0];
    out_ = b.outputs[0];
    if (amax_) amax_ = static_cast<float*>(b.outputs[1]);
    return true;
  }

  Status run() override {
    std::atomic<float> amax{0.0f};
    const bool colmajor_x = x_.rank() == 2 && x_.layout == Layout::colmajor;
    const bool same_order = x_.layout == y_.layout || x_.rank() != 2;
    parallel_for(x_.numel(), int64_t(1) << 15, [&](int64_t b, int64_t e) {
      double m = 0;
      for (int64_t l = b; l < e; ++l) {
        // Logical element l; each side stored in its own layout.
        const int64_t sx = colmajor_x ? (l % x_.shape[1]) * x_.shape[0] + l / x_.shape[1] : l;
        const int64_t sy = same_order ? sx : (y_.layout == Layout::colmajor ? (l % y_.shape[1]) * y_.shape[0] + l / y_.shape[1] : l);
        const double v = load_real(in_, x_, sx);
        if (std::fabs(v) > m) m = std::fabs(v);
        store_real(out_, y_, sy, v);
      }
      atomic_max(amax, float(m));
    });
    if (amax_) *amax_ = amax.load();
    return {};
  }

 private:
  const Tensor& x_;
  const Tensor& y_;
  const void* in_;
  void* out_;
  float* amax_;
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
  std::unique_ptr<Kernel> k = std::make_unique<F8CastKernel>(x, y, binding);
  return k;
}

}  // namespace gexec::cpu
