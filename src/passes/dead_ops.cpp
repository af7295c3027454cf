// dead_ops: removes the ops whose results reach no graph output, then the tensors nothing uses.
#include <vector>

#include "gexec/ir/block_scale.hpp"
#include "passes.hpp"

namespace gexec {

Status dead_ops(Graph& g, const PassContext&) {
  // One walk backwards over ops in data-flow order: an op is live when one of its outputs is
  // needed, and then everything it reads is needed too. Readers come after writers, so every
  // reader of a tensor has been decided before its writer is reached.
  std::vector<bool> needed(g.tensors.size(), false);
  for (TensorId t : g.outputs) needed[static_cast<size_t>(t)] = true;
  std::vector<bool> live(g.ops.size(), false);
  bool any_dead = false;
  for (size_t i = g.ops.size(); i-- > 0;) {
    const Op& op = g.ops[i];
    for (TensorId t : op.outputs) {
      if (needed[static_cast<size_t>(t)]) live[i] = true;
    }
    if (!live[i]) {
      any_dead = true;
      continue;
    }
    for (TensorId t : op_reads(g, op)) needed[static_cast<size_t>(t)] = true;
  }
  if (!any_dead) return Status::success();

  std::vector<Op> kept;
  kept.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (live[i]) kept.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(kept);
  drop_unused_tensors(g);
  return Status::success();
}

}  // namespace gexec
