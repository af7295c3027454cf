// The CPU reference's rates on this machine, measured once, and its time estimated from them.
#include "gexec/verify/reference_cost.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/graph_build.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/reference.hpp"

namespace gexec {
namespace {

using Clock = std::chrono::steady_clock;
using Inputs = std::map<std::string, std::vector<uint8_t>>;

bool is_product(const Op& op) { return op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT; }

Inputs inputs_of(const Graph& g) {
  Inputs in;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (idx.is_input(TensorId(t))) in[g.tensors[t].name] = generate_input(drawable_input(g, TensorId(t), {}, 1), 1);
  return in;
}

// The fastest of a few runs of `f`, in seconds: the first may pay for page faults and thread start.
template <class F>
double fastest(F&& f, int runs = 3) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return std::max(best, 1e-6);
}

Graph product_graph(int64_t m, int64_t n, int64_t k) {
  Graph g;
  g.name = "calibration";
  const TensorId a = add_tensor(g, "A", {m, k}, DType::f16), b = add_tensor(g, "B", {k, n}, DType::f16);
  const TensorId c = add_tensor(g, "C", {m, n}, DType::f16);
  add_op(g, "P", OpType::MATMUL, {a, b}, c);
  g.outputs = {c};
  return g;
}

ReferenceRates measure() {
  ReferenceRates r;
  {
    // Enough work for the product to be spread over the threads (reference_gemm.cpp), and for
    // its blocking to be what a large product sees.
    const int64_t s = 256;
    const Graph g = product_graph(s, s, s);
    const Inputs in = inputs_of(g);
    r.product_macs_per_s = double(s * s * s) / fastest([&] { (void)run_reference(g, in); });
  }
  {
    Graph g;
    g.name = "calibration";
    const TensorId x = add_tensor(g, "X", {512, 512}, DType::f16), y = add_tensor(g, "Y", {512, 512}, DType::f16);
    add_op(g, "R", OpType::RELU, {x}, y);
    g.outputs = {y};
    const Inputs in = inputs_of(g);
    r.elements_per_s = double(512 * 512) / fastest([&] { (void)run_reference(g, in); });
  }
  {
    // The operands' layout (counted by elements_per_s) is small beside the sums here.
    const Graph g = product_graph(32, 32, 2048);
    const Inputs in = inputs_of(g);
    const int64_t samples = 512;
    const double t = fastest([&] { (void)run_reference_sampled(g, in, samples, 1); }, 2);
    r.sampled_macs_per_s = double(samples * 2048) / std::max(t - double(2 * 32 * 2048) / r.elements_per_s, t / 4);
  }
  return r;
}

// The passes over K a product's reference makes, as product_all does them (values and
// magnitudes in one): the carried variances where an operand comes from an op, the TF32 squares
// and the blocked magnitudes.
double product_passes(const Graph& g, const GraphIndex& idx, const Op& op, const GemmShape& s, const Precision& prec) {
  const TensorId a = op.inputs[0], b = op.inputs[1];
  double passes = 1;
  if (idx.producer[size_t(a)] != kNone || idx.producer[size_t(b)] != kNone) passes += 1;
  if (prec.tf32 && (g.tensor(a).dtype == DType::f32 || g.tensor(b).dtype == DType::f32)) passes += 1;
  if (bound::blocked_accumulation(prec, s.k)) passes += 1;
  return passes;
}

// The seconds of the ops `wanted` (every op where empty) computed in full.
double full_seconds(const Graph& g, const GraphIndex& idx, const std::vector<bool>* wanted, const Precision& prec,
                    const ReferenceRates& rates) {
  double seconds = 0;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (wanted && !(*wanted)[o]) continue;
    const Op& op = g.ops[o];
    double elements = 0;
    for (TensorId t : op.outputs) elements += double(g.tensor(t).numel());
    seconds += elements / rates.elements_per_s;
    if (is_product(op) && op.inputs.size() >= 2)
      if (auto s = gemm_shape(g, op))
        seconds += double(s->batch) * double(s->m) * double(s->n) * double(s->k) *
                   product_passes(g, idx, op, *s, prec) / rates.product_macs_per_s;
  }
  return seconds;
}

}  // namespace

