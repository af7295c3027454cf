// fold_constant_casts: a CAST of a constant runs once, before the runs, instead of in every run.
//
// The pass marks such a CAST `hoisted` and its output `constant`; the executor runs hoisted ops
// once ahead of the runs. Casts of casts of constants follow, since the first one's output is
// then a constant made by a hoisted op. A kernel's own conversions of constants (an f32 bias
// for an f16 GEMM output, say) belong to that kernel's preparation, not to this pass.
#include <vector>

#include "gexec/ir/block_scale.hpp"
#include "passes.hpp"

namespace gexec {

Status fold_constant_casts(Graph& g, const PassContext&) {
  // Which op writes each tensor: a tensor marked constant counts only when it is a graph input
  // or the output of an op already hoisted, so that a constant never depends on a per-run value.
  std::vector<OpId> producer(g.tensors.size(), kNone);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (TensorId t : g.ops[i].outputs) producer[static_cast<size_t>(t)] = static_cast<OpId>(i);
  }
  auto fixed = [&](TensorId t) {
    if (!g.tensor(t).constant) return false;
    OpId p = producer[static_cast<size_t>(t)];
    return p == kNone || g.ops[static_cast<size_t>(p)].hoisted;
  };
  // Ops are in data-flow order, so a producer is decided before its readers.
  for (Op& op : g.ops) {
    if (op.type != OpType::CAST || op.hoisted || op.inputs.empty()) continue;
    bool all_fixed = true;
    for (TensorId t : op_reads(g, op)) all_fixed = all_fixed && fixed(t);  // a given block scale's S too
    if (!all_fixed) continue;
    op.hoisted = true;
    for (TensorId t : op.outputs) g.tensor(t).constant = true;
  }
  return Status::success();
}

}  // namespace gexec
