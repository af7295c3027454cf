// The CPU elementwise kernels (every op of kGroupStepTypes), in f32, threaded over elements.
#include <algorithm>
#include <cmath>
#include <string>

#include "cpu_kernels.hpp"
#include "cpu_math.hpp"

namespace gexec::cpu {
namespace {

// Where logical (row-major) element l of an operand is stored.
struct Operand {
  void* data = nullptr;
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0;
  bool colmajor = false;
  int64_t at(int64_t l) const { return colmajor ? colmajor_index(l, rows, cols) : l; }
  float load(int64_t l) const { return load_as_float(data, dtype, at(l)); }
};

Operand operand(const Tensor& t, void* data) {
  Operand o;
  o.data = data;
  o.dtype = t.dtype;
  o.colmajor = t.rank() == 2 && t.layout == Layout::colmajor;
  if (o.colmajor) o.rows = t.shape[0], o.cols = t.shape[1];
  return o;
}

class ElementwiseKernel final : public Kernel {
 public:
  ElementwiseKernel(const Op& op, std::vector<Operand> in, Operand out, int64_t count, int64_t bias_len)
      : type_(op.type), approx_(op.attrs.approximate), constant_(float(op.attrs.constant.value_or(0.0))),
        has_constant_(op.attrs.constant.has_value()), in_(std::move(in)), out_(out), count_(count), bias_len_(bias_len) {}

  Status prepare() override { return {}; }
  // Nothing is kept from the buffers between runs.
  bool move_operands(const Binding& b) override {
    if (b.inputs.size() != in_.size() || b.outputs.size() != 1) return false;
    for (size_t i = 0; i < in_.size(); ++i) in_[i].data = b.inputs[i];
    out_.data = b.outputs[0];
    return true;
  }

  Status run() override {
    // A thread from 4096 elements: one element costs 2 to 15 ns (the op's switch is taken per
    // element, an erf or exp on top), and the pool hands out a job in a few microseconds while its
    // threads are watching for one (thread_pool.cpp).
    parallel_for(count_, int64_t(1) << 12, [this](int64_t begin, int64_t end) { run_range(begin, end); });
    return {};
  }

 private:
  void run_range(int64_t begin, int64_t end) const {
    const Operand& x = in_[0];
    if (!is_binary_type(type_) && type_ != OpType::BIAS_ADD) {  // a tile at a time (unary_tile)
      float v[256];
      for (int64_t l0 = begin; l0 < end; l0 += 256) {
        const int64_t n = std::min<int64_t>(256, end - l0);
        // f32 row-major operands are copied (the per-element load and store switch on the dtype).
        if (x.dtype == DType::f32 && !x.colmajor) std::copy_n(static_cast<const float*>(x.data) + l0, n, v);
        else
          for (int64_t j = 0; j < n; ++j) v[j] = x.load(l0 + j);
        unary_tile(type_, approx_, constant_, v, n);  // CAST: none, the store rounds
        if (out_.dtype == DType::f32 && !out_.colmajor) std::copy_n(v, n, static_cast<float*>(out_.data) + l0);
        else
          for (int64_t j = 0; j < n; ++j) store_from_float(out_.data, out_.dtype, out_.at(l0 + j), v[j]);
      }
      return;
    }
    for (int64_t l = begin; l < end; ++l) {
      const float v = x.load(l);
      float r = v;
      if (type_ == OpType::BIAS_ADD) r = v + load_as_float(in_[1].data, in_[1].dtype, l % bias_len_);
      else if (is_binary_type(type_)) r = binary(type_, v, has_constant_ ? constant_ : in_[1].load(l));
      store_from_float(out_.data, out_.dtype, out_.at(l), r);
    }
  }

  OpType type_;
  GeluApprox approx_;
  float constant_;  // Attrs::constant as the f32 the kernel computes with
  bool has_constant_;
  std::vector<Operand> in_;
  Operand out_;
  int64_t count_, bias_len_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_elementwise_kernel(const Graph& g, const Op& op, const Binding& binding) {
  if (op.type == OpType::CAST && !op.inputs.empty() && !op.outputs.empty() &&
      (is_f8(g.tensor(op.inputs[0]).dtype) || is_f8(g.tensor(op.outputs[0]).dtype)))
    return make_f8_cast_kernel(g, op, binding);
  if (!is_group_step_type(op.type)) return bad_input("op " + op.name + ": not an elementwise op");
  const size_t inputs = operand_count(op.type, op.attrs.constant.has_value());
  if (op.inputs.size() != inputs || op.outputs.size() != 1 || binding.inputs.size() != inputs ||
      binding.outputs.size() != 1)
    return bad_input("op " + op.name + ": expected " + std::to_string(inputs) + " input(s) and one output, bound");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (x.numel() != y.numel()) return bad_input("op " + op.name + ": input and output element counts differ");
  int64_t bias_len = 1;
  if (op.type == OpType::BIAS_ADD) {
    bias_len = x.shape.empty() ? 0 : x.shape.back();
    if (bias_len <= 0 || g.tensor(op.inputs[1]).numel() != bias_len)
      return bad_input("op " + op.name + ": bias length differs from X's last dimension");
  }
  if (op.type != OpType::BIAS_ADD && inputs == 2 && g.tensor(op.inputs[1]).numel() != x.numel())
    return bad_input("op " + op.name + ": operands differ in element count");
  std::vector<Operand> in;
  for (size_t i = 0; i < inputs; ++i) in.push_back(operand(g.tensor(op.inputs[i]), binding.inputs[i]));
  std::unique_ptr<Kernel> k =
      std::make_unique<ElementwiseKernel>(op, std::move(in), operand(y, binding.outputs[0]), y.numel(), bias_len);
  return k;
}

}  // namespace gexec::cpu
