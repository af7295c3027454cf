// fuse_residual: MATMUL [-> BIAS_ADD] -> ADD(residual) [-> RELU | GELU(tanh)] becomes one
// GEMM_BIAS_ACT with "residual": true, C = act(alpha * op(A) op(B) + R + Bias).
//
// It runs after fuse_elementwise, so the product it starts from is a MATMUL or a GEMM_BIAS_ACT
// that fuse_elementwise made from MATMUL -> BIAS_ADD (act none, no residual). A product whose
// activation comes before the ADD (act relu or gelu) is never extended: relu(AB) + R is not
// relu(AB + R). The ADD may take the product as either operand. Every link (the product, and
// the ADD's result where an activation follows) must have the next op as its only reader and
// not be a graph output, else its value is still needed on its own.
//
// cuBLASLt reads R as its C, which must have D's dtype and layout. R of D's dtype fuses as is;
// an f16 or bf16 R with an f32 result is converted by a CAST (exact) that the fused op reads;
// any other mix (an R wider than D, whose narrowing would round it) is not fused, nor is an FP8
// product (its cuBLASLt kernel runs with beta 0). Each decision
// is a pass note. Where measurements say the fused product is slower than the product and a
// separate ADD (residual_cost.hpp), the pass does not fuse either, and says so.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fresh_names.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "passes.hpp"
#include "residual_cost.hpp"

namespace gexec {
namespace {

struct Match {
  size_t add = 0, last = 0;  // the ADD, and the chain's last op (the ADD or the activation)
  std::optional<size_t> act_op;
  TensorId residual = kNone, result = kNone;
  Act act = Act::none;
};

// The op that is t's only reader, where t is no graph output.
std::optional<size_t> only_reader(const GraphIndex& idx, TensorId t) {
  const auto& c = idx.consumers[size_t(t)];
  if (idx.is_output[size_t(t)] || c.size() != 1) return std::nullopt;
  return size_t(c[0]);
}

bool extendable(const Op& op) {
  if (op.type == OpType::MATMUL) return op.outputs.size() == 1;
  return op.type == OpType::GEMM_BIAS_ACT && op.attrs.act == Act::none && !op.attrs.residual && op.outputs.size() == 1;
}

std::optional<Match> match(const Graph& g, const GraphIndex& idx, size_t p) {
  const TensorId prod = g.ops[p].outputs[0];
  auto add = only_reader(idx, prod);
  if (!add || g.ops[*add].type != OpType::ADD || g.ops[*add].inputs.size() != 2) return std::nullopt;
  const Op& a = g.ops[*add];
  Match m;
  m.add = m.last = *add;
  m.residual = a.inputs[0] == prod ? a.inputs[1] : a.inputs[0];
  if (m.residual == prod) return std::nullopt;  // ADD(P, P) is 2P, no residual
  m.result = a.outputs[0];
  if (auto next = only_reader(idx, m.result)) {
    const Op& n = g.ops[*next];
    if (n.inputs.size() == 1 &&
        (n.type == OpType::RELU || (n.type == OpType::GELU && n.attrs.approximate == GeluApprox::tanh))) {
      m.act = n.type == OpType::RELU ? Act::relu : Act::gelu;
      m.act_op = m.last = *next;
      m.result = n.outputs[0];
    }
  }
  return m;
}

}  // namespace

Status fuse_residual(Graph& g) {
  const GraphIndex idx(g);
  FreshNames names(g);

  // replace_at[i]: the ops that take op i's place (a chain's last op); removed[i]: folded away.
  std::vector<std::vector<Op>> replace_at(g.ops.size());
  std::vector<bool> removed(g.ops.size(), false);
  bool changed = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& prod = g.ops[i];
    if (!extendable(prod) || removed[i]) continue;
    auto shape = gemm_shape(g, prod);
    if (!shape) continue;
    auto m = match(g, idx, i);
    // ADD(P1, P2) of two products matches both; the first one takes it.
    if (!m || removed[m->add] || (m->act_op && removed[*m->act_op])) continue;
    // A copy: adding the converted R below may move the tensors.
    const Tensor r = g.tensor(m->residual);
    const struct {
      DType dtype;
      Layout layout;
    } d{g.tensor(m->result).dtype, g.tensor(m->result).layout};
    const std::string where = "op " + g.ops[m->add].name + " (residual \"" + r.name + "\")";
    if (is_f8_product(g, prod)) {
      pass_note(where + ": not fused: an FP8 product's cuBLASLt kernel takes no C (beta 0), so it cannot add R");
      continue;
    }
    if (r.layout != d.layout) {
      pass_note(where + ": not fused: R is " + std::string(layout_name(r.layout)) + " and the result " +
                std::string(layout_name(d.layout)) + "; cuBLASLt's C must be stored like D");
      continue;
    }
    const bool widen = r.dtype != d.dtype && d.dtype == DType::f32;
    if (r.dtype != d.dtype && !widen) {
      pass_note(where + ": not fused: R is " + std::string(dtype_name(r.dtype)) + " and the result " +
                std::string(dtype_name(d.dtype)) + "; cuBLASLt's C must have D's dtype, and narrowing R would " +
                "round it");
      continue;
    }
    std::string cost_why;
    if (!residual_fusion_pays(shape->m, shape->n, shape->k, d.dtype, &cost_why)) {
      pass_note(where + ": not fused: " + cost_why);
      continue;
    }
    Op f = prod;
    if (f.type == OpType::MATMUL) {
      f.type = OpType::GEMM_BIAS_ACT;
      f.attrs = Attrs{};
      f.attrs.trans_a = prod.attrs.trans_a;
      f.attrs.trans_b = prod.attrs.trans_b;
      f.attrs.alpha = prod.attrs.alpha;
      const std::string renamed = "GEMM_BIAS_ACT_" + prod.name.substr(prod.name.rfind('_') + 1);
      const bool default_name = prod.name.rfind("MATMUL_", 0) == 0 && prod.name.size() > 7 &&
                                prod.name.find_first_not_of("0123456789", 7) == std::string::npos;
      if (default_name && names.claim_op(renamed)) f.name = renamed;
    }
    f.attrs.residual = true;
    f.attrs.beta = 1.0;
    f.attrs.act = m->act;
    f.attrs.mnk = std::array<int64_t, 3>{shape->m, shape->n, shape->k};
    f.outputs = {m->result};
    std::vector<Op>& at = replace_at[m->last];
    TensorId res = m->residual;
    if (widen) {
      const TensorId cid = add_tensor_like(g, names, r, DType::f32);
      at.push_back(make_cast(g, names, r.name, res, {cid}));
      res = cid;
      pass_note(where + ": fused, converting R from " + std::string(dtype_name(r.dtype)) +
                " to f32 first (exact), since cuBLASLt's C must have D's dtype");
    } else {
      pass_note(where + ": fused into " + f.name + " as cuBLASLt's C (" + cost_why + ")");
    }
    f.inputs.push_back(res);
    at.push_back(std::move(f));
    removed[i] = removed[m->add] = true;
    if (m->act_op) removed[*m->act_op] = true;
    changed = true;
  }
  if (!changed) return Status::success();
  std::vector<Op> ops;
  ops.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (Op& op : replace_at[i]) ops.push_back(std::move(op));
    if (!removed[i]) ops.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(ops);
  drop_unused_tensors(g);
  return Status::success();
}

}  // namespace gexec
