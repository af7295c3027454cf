// fuse_elementwise: MATMUL [-> BIAS_ADD] [-> RELU | GELU | SILU] becomes one GEMM_BIAS_ACT, a
// GROUPED_GEMM with act = none -> RELU | GELU | SILU takes the activation, and GEMM_BIAS_ACT
// with act = none -> RELU | GELU | SILU takes the activation (a SILU or an erf GELU only where
// stands_alone says; an ONNX Gemm maps to a GEMM_BIAS_ACT with its bias: the activation after
// it belongs in its epilogue too; with a residual, act(alpha AB + beta R + Bias) is what the two
// ops compute, less one rounding). GELU's tanh form becomes act = gelu, its erf form (approximate
// = none) act = gelu_erf.
//
// A chain fuses only where each intermediate tensor has exactly one reader and is not a graph
// output (otherwise its value is still needed on its own). The bias must be rank 1 of length N,
// the bias cuBLASLt's epilogue reads.
//
// The fused op takes the MATMUL's attributes (trans_a, trans_b, alpha) and its name, except
// that a default name MATMUL_<n> becomes GEMM_BIAS_ACT_<n> (unless another op has that name),
// so that the name does not contradict the type. It writes the chain's last tensor (so its
// name, dtype and layout are kept) and sits where the chain's last op was: the bias may be
// computed after the MATMUL, and every reader of the result comes after that op.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "passes.hpp"

namespace gexec {

namespace {

struct Chain {
  size_t last = 0;  // index of the chain's last op, where the fused op goes
  std::vector<size_t> absorbed;  // indexes of the ops folded into the MATMUL
  TensorId bias = kNone;
  Act act = Act::none;
  TensorId result = kNone;
};

// Per tensor: how many ops read it, the last of them, and whether it is a graph output. Lighter
// than GraphIndex (no list of readers per tensor), which matters on graphs of 100k ops.
struct Readers {
  std::vector<int32_t> count;
  std::vector<OpId> last;
  std::vector<bool> is_output;

  explicit Readers(const Graph& g)
      : count(g.tensors.size(), 0), last(g.tensors.size(), kNone), is_output(g.tensors.size(), false) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      for (TensorId t : g.ops[i].inputs) {
        auto ut = static_cast<size_t>(t);
        if (last[ut] == static_cast<OpId>(i)) continue;  // an op reading t twice reads it once
        ++count[ut];
        last[ut] = static_cast<OpId>(i);
      }
    }
    for (TensorId t : g.outputs) is_output[static_cast<size_t>(t)] = true;
  }
};

// The single op reading tensor t as its first input, where t may disappear into a fusion.
std::optional<size_t> sole_reader(const Readers& readers, const Graph& g, TensorId t) {
  auto ut = static_cast<size_t>(t);
  if (readers.is_output[ut] || readers.count[ut] != 1) return std::nullopt;
  auto reader = static_cast<size_t>(readers.last[ut]);
  const Op& op = g.ops[reader];
  // A reader that also reads t as another operand (BIAS_ADD(t, t)) is not a chain link.
  if (op.inputs.empty() || op.inputs[0] != t) return std::nullopt;
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == t) return std::nullopt;
  }
  return reader;
}

constexpr std::string_view kMatmulPrefix = "MATMUL_", kFusedPrefix = "GEMM_BIAS_ACT_";

