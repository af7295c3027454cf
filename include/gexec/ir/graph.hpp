// The graph: tensors, ops ordered by data flow, outputs; indexes of producers and consumers; verify().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gexec/ir/op.hpp"
#include "gexec/ir/tensor.hpp"

namespace gexec {

struct Graph {
  std::string name;
  std::optional<uint64_t> seed;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;  // in an order where every op comes after the producers of its inputs
  std::vector<TensorId> outputs;

  TensorId find_tensor(std::string_view name) const;  // kNone when absent; a linear search
  const Tensor& tensor(TensorId id) const { return tensors[static_cast<size_t>(id)]; }
  Tensor& tensor(TensorId id) { return tensors[static_cast<size_t>(id)]; }
  TensorId add_tensor(Tensor t);
  bool operator==(const Graph&) const = default;
};

// Who writes and who reads each tensor, computed from a graph (invalidated by any edit).
struct GraphIndex {
  std::vector<OpId> producer;                // per tensor: the op that writes it, or kNone
  std::vector<std::vector<OpId>> consumers;  // per tensor: the ops that read it, in op order
  std::vector<bool> is_output;               // per tensor
  explicit GraphIndex(const Graph& g);
  bool is_input(TensorId t) const { return producer[static_cast<size_t>(t)] == kNone; }
};

// Orders ops by data flow, keeping the given order where it already is one (stable).
// On a cycle returns the op ids on one cycle, in order, and leaves the graph unchanged.
std::optional<std::vector<OpId>> topo_sort(Graph& g);

// The shape rules of one op (graph-format.md): each problem as a message without a path,
// e.g. "MATMUL shapes disagree: A is [64,80] so K=80, B is [81,96] so K=81".
std::vector<std::string> check_op(const Graph& g, const Op& op);

// Every invariant of a well-formed graph: ids in range, one writer per tensor, ops in data
// flow order, op rules, outputs written, no init on written tensors. Empty when valid.
std::vector<std::string> verify(const Graph& g);

// Whether a tensor's values are fixed before the runs start, so that a kernel may convert them
// once while preparing. Only constant graph inputs and results of hoisted ops are constant: the
// loader refuses `constant` on a tensor an op writes, and verify() refuses a constant tensor
// written by an op that runs every time.
inline bool fixed_before_runs(const Graph& g, TensorId t) { return g.tensor(t).constant; }

// Removes tensors that no op reads or writes and that are not outputs, renumbering ids.
void drop_unused_tensors(Graph& g);

// "[64,80]"
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace gexec
