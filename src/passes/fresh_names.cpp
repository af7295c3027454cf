// Tensors, CASTs and names a pass adds to a graph (fresh_names.hpp).
#include "fresh_names.hpp"

#include <utility>

namespace gexec {

FreshNames::FreshNames(const Graph& g) {
  for (const Tensor& t : g.tensors) tensors_.insert(t.name);
  for (const Op& op : g.ops) ops_.insert(op.name);
}

std::string FreshNames::take(std::unordered_set<std::string>& names, const std::string& base) {
  std::string name = base;
  for (int i = 1; names.count(name); ++i) name = base + "." + std::to_string(i);
  names.insert(name);
  return name;
}

TensorId add_tensor_like(Graph& g, FreshNames& names, const Tensor& like, DType dt) {
  Tensor t;
  t.name = names.tensor(like.name + "." + std::string(dtype_name(dt)));
  t.shape = like.shape;
  t.layout = like.layout;
  t.dtype = dt;
  return g.add_tensor(std::move(t));
}

Op make_cast(const Graph& g, FreshNames& names, const std::string& about, TensorId in, std::vector<TensorId> out) {
  Op cast;
  cast.type = OpType::CAST;
  cast.name = names.op("CAST_" + about + "_" + std::string(dtype_name(g.tensor(out[0]).dtype)));
  cast.inputs = {in};
  cast.outputs = std::move(out);
  return cast;
}

}  // namespace gexec
