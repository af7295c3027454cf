// Builds small graphs in code for tests: a tensor or an op per line.
#pragma once

#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"

namespace gexec::test {

inline TensorId add(Graph& g, const std::string& name, std::vector<int64_t> shape, DType dt = DType::f32,
                    Layout layout = Layout::rowmajor) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dt;
  t.layout = layout;
  return g.add_tensor(t);
}

inline Op& add_op(Graph& g, std::string name, OpType type, std::vector<TensorId> in, TensorId out) {
  Op o;
  o.name = std::move(name);
  o.type = type;
  o.inputs = std::move(in);
  o.outputs = {out};
  g.ops.push_back(std::move(o));
  return g.ops.back();
}

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
