// The CPU reference: the graph as loaded, op by op, in double, each result rounded to its dtype.
#include "gexec/verify/reference.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/rng/round.hpp"
#include "ref_math.hpp"
#include "reference_gemm.hpp"

namespace gexec {
namespace {

// Error scales, per element: a graph input's is |value|; a product's is
// |alpha| * sum_k scale(a_ik) scale(b_kj) + scale(bias_j), the operands' scales standing in for
// their magnitudes so that an error an operand may carry is bounded too (for inputs they are
// |a_ik| |b_kj|); BIAS_ADD and ADD add their operands' scales; RELU keeps its input's (it is
// 1-Lipschitz); GELU multiplies it by kGeluSlope, SILU by kSiluSlope; MUL multiplies its
// operands' scales; a residual adds |beta| * scale(R); CAST keeps max(scale, |rounded value|);
// a FUSED_ELEMENTWISE group's steps follow the same rules, step by step.

// A tensor's values and error scales in logical (row-major) order. Layouts are applied only
// where bytes come in and results go out, so every op indexes its operands the same way.
struct Vals {
  std::vector<double> value, scale;
};

using ref::gelu_erf;
using ref::gelu_tanh;
using ref::kGeluSlope;
using ref::relu;
using ref::round_to;
using ref::storage_of;

Result<Vals> from_bytes(const Tensor& t, const std::vector<uint8_t>& bytes) {
  if (static_cast<int64_t>(bytes.size()) != t.bytes())
    return bad_input("input \"" + t.name + "\" has " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(t.bytes()));
  const int64_t n = t.numel();
  Vals v{std::vector<double>(static_cast<size_t>(n)), std::vector<double>(static_cast<size_t>(n))};
  for (int64_t l = 0; l < n; ++l) {
    v.value[l] = load_as_float(bytes.data(), t.dtype, storage_of(t, l));
    v.scale[l] = std::fabs(v.value[l]);
  }
  return v;
}

RefTensor to_storage(const Tensor& t, const Vals& v) {
  RefTensor r{std::vector<double>(v.value.size()), std::vector<double>(v.scale.size())};
  for (int64_t l = 0; l < static_cast<int64_t>(v.value.size()); ++l) {
    r.value[storage_of(t, l)] = v.value[l];
    r.scale[storage_of(t, l)] = v.scale[l];
  }
  return r;
}

// MATMUL and GEMM_BIAS_ACT: op(A) and op(B) laid out densely, multiplied, then bias, act, rounding.
Result<Vals> run_product(const Graph& g, const Op& op, const std::vector<const Vals*>& in,
                         const std::function<void(double)>& progress) {
  std::string why;
  auto shape = gemm_shape(g, op, &why);
  if (!shape) return bad_input(why);
  const GemmShape& s = *shape;
  ref::DenseProduct p;
  p.batch = s.batch, p.m = s.m, p.n = s.n, p.k = s.k, p.b_batched = s.b_batched, p.alpha = s.alpha;
  const int64_t b_count = s.b_batched ? s.batch : 1;
  if (static_cast<int64_t>(in[0]->value.size()) != s.batch * s.m * s.k ||
      static_cast<int64_t>(in[1]->value.size()) != b_count * s.k * s.n)
    return bad_input("product operands do not match their geometry");
  p.a.resize(static_cast<size_t>(s.batch * s.m * s.k));
  p.a_scale.resize(p.a.size());
  for (int64_t e = 0; e < s.batch; ++e)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t kk = 0; kk < s.k; ++kk) {
        // A is stored [K, M] per entry when transposed.
        const int64_t src = e * s.m * s.k + (s.trans_a ? kk * s.m + i : i * s.k + kk);
        const int64_t dst = (e * s.m + i) * s.k + kk;
        p.a[dst] = in[0]->value[src];
        p.a_scale[dst] = in[0]->scale[src];
      }
  p.b.resize(static_cast<size_t>(b_count * s.k * s.n));
  p.b_scale.resize(p.b.size());
  for (int64_t e = 0; e < b_count; ++e)
    for (int64_t kk = 0; kk < s.k; ++kk)
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t src = e * s.k * s.n + (s.trans_b ? j * s.k + kk : kk * s.n + j);
        const int64_t dst = (e * s.k + kk) * s.n + j;
        p.b[dst] = in[1]->value[src];
        p.b_scale[dst] = in[1]->scale[src];
      }
  Vals out;
  ref::product_all(p, out.value, out.scale, progress);

