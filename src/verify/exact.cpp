// --verify exact: the integer range that keeps a graph exact, and the inputs drawn from it.
#include "gexec/verify/exact.hpp"

#include <cmath>
#include <cstdio>
#include <random>

#include "gexec/ir/gemm_shape.hpp"

namespace gexec {
namespace {

// Integers print as integers (the ranges here are), anything else with %g.
std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, v == std::floor(v) && std::fabs(v) < 1e18 ? "%.0f" : "%g", v);
  return b;
}

int significand_bits(DType t) { return t == DType::f16 ? 11 : t == DType::bf16 ? 8 : 24; }

// Every value of a tensor is a multiple of 2^quantum and at most `max` in magnitude.
struct Range {
  double max = 0;
  int quantum = 0;
};

// Whether values of `r` are exact in a p-bit significand: |v| / 2^quantum <= 2^p (every integer
// up to 2^p is representable), and the quantum stays above the subnormal spacing.
bool fits(const Range& r, int bits, DType t) {
  const int min_exp = t == DType::f16 ? -24 : -149;
  return r.max <= std::ldexp(1.0, bits + r.quantum) && r.quantum >= min_exp;
}

// The ranges of every tensor for inputs in -range..range, or why the graph is not exact.
Status check_graph(const Graph& g, int64_t range) {
  std::vector<Range> rs(g.tensors.size(), Range{double(range), 0});
  auto name = [&](TensorId t) { return "\"" + g.tensor(t).name + "\""; };
  for (const Op& op : g.ops) {
    const TensorId y = op.outputs.at(0);
    const DType yt = g.tensor(y).dtype;
    // An f8 value is a stored code times a scale of any size, quantized with another tensor's
    // scale, and FP8 tensor cores accumulate in fewer bits than f32: outside this integer model.
    for (const auto* ids : {&op.inputs, &op.outputs})
      for (TensorId t : *ids)
        if (is_f8(g.tensor(t).dtype))
          return bad_input("op " + op.name + ": " + name(t) + " is " + std::string(dtype_name(g.tensor(t).dtype)) +
                           "; exact mode does not take f8 tensors (their scales and FP8 accumulation are not exact)");
    Range out;
    switch (op.type) {
      case OpType::MATMUL:
      case OpType::GEMM_BIAS_ACT: {
        auto s = gemm_shape(g, op);
        if (!s) return bad_input("op " + op.name + ": not a product");
        int e = 0;
        const double m = std::frexp(std::fabs(s->alpha), &e);
        if (m != 0.5) return bad_input("op " + op.name + ": alpha " + num(s->alpha) + " is not a power of two");
        // beta R is exact as alpha A B is: beta 0, or a power of two.
        if (s->has_residual && s->beta != 0 && std::frexp(std::fabs(s->beta), &e) != 0.5)
          return bad_input("op " + op.name + ": beta " + num(s->beta) + " is not a power of two");
        const Range a = rs[size_t(op.inputs[0])], b = rs[size_t(op.inputs[1])];
        for (int x = 0; x < 2; ++x) {
          const TensorId t = op.inputs[size_t(x)];
          if (g.tensor(t).dtype == DType::f32 && !fits(rs[size_t(t)], 11, DType::f32))
            return bad_input("op " + op.name + ": operand " + name(t) + " reaches " + num(rs[size_t(t)].max) +
                             ", beyond TF32's 11-bit significand");
        }
        Range sum{double(s->k) * a.max * b.max, a.quantum + b.quantum};
        if (!fits(sum, 24, DType::f32))
          return bad_input("op " + op.name + ": K = " + std::to_string(s->k) + " products of up to " +
                           num(a.max * b.max) + " reach " + num(sum.max) +
                           ", beyond the f32 accumulator's 2^24");
        out = {sum.max * std::ldexp(1.0, e - 1), sum.quantum + e - 1};
        if (op.type == OpType::GEMM_BIAS_ACT && op.inputs.size() > 2) {
          const Range bias = rs[size_t(op.inputs[2])];
          out = {out.max + bias.max, std::min(out.quantum, bias.quantum)};
        }
        if (op.type == OpType::GEMM_BIAS_ACT && op.attrs.act != Act::none && op.attrs.act != Act::relu)
          return bad_input("op " + op.name + ": " + (op.attrs.act == Act::silu ? "SiLU" : "GELU") +
                           "'s results are not exact");
        break;
      }
      case OpType::BIAS_ADD:
      case OpType::ADD:
      case OpType::SUB: {
        if (op.attrs.constant) return bad_input("op " + op.name + ": a constant operand is not supported in exact mode");
        const Range a = rs[size_t(op.inputs[0])], b = rs[size_t(op.inputs[1])];
        out = {a.max + b.max, std::min(a.quantum, b.quantum)};
        break;
      }
      case OpType::RELU:
      case OpType::CAST: out = rs[size_t(op.inputs[0])]; break;
      case OpType::GELU: return bad_input("op " + op.name + ": GELU's results are not exact");
      default: return bad_input("op " + op.name + ": not supported in exact mode");
    }
    if (!fits(out, significand_bits(yt), yt))
      return bad_input("op " + op.name + ": " + name(y) + " (" + std::string(dtype_name(yt)) + ") reaches " +
                       num(out.max) + ", beyond its " + std::to_string(significand_bits(yt)) +
                       "-bit significand (K too large for the dtype)");
    rs[size_t(y)] = out;
  }
  return {};
}

}  // namespace

Result<int64_t> exact_range(const Graph& g) {
  Status first = check_graph(g, 1);
  if (!first) return first.error().with("--verify exact is impossible even with inputs in -1..1");
  int64_t r = 1;
  while (r < kExactMaxRange && check_graph(g, r + 1)) ++r;
  return r;
}

std::map<std::string, std::vector<uint8_t>> exact_inputs(const Graph& g, int64_t range, uint64_t seed) {
  std::map<std::string, std::vector<uint8_t>> out;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    const Tensor& tensor = g.tensors[t];
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull ^ std::hash<std::string>{}(tensor.name));
    std::uniform_int_distribution<int64_t> pick(-range, range);
    std::vector<uint8_t> bytes(static_cast<size_t>(tensor.bytes()));
    for (int64_t i = 0; i < tensor.numel(); ++i) store_from_float(bytes.data(), tensor.dtype, i, float(pick(rng)));
    out[tensor.name] = std::move(bytes);
  }
  return out;
}

}  // namespace gexec
