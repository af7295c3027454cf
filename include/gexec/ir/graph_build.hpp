// Building a graph in code, a tensor or an op per call: the GEMM sweep's one-op graphs, the pass
// benchmark's generated chains and the tests' small graphs.
#pragma once

#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"

namespace gexec {

// Adds a tensor with no init (graph inputs draw Init{}) and no f8 scale; returns its id.
TensorId add_tensor(Graph& g, std::string name, std::vector<int64_t> shape, DType dtype, bool constant = false,
                    Layout layout = Layout::rowmajor);

// Appends an op with one output and default attributes; returns it for the attributes to be set.
Op& add_op(Graph& g, std::string name, OpType type, std::vector<TensorId> inputs, TensorId output);

}  // namespace gexec