const ReferenceRates& measured_reference_rates() {
  static const ReferenceRates rates = measure();
  return rates;
}

double estimate_full_seconds(const Graph& g, const Precision& prec, const ReferenceRates& rates) {
  const GraphIndex idx(g);
  double seconds = full_seconds(g, idx, nullptr, prec, rates);
  for (TensorId t : g.outputs) seconds += double(g.tensor(t).numel()) / rates.elements_per_s;  // the comparison
  return seconds;
}

double estimate_sampled_seconds(const Graph& g, const Precision& prec, int64_t samples, int64_t tile,
                                const ReferenceRates& rates) {
  const GraphIndex idx(g);
  // As run_reference_sampled: from the outputs back through elementwise ops and the last
  // product, per element; what a product reads from another op, and everything above it, in full.
  std::vector<bool> full_op(g.ops.size(), false);
  auto mark_full = [&](TensorId t) {
    std::vector<TensorId> stack{t};
    while (!stack.empty()) {
      const TensorId u = stack.back();
      stack.pop_back();
      const OpId p = idx.producer[size_t(u)];
      if (p == kNone || full_op[size_t(p)]) continue;
      full_op[size_t(p)] = true;
      for (TensorId in : g.ops[size_t(p)].inputs) stack.push_back(in);
    }
  };
  // Seconds per sampled element of tensor t, memoised.
  std::vector<double> per(g.tensors.size(), -1);
  double layout = 0;
  std::vector<bool> visiting(g.tensors.size(), false);
  auto per_element = [&](auto&& self, TensorId t) -> double {
    if (per[size_t(t)] >= 0) return per[size_t(t)];
    const OpId p = idx.producer[size_t(t)];
    if (p == kNone || visiting[size_t(t)]) return 0.0;
    visiting[size_t(t)] = true;
    const Op& op = g.ops[size_t(p)];
    double s = 1.0 / rates.elements_per_s;
    if (op.outputs.size() > 1 && op.outputs[1] == t) {
      mark_full(op.outputs[0]);  // an amax needs the whole result
    } else {
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        if (is_product(op) && k < 2) {
          if (idx.producer[size_t(op.inputs[k])] != kNone) mark_full(op.inputs[k]);
          continue;
        }
        s += self(self, op.inputs[k]);
      }
      if (is_product(op))
        if (auto shape = gemm_shape(g, op)) {
          s += double(shape->k) * product_passes(g, idx, op, *shape, prec) / rates.sampled_macs_per_s;
          // Its operands laid out once (reference_sampled.cpp), whatever the samples.
          layout += double(g.tensor(op.inputs[0]).numel() + g.tensor(op.inputs[1]).numel()) / rates.elements_per_s;
        }
    }
    visiting[size_t(t)] = false;
    return per[size_t(t)] = s;
  };
  double seconds = 0;
  for (TensorId t : g.outputs)
    seconds += double(sample_count(g.tensor(t), samples, tile)) * (per_element(per_element, t) + 1.0 / rates.elements_per_s);
  return seconds + layout + full_seconds(g, idx, &full_op, prec, rates);
}

std::vector<ProductKind> reference_products(const Graph& g, const Precision& prec) {
  const GraphIndex idx(g);
  std::vector<ProductKind> kinds;
  for (const Op& op : g.ops) {
    if (!is_product(op) || op.inputs.size() < 2) continue;
    auto s = gemm_shape(g, op);
    if (!s) continue;
    ProductKind k;
    k.shape = *s;
    k.carried_a = idx.producer[size_t(op.inputs[0])] != kNone;
    k.carried_b = idx.producer[size_t(op.inputs[1])] != kNone;
    k.carried = k.carried_a || k.carried_b;
    k.squares = prec.tf32 && (g.tensor(op.inputs[0]).dtype == DType::f32 || g.tensor(op.inputs[1]).dtype == DType::f32);
    if (bound::blocked_accumulation(prec, s->k)) k.block = prec.accumulate_block;
    kinds.push_back(k);
  }
  return kinds;
}

}  // namespace gexec
