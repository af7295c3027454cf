// Builds small graphs in code for tests: a tensor or an op per line.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/graph_build.hpp"
#include "gexec/rng/init.hpp"

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

// The stored bytes of every graph input of g, drawn from `seed` as the devices draw them.
inline std::map<std::string, std::vector<uint8_t>> inputs_of(const Graph& g, uint64_t seed) {
  std::map<std::string, std::vector<uint8_t>> in;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (idx.is_input(TensorId(t))) in[g.tensors[t].name] = generate_input(g.tensors[t], seed);
  return in;
}

// A graph file's text loaded, the test stopping (with the loader's message) where it is refused.
inline Graph load_ok(const std::string& text) {
  auto g = load_graph_text(text, "t.json", "");
  INFO((g.ok() ? std::string() : g.error().message));
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace gexec::test
