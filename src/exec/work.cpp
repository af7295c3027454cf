// Counting the FLOPs and the minimum bytes of one run (see work.hpp for what counts).
#include "gexec/exec/work.hpp"

#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/grouped_shape.hpp"

namespace gexec {

Work count_work(const Graph& g) {
  Work w;
  const size_t n = g.tensors.size();
  std::vector<bool> read(n, false), written(n, false);
  for (const Op& op : g.ops) {
    if (op.hoisted) continue;
    for (TensorId t : op.inputs) read[size_t(t)] = true;
    for (TensorId t : op.outputs) written[size_t(t)] = true;
    const double out_elems = op.outputs.empty() ? 0.0 : double(g.tensor(op.outputs[0]).numel());
    switch (op.type) {
      case OpType::MATMUL:
      case OpType::GEMM_BIAS_ACT: {
        // A graph that passed verify() always has a shape; one that did not counts nothing.
        const auto shape = gemm_shape(g, op);
        if (!shape) break;
        w.flops += gemm_flops(*shape);
        if (op.type == OpType::GEMM_BIAS_ACT) {
          if (shape->has_bias) w.flops += out_elems;
          if (op.attrs.act != Act::none) w.flops += out_elems;
          if (shape->has_residual) w.flops += out_elems;
        }
        break;
      }
      case OpType::FUSED_ELEMENTWISE:
        for (const GroupStep& st : op.attrs.steps)
          if (st.type != OpType::CAST) w.flops += out_elems;
        break;
      case OpType::CAST: break;
      case OpType::ALL_GATHER: break;  // moves bytes, computes nothing
      case OpType::ALL_REDUCE:
      case OpType::REDUCE_SCATTER:  // N - 1 additions per element of the sum (here: one rank's share)
        w.flops += double(g.tensor(op.inputs[0]).numel()) * double(op.attrs.ranks - 1) / double(op.attrs.ranks);
        break;
      case OpType::GROUPED_GEMM:
        // Every row routed (the offsets are data): 2 T K N, as torch counts a grouped product.
        if (const auto s = grouped_shape(g, op)) w.flops += 2.0 * double(s->tokens) * double(s->k) * double(s->n);
        break;
      default: w.flops += out_elems; break;  // the other elementwise ops (kGroupStepTypes): one flop each
    }
  }
  for (size_t t = 0; t < n; ++t)
    if (read[t] && !written[t]) w.bytes += double(g.tensors[t].bytes());
  for (TensorId t : g.outputs) {
    if (!written[size_t(t)]) continue;
    w.bytes += double(g.tensor(t).bytes());
    written[size_t(t)] = false;  // an output listed twice is still written once
  }
  return w;
}

}  // namespace gexec
