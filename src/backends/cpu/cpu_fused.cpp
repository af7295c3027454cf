// The CPU FUSED_ELEMENTWISE kernel: the group's steps per element in f32, each step rounded to its
// dtype as the graph says, reading each input once and writing each output once; threaded.
#include <algorithm>
#include <string>

#include "cpu_kernels.hpp"
#include "cpu_math.hpp"

namespace gexec::cpu {
namespace {

// v rounded to the dtype and read back: what storing the step's result and loading it would give.
float round_as(DType d, float v) {
  switch (d) {
    case DType::f16: return f16_to_float(float_to_f16(v));
    case DType::bf16: return bf16_to_float(float_to_bf16(v));
    default: return v;  // f32 (a group holds no f8 step: the IR's checks refuse one)
  }
}

class FusedKernel final : public Kernel {
 public:
  FusedKernel(const Graph& g, const Op& op, const Binding& b) : attrs_(op.attrs) {
    const Tensor& first = g.tensor(op.outputs[0]);
    count_ = first.numel();
    cols_ = first.shape.back();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Tensor& t = g.tensor(op.inputs[i]);
      in_.push_back({b.inputs[i], t.dtype, t.numel() != count_});
    }
    for (size_t o = 0; o < op.outputs.size(); ++o)
      out_.push_back({b.outputs[o], g.tensor(op.outputs[o]).dtype, attrs_.results[o]});
  }

  Status prepare() override { return {}; }

  Status run() override {
    parallel_for(count_, int64_t(1) << 12, [this](int64_t b, int64_t e) { run_range(b, e); });
    return {};
  }

 private:
  struct In {
    const void* data;
    DType dtype;
    bool bias;  // read at the element's column
  };
  struct Out {
    void* data;
    DType dtype;
    int32_t value;
  };

  // Tiles of kTile elements, one step at a time over the whole tile: the step's switch is taken
  // once per tile, not per element, and each step's loop is a plain loop over arrays (the
  // interpretation per element cost 13 ns an element, 4.7 ms of a 33 ms f32 MLP on two cores).
  static constexpr int64_t kTile = 256;

  // The tile of an input as f32: an f32 input where it lies (copied, it was 7% of a d 256 Llama
  // block's time), any other widened into `to` (the dtype's switch taken per element was as costly
  // as a SiLU's exp).
  const float* load_tile(const In& in, int64_t l0, int n, float* to) const {
    if (!in.bias) {
      if (in.dtype == DType::f32) return static_cast<const float*>(in.data) + l0;
      for (int j = 0; j < n; ++j) to[j] = load_as_float(in.data, in.dtype, l0 + j);
      return to;
    }
    for (int64_t j = 0, col = l0 % cols_; j < n; ++j, col = col + 1 == cols_ ? 0 : col + 1)
      to[j] = load_as_float(in.data, in.dtype, col);
    return to;
  }

  static void step_tile(const GroupStep& st, const float* x, const float* y, float c, float* r, int n) {
    if (is_binary_type(st.type)) {
      const auto each = [&](auto op) {
        if (y)
          for (int j = 0; j < n; ++j) r[j] = op(x[j], y[j]);
        else
          for (int j = 0; j < n; ++j) r[j] = op(x[j], c);
      };
      switch (st.type) {
        case OpType::SUB: each([](float a, float b) { return a - b; }); break;
        case OpType::MUL: each([](float a, float b) { return a * b; }); break;
        case OpType::DIV: each([](float a, float b) { return a / b; }); break;
        default: each([](float a, float b) { return binary(OpType::ADD, a, b); }); break;
      }
    } else {
      std::copy_n(x, n, r);
      unary_tile(st.type, st.approximate, c, r, n);
    }
    if (st.dtype != DType::f32)
      for (int j = 0; j < n; ++j) r[j] = round_as(st.dtype, r[j]);
  }

  void run_range(int64_t begin, int64_t end) const {
    // The values of a tile: the inputs (in place or widened), then each step's result. The
    // outputs are written after the tile's last step, so an output that shares an input's buffer
    // is read before it is written.
    float v[kGroupMaxInputs + kGroupMaxSteps][kTile];
    const float* at[kGroupMaxInputs + kGroupMaxSteps];
    const size_t nin = in_.size();
    for (size_t s = 0; s < attrs_.steps.size(); ++s) at[nin + s] = v[nin + s];
    for (int64_t l0 = begin; l0 < end; l0 += kTile) {
      const int n = int(std::min(kTile, end - l0));
      for (size_t i = 0; i < nin; ++i) at[i] = load_tile(in_[i], l0, n, v[i]);
      for (size_t s = 0; s < attrs_.steps.size(); ++s) {
        const GroupStep& st = attrs_.steps[s];
        // y: the second value, or none where the constant (or POW's exponent) takes its place.
        const float* y = !st.constant && st.args.size() > 1 ? at[st.args[1]] : nullptr;
        step_tile(st, at[st.args[0]], y, st.constant ? float(*st.constant) : 0.0f, v[nin + s], n);
      }
      for (const Out& o : out_) {
        if (o.dtype == DType::f32) {
          std::copy_n(at[o.value], n, static_cast<float*>(o.data) + l0);
          continue;
        }
        for (int j = 0; j < n; ++j) store_from_float(o.data, o.dtype, l0 + j, at[o.value][j]);
      }
    }
  }

  Attrs attrs_;
  std::vector<In> in_;
  std::vector<Out> out_;
  int64_t count_ = 0, cols_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_fused_kernel(const Graph& g, const Op& op, const Binding& binding) {
  if (op.type != OpType::FUSED_ELEMENTWISE) return bad_input("op " + op.name + ": not a FUSED_ELEMENTWISE");
  if (auto problems = check_op(g, op); !problems.empty()) return bad_input("op " + op.name + ": " + problems[0]);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != op.outputs.size())
    return bad_input("op " + op.name + ": the binding does not match the op's operands");
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (TensorId t : *ids)
      if (g.tensor(t).rank() == 2 && g.tensor(t).layout == Layout::colmajor)
        return bad_input("op " + op.name + ": FUSED_ELEMENTWISE reads and writes row-major tensors only");
  std::unique_ptr<Kernel> k = std::make_unique<FusedKernel>(g, op, binding);
  return k;
}

}  // namespace gexec::cpu
