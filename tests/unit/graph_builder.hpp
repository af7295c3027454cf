// Builds small graphs in code for tests: a tensor or an op per line.
#pragma once

#include <string>
#include <vector>

#include "gexec/ir/graph_build.hpp"

namespace gexec::test {

inline TensorId add(Graph& g, const std::string& name, std::vector<int64_t> shape, DType dt = DType::f32,
                    Layout layout = Layout::rowmajor) {
  return add_tensor(g, name, std::move(shape), dt, false, layout);
}

using gexec::add_op;

// Named "<OP_TYPE>_<index>", as the loader names ops without a name.
inline Op& add_op(Graph& g, OpType type, std::vector<TensorId> in, TensorId out) {
  return add_op(g, std::string(op_type_name(type)) + "_" + std::to_string(g.ops.size()), type, std::move(in), out);
}

struct Builder {
  Graph g;
  TensorId tensor(const std::string& name, std::vector<int64_t> shape, DType dt = DType::f32,
                  Layout layout = Layout::rowmajor) {
    return add(g, name, std::move(shape), dt, layout);
  }
  Op& op(OpType type, std::vector<TensorId> in, TensorId out) { return add_op(g, type, std::move(in), out); }
};

}  // namespace gexec::test