  const bool has_bias = s.has_bias;
  if (has_bias && static_cast<int64_t>(in[2]->value.size()) != s.n)
    return bad_input("bias length " + std::to_string(in[2]->value.size()) + " differs from N=" +
                     std::to_string(s.n));
  const Vals* res = s.has_residual ? in.back() : nullptr;
  if (res && res->value.size() != out.value.size()) return bad_input("residual R does not match C's elements");
  const Act act = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
  const DType dt = g.tensor(op.outputs[0]).dtype;
  for (size_t x = 0; x < out.value.size(); ++x) {
    double v = out.value[x], sc = out.scale[x];
    if (has_bias) {
      const size_t j = x % static_cast<size_t>(s.n);
      v += in[2]->value[j];
      sc += in[2]->scale[j];
    }
    if (res) {  // inside the activation, as cuBLASLt adds beta * C (graph-format.md)
      v += s.beta * res->value[x];
      sc += std::fabs(s.beta) * res->scale[x];
    }
    if (act == Act::relu) v = relu(v);
    if (act == Act::gelu) v = gelu_tanh(v), sc *= kGeluSlope;
    out.value[x] = round_to(dt, v);
    out.scale[x] = sc;
  }
  return out;
}

Result<Vals> run_elementwise(const Graph& g, const Op& op, const std::vector<const Vals*>& in) {
  const Tensor& y = g.tensor(op.outputs[0]);
  const Tensor& x = g.tensor(op.inputs[0]);
  const size_t n = in[0]->value.size();
  if (static_cast<int64_t>(n) != y.numel()) return bad_input("output element count differs from the input's");
  size_t bias_len = 0;
  if (op.type == OpType::BIAS_ADD) {
    bias_len = x.shape.empty() ? 0 : static_cast<size_t>(x.shape.back());
    if (bias_len == 0 || in[1]->value.size() != bias_len) return bad_input("bias length differs from X's last dimension");
  }
  if ((op.type == OpType::ADD || op.type == OpType::MUL) && in[1]->value.size() != n)
    return bad_input(std::string(op_type_name(op.type)) + " operands differ in element count");
  switch (op.type) {
    case OpType::BIAS_ADD: case OpType::ADD: case OpType::MUL: case OpType::RELU: case OpType::GELU:
    case OpType::SILU: case OpType::CAST: break;
    default: return bad_input("not an elementwise op");
  }

  Vals out{std::vector<double>(n), std::vector<double>(n)};
  for (size_t l = 0; l < n; ++l) {
    const size_t j = op.type == OpType::BIAS_ADD ? l % bias_len : l;
    const ref::Elem second = in.size() > 1 ? ref::Elem{in[1]->value[j], in[1]->scale[j]} : ref::Elem{};
    const ref::Elem r = ref::elementwise(op.type, op.attrs.approximate, y.dtype, {in[0]->value[l], in[0]->scale[l]}, second);
    out.value[l] = r.value;
    out.scale[l] = r.scale;
  }
  return out;
}

// FUSED_ELEMENTWISE: the steps per element, each rounded to its dtype as the graph says; one
// Vals per output.
Result<std::vector<Vals>> run_group(const Graph& g, const Op& op, const std::vector<const Vals*>& in) {
  if (!check_op(g, op).empty()) return bad_input("FUSED_ELEMENTWISE does not check: " + check_op(g, op)[0]);
  const Tensor& first = g.tensor(op.outputs[0]);
  const size_t n = static_cast<size_t>(first.numel()), cols = static_cast<size_t>(first.shape.back());
  std::vector<Vals> outs(op.outputs.size(), Vals{std::vector<double>(n), std::vector<double>(n)});
  std::vector<ref::Elem> vals;
  for (size_t l = 0; l < n; ++l) {
    vals.clear();
    for (const Vals* v : in) {
      const size_t at = v->value.size() == n ? l : l % cols;  // a bias input is read at the column
      vals.push_back({v->value[at], v->scale[at]});
    }
    ref::group_values(op.attrs, vals);
    for (size_t o = 0; o < outs.size(); ++o) {
      outs[o].value[l] = vals[size_t(op.attrs.results[o])].value;
      outs[o].scale[l] = vals[size_t(op.attrs.results[o])].scale;
    }
  }
  return outs;
}

}  // namespace

