// The f8 CASTs whose codes a device reproduces bit for bit, which the check then takes as exact.
#pragma once

#include <vector>

#include "gexec/ir/dtype.hpp"
#include "gexec/ir/graph.hpp"

namespace gexec::ref {

// Per op of g: whether it is a CAST from or to f8 whose input holds the same bits on a device as
// in the reference: a graph input, or the output of another such CAST. Its scale is then known
// exactly too (numbers, a given S, or the S it computes from that input), and a device computes
// the reference's codes: the f8 CAST kernels divide by the scale exactly and round once, as the
// reference does (bit-exact device tests), and no pass fuses a CAST from or to f8 into a group,
// where a rounding could be skipped. Such a CAST's output carries no rounding variance into its
// readers: the check of a product of operands quantized in the graph is that of the product
// alone, not one loose enough for any code of each operand to be one step off.
inline std::vector<char> exact_f8_casts(const Graph& g) {
  std::vector<char> exact(g.ops.size(), 0), exact_tensor(g.tensors.size(), 1);
  for (const Op& op : g.ops)
    for (TensorId t : op.outputs) exact_tensor[size_t(t)] = 0;  // written: exact only as said below
  for (size_t i = 0; i < g.ops.size(); ++i) {  // ops in order: a CAST's input is settled before it
    const Op& op = g.ops[i];
    if (op.type != OpType::CAST || op.inputs.empty() || op.outputs.empty()) continue;
    const bool f8 = is_f8(g.tensor(op.inputs[0]).dtype) || is_f8(g.tensor(op.outputs[0]).dtype);
    exact[i] = f8 && exact_tensor[size_t(op.inputs[0])];
    if (exact[i]) exact_tensor[size_t(op.outputs[0])] = 1;
  }
  return exact;
}

}  // namespace gexec::ref
