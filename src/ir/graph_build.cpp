// Building a graph in code (graph_build.hpp).
#include "gexec/ir/graph_build.hpp"

#include <utility>

namespace gexec {

TensorId add_tensor(Graph& g, std::string name, std::vector<int64_t> shape, DType dtype, bool constant,
                    Layout layout) {
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.layout = layout;
  t.constant = constant;
  return g.add_tensor(std::move(t));
}

Op& add_op(Graph& g, std::string name, OpType type, std::vector<TensorId> inputs, TensorId output) {
  Op o;
  o.name = std::move(name);
  o.type = type;
  o.inputs = std::move(inputs);
  o.outputs = {output};
  g.ops.push_back(std::move(o));
  return g.ops.back();
}

}  // namespace gexec