double reference_work(const Graph& g) {
  double work = 0;
  for (const Op& op : g.ops)
    if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT)
      if (auto s = gemm_shape(g, op)) work += gemm_flops(*s) / 2;
  return work;
}

Result<std::map<std::string, RefTensor>> run_reference(const Graph& g,
                                                       const std::map<std::string, std::vector<uint8_t>>& inputs,
                                                       const ProgressFn& progress) {
  const double total_work = reference_work(g);
  double done_work = 0;
  const size_t count = g.tensors.size();
  std::vector<bool> written(count, false);
  for (const Op& op : g.ops)
    for (TensorId t : op.outputs)
      if (t >= 0 && static_cast<size_t>(t) < count) written[t] = true;

  std::vector<Vals> vals(count);
  std::vector<bool> ready(count, false);
  auto need = [&](TensorId t) -> Status {
    if (t < 0 || static_cast<size_t>(t) >= count) return bad_input("tensor id " + std::to_string(t) + " out of range");
    if (ready[t]) return {};
    const Tensor& tensor = g.tensor(t);
    if (written[t]) return bad_input("tensor \"" + tensor.name + "\" is read before the op that writes it");
    auto it = inputs.find(tensor.name);
    if (it == inputs.end()) return bad_input("no values for graph input \"" + tensor.name + "\"");
    auto v = from_bytes(tensor, it->second);
    if (!v) return v.error();
    vals[t] = std::move(v.value());
    ready[t] = true;
    return {};
  };

  for (const Op& op : g.ops) {
    std::vector<const Vals*> in;
    for (TensorId t : op.inputs) {
      Status s = need(t);
      if (!s) return s.error().with("reference, op " + op.name);
      in.push_back(&vals[t]);
    }
    const bool group = op.type == OpType::FUSED_ELEMENTWISE;
    bool outs_ok = !op.outputs.empty() && (group || op.outputs.size() == 1);
    for (TensorId t : op.outputs) outs_ok = outs_ok && t >= 0 && static_cast<size_t>(t) < count;
    if (!outs_ok || in.empty()) return bad_input("reference, op " + op.name + ": expected inputs and one output");
    if (group) {
      auto r = run_group(g, op, in);
      if (!r) return r.error().with("reference, op " + op.name);
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        vals[op.outputs[o]] = std::move((*r)[o]);
        ready[op.outputs[o]] = true;
      }
      continue;
    }
    const bool product = op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT;
    if ((product || op.type == OpType::BIAS_ADD || op.type == OpType::ADD || op.type == OpType::MUL) && in.size() < 2)
      return bad_input("reference, op " + op.name + ": expected two inputs");
    std::function<void(double)> op_progress;
    if (progress && product && total_work > 0)
      if (auto s = gemm_shape(g, op))
        op_progress = [&progress, done_work, share = gemm_flops(*s) / 2, total_work](double d) {
          progress(std::min(1.0, (done_work + d * share) / total_work));
        };
    auto r = product ? run_product(g, op, in, op_progress) : run_elementwise(g, op, in);
    if (!r) return r.error().with("reference, op " + op.name);
    vals[op.outputs[0]] = std::move(r.value());
    ready[op.outputs[0]] = true;
    if (progress && total_work > 0) {
      if (auto s = product ? gemm_shape(g, op) : std::nullopt) done_work += gemm_flops(*s) / 2;
      progress(std::min(1.0, done_work / total_work));
    }
  }

  std::map<std::string, RefTensor> out;
  for (TensorId t : g.outputs) {
    Status s = need(t);
    if (!s) return s.error().with("reference, output");
    out[g.tensor(t).name] = to_storage(g.tensor(t), vals[t]);
  }
  return out;
}

}  // namespace gexec
