// The CPU FUSED_ELEMENTWISE kernel: the group's steps per element in f32, each step rounded to its
// dtype as the graph says, reading each input once and writing each output once; threaded.
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
    case DType::f32: return v;
  }
  return v;
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
    parallel_for(count_, int64_t(1) << 14, [this](int64_t b, int64_t e) { run_range(b, e); });
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

  void run_range(int64_t begin, int64_t end) const {
    float v[kGroupMaxInputs + kGroupMaxSteps];
    const size_t nin = in_.size();
    for (int64_t l = begin; l < end; ++l) {
      for (size_t i = 0; i < nin; ++i) v[i] = load_as_float(in_[i].data, in_[i].dtype, in_[i].bias ? l % cols_ : l);
      for (size_t s = 0; s < attrs_.steps.size(); ++s) {
        const GroupStep& st = attrs_.steps[s];
        const float x = v[st.args[0]];
        const float y = st.constant ? float(*st.constant) : st.args.size() > 1 ? v[st.args[1]] : 0.0f;
        // The activations and POW (y: its exponent); CAST: the rounding below.
        const float r = is_binary_type(st.type) ? binary(st.type, x, y) : unary(st.type, x, st.approximate, y);
        v[nin + s] = round_as(st.dtype, r);
      }
      for (const Out& o : out_) store_from_float(o.data, o.dtype, l, v[o.value]);
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
