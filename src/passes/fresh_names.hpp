// What a pass adds to a graph under names not yet in it: tensors of another dtype beside an
// existing one, and the CASTs between them (fuse_residual, split_f8_outputs), and op names
// (group_elementwise). A taken name gets ".1", ".2", ... appended.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "gexec/ir/graph.hpp"

namespace gexec {

class FreshNames {
 public:
  explicit FreshNames(const Graph& g);
  // A name from `base` that no tensor (op) has, reserved from now on.
  std::string tensor(const std::string& base) { return take(tensors_, base); }
  std::string op(const std::string& base) { return take(ops_, base); }
  // Reserves `name` for an op where it is free (true), or leaves it (false).
  bool claim_op(const std::string& name) { return ops_.insert(name).second; }

 private:
  static std::string take(std::unordered_set<std::string>& names, const std::string& base);
  std::unordered_set<std::string> tensors_, ops_;
};

// A tensor shaped and laid out as `like`, in dtype dt, named "<like>.<dt>", added to g.
TensorId add_tensor_like(Graph& g, FreshNames& names, const Tensor& like, DType dt);

// A CAST from `in` to `out` (its output and, for an f8 result, its amax), named
// "CAST_<about>_<dtype of out[0]>".
Op make_cast(const Graph& g, FreshNames& names, const std::string& about, TensorId in, std::vector<TensorId> out);

}  // namespace gexec