bool is_default_matmul_name(const std::string& name) {
  if (name.size() <= kMatmulPrefix.size() || name.compare(0, kMatmulPrefix.size(), kMatmulPrefix) != 0) return false;
  return std::all_of(name.begin() + kMatmulPrefix.size(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The fused op's name; `taken` holds the names of the form GEMM_BIAS_ACT_* already in use.
std::string fused_name(const std::string& matmul_name, std::unordered_set<std::string>& taken) {
  if (!is_default_matmul_name(matmul_name)) return matmul_name;
  std::string name(kFusedPrefix);
  name.append(matmul_name, kMatmulPrefix.size());
  if (!taken.insert(name).second) return matmul_name;
  return name;
}

// A SILU or an erf GELU after a product becomes its epilogue only where nothing groups with it
// afterwards: cuBLASLt has no epilogue for either, so there it is a second pass over C, which
// costs what the op alone costs but more than a group that reads C anyway (SwiGLU's SILU and
// MUL); gexec's own product kernels apply them in theirs. Not after an f8 product, whose kernel
// has neither.
bool stands_alone(const Graph& g, const Readers& readers, const Op& product, const Op& act) {
  for (TensorId t : {product.inputs[0], product.inputs[1], act.outputs[0]})
    if (is_f8(g.tensor(t).dtype)) return false;
  const auto t = static_cast<size_t>(act.outputs[0]);
  if (readers.count[t] == 0) return true;
  return readers.count[t] == 1 && !is_group_step_type(g.ops[static_cast<size_t>(readers.last[t])].type);
}

std::optional<Act> act_of(const Graph& g, const Readers& readers, const Op& product, const Op& op) {
  if (op.type == OpType::RELU) return Act::relu;
  if (op.type == OpType::GELU && op.attrs.approximate == GeluApprox::tanh) return Act::gelu;
  if (op.type == OpType::GELU && stands_alone(g, readers, product, op)) return Act::gelu_erf;
  if (op.type == OpType::SILU && stands_alone(g, readers, product, op)) return Act::silu;
  return std::nullopt;
}

bool is_bias_for(const Graph& g, const Op& bias_add, int64_t n) {
  if (bias_add.inputs.size() != 2) return false;
  const Tensor& b = g.tensor(bias_add.inputs[1]);
  return b.rank() == 1 && b.shape[0] == n;
}

std::optional<Chain> match_chain(const Graph& g, const Readers& readers, size_t mm, int64_t n) {
  const Op& matmul = g.ops[mm];
  if (matmul.outputs.size() != 1) return std::nullopt;
  Chain c;
  c.last = mm;
  c.result = matmul.outputs[0];
  auto next = sole_reader(readers, g, c.result);
  if (next && g.ops[*next].type == OpType::BIAS_ADD && is_bias_for(g, g.ops[*next], n)) {
    c.bias = g.ops[*next].inputs[1];
    c.last = *next;
    c.absorbed.push_back(*next);
    c.result = g.ops[*next].outputs[0];
    next = sole_reader(readers, g, c.result);
  }
  if (next) {
    if (auto act = act_of(g, readers, matmul, g.ops[*next])) {
      c.act = *act;
      c.last = *next;
      c.absorbed.push_back(*next);
      c.result = g.ops[*next].outputs[0];
    }
  }
  if (c.absorbed.empty()) return std::nullopt;
  return c;
}

}  // namespace

Status fuse_elementwise(Graph& g, const PassContext&) {
  const Readers readers(g);
  std::unordered_set<std::string> taken;
  for (const Op& op : g.ops) {
    if (op.name.compare(0, kFusedPrefix.size(), kFusedPrefix) == 0) taken.insert(op.name);
  }
  // fused_at[i]: index in `fused` of the op that replaces op i (a chain's last op), or -1;
  // removed[i]: op i is folded into a fused op.
  std::vector<Op> fused;
  std::vector<int32_t> fused_at(g.ops.size(), -1);
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const bool grouped = op.type == OpType::GROUPED_GEMM;
    if ((op.type == OpType::GEMM_BIAS_ACT || grouped) && op.attrs.act == Act::none && op.outputs.size() == 1) {
      const auto next = sole_reader(readers, g, op.outputs[0]);
      auto act = next ? act_of(g, readers, op, g.ops[*next]) : std::nullopt;
      // The grouped kernel applies SiLU in its epilogue: a SwiGLU gate product's always.
      if (grouped && next && g.ops[*next].type == OpType::SILU) act = Act::silu;
      if (!act) continue;
      // A grouped product writes a row-major Y: an activation into a colmajor tensor stays apart.
      if (grouped && g.tensor(g.ops[*next].outputs[0]).layout != Layout::rowmajor) continue;
      Op f = op;
      f.attrs.act = *act;
      f.outputs = {g.ops[*next].outputs[0]};
      removed[i] = removed[*next] = true;
      fused_at[*next] = static_cast<int32_t>(fused.size());
      fused.push_back(std::move(f));
      continue;
    }
    if (op.type != OpType::MATMUL) continue;
    auto shape = gemm_shape(g, op);
    if (!shape) continue;  // verify() reports shapes that disagree
    auto chain = match_chain(g, readers, i, shape->n);
    if (!chain) continue;
    Op f;
    f.name = fused_name(op.name, taken);
    f.type = OpType::GEMM_BIAS_ACT;
    f.inputs = {op.inputs[0], op.inputs[1]};
    if (chain->bias != kNone) f.inputs.push_back(chain->bias);
    f.outputs = {chain->result};
    f.attrs.trans_a = op.attrs.trans_a;
    f.attrs.trans_b = op.attrs.trans_b;
    f.attrs.alpha = op.attrs.alpha;
    f.attrs.fast_accum = op.attrs.fast_accum;
    f.attrs.act = chain->act;
    f.attrs.mnk = std::array<int64_t, 3>{shape->m, shape->n, shape->k};
    removed[i] = true;
    for (size_t a : chain->absorbed) removed[a] = true;
    fused_at[chain->last] = static_cast<int32_t>(fused.size());
    fused.push_back(std::move(f));
  }
  if (fused.empty()) return Status::success();

  std::vector<Op> ops;
  ops.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (fused_at[i] >= 0) ops.push_back(std::move(fused[static_cast<size_t>(fused_at[i])]));
    else if (!removed[i]) ops.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(ops);
  drop_unused_tensors(g);  // the chains' intermediates
  return Status::success();
}

}  // namespace gexec
