// canonicalize: names unnamed ops, fills GEMM_BIAS_ACT's mnk from the shapes, orders ops by data flow.
//
// What it deliberately does not do: rewrite an ADD into a BIAS_ADD. ADD requires both operands
// to have the same shape (graph-format.md), so an ADD of a length-N vector onto an [M,N] tensor
// is not a valid graph, and an ADD of two [M,N] tensors is not a bias: there is nothing to
// rewrite. Nor does it reorder an ADD's operands: IEEE addition is commutative, so the order
// changes no result, and no later pass or kernel looks at it. Attribute defaults such as
// act = none and alpha = 1 are already held by Attrs, so the only attribute filled here is the
// one derived from the shapes.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "passes.hpp"

namespace gexec {

namespace {

// Gives every unnamed op the loader's default name, <op_type>_<index>, made unique if a
// written name already took it.
void name_ops(Graph& g) {
  if (std::none_of(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.name.empty(); })) return;
  std::unordered_set<std::string> taken;
  taken.reserve(g.ops.size() * 2);
  for (const Op& op : g.ops) {
    if (!op.name.empty()) taken.insert(op.name);
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (!op.name.empty()) continue;
    std::string base = std::string(op_type_name(op.type)) + "_" + std::to_string(i);
    std::string name = base;
    for (int suffix = 1; taken.count(name) != 0; ++suffix) name = base + "_" + std::to_string(suffix);
    taken.insert(name);
    op.name = std::move(name);
  }
}

// Whether every op already comes after the writers of its inputs. Loaded graphs always do, and
// this check costs much less than sorting them again, which would give the same order.
bool in_data_flow_order(const Graph& g) {
  std::vector<char> written_by_op(g.tensors.size(), 0), written_yet(g.tensors.size(), 0);
  auto in_range = [&](TensorId t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); };
  for (const Op& op : g.ops) {
    for (TensorId t : op.outputs) {
      if (in_range(t)) written_by_op[static_cast<size_t>(t)] = 1;
    }
  }
  for (const Op& op : g.ops) {
    for (TensorId t : op.inputs) {
      if (in_range(t) && written_by_op[static_cast<size_t>(t)] && !written_yet[static_cast<size_t>(t)]) return false;
    }
    for (TensorId t : op.outputs) {
      if (in_range(t)) written_yet[static_cast<size_t>(t)] = 1;
    }
  }
  return true;
}

void fill_mnk(Graph& g) {
  for (Op& op : g.ops) {
    if (op.type != OpType::GEMM_BIAS_ACT || op.attrs.mnk) continue;
    // Shapes that disagree are left for verify() to report with its own message.
    if (auto s = gemm_shape(g, op)) op.attrs.mnk = std::array<int64_t, 3>{s->m, s->n, s->k};
  }
}

}  // namespace

Status canonicalize(Graph& g, const PassContext&) {
  name_ops(g);
  if (!in_data_flow_order(g)) {
    if (auto cycle = topo_sort(g)) {
      std::string path;
      for (OpId id : *cycle) path += g.ops[static_cast<size_t>(id)].name + " -> ";
      if (!cycle->empty()) path += g.ops[static_cast<size_t>(cycle->front())].name;
      return bad_input("cycle through " + path);
    }
  }
  fill_mnk(g);
  return Status::success();
}

}  // namespace gexec
