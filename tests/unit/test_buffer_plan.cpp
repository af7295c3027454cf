// The buffer planner: reuse of dead intermediates, no aliasing of live tensors, alignment.
#include <algorithm>

#include "catch.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "graph_builder.hpp"

using namespace gexec;

namespace {

TensorId add(Graph& g, const std::string& name, int64_t n) {
  Tensor t;
  t.name = name;
  t.shape = {n};
  t.dtype = DType::f32;
  return g.add_tensor(t);
}

// x -> relu -> t1 -> relu -> t2 -> ... -> out: a chain of n elementwise ops.
Graph chain(int ops, int64_t elems) {
  Graph g;
  g.name = "chain";
  TensorId prev = add(g, "x", elems);
  for (int i = 0; i < ops; ++i) {
    TensorId next = add(g, i + 1 == ops ? "out" : "t" + std::to_string(i), elems);
    test::add_op(g, "relu_" + std::to_string(i), OpType::RELU, {prev}, next);
    prev = next;
  }
  g.outputs = {prev};
  return g;
}

bool overlap(int64_t a, int64_t an, int64_t b, int64_t bn) { return a < b + bn && b < a + an; }

}  // namespace

TEST_CASE("a chain reuses the space of dead intermediates", "[plan]") {
  const Graph g = chain(10, 1000);  // 4000 bytes each, 4096 aligned
  const BufferPlan p = plan_buffers(g);
  // Live at once: x and out for the whole run, plus at most two intermediates.
  CHECK(p.arena_bytes <= 4 * 4096);
  CHECK(p.total_bytes == 11 * 4096);
  for (int64_t off : p.offset) CHECK(off % kArenaAlignment == 0);
}

TEST_CASE("an op's output never shares bytes with its inputs or with live tensors", "[plan]") {
  const Graph g = chain(6, 333);
  const BufferPlan p = plan_buffers(g);
  const GraphIndex idx(g);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    // Every tensor live during op i: written at or before i and read at or after i, or whole-run.
    std::vector<TensorId> live;
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const OpId prod = idx.producer[t];
      const OpId last = idx.consumers[t].empty() ? prod : idx.consumers[t].back();
      const bool whole = prod == kNone || idx.is_output[t];
      if (whole || (prod <= OpId(i) && last >= OpId(i))) live.push_back(TensorId(t));
    }
    for (size_t a = 0; a < live.size(); ++a)
      for (size_t b = a + 1; b < live.size(); ++b) {
        INFO("op " << i << ": " << g.tensor(live[a]).name << " and " << g.tensor(live[b]).name);
        CHECK_FALSE(overlap(p.offset[size_t(live[a])], g.tensor(live[a]).bytes(), p.offset[size_t(live[b])],
                            g.tensor(live[b]).bytes()));
      }
  }
}

TEST_CASE("tensors that no op touches get no space", "[plan]") {
  Graph g = chain(2, 10);
  add(g, "unused", 1 << 20);
  const BufferPlan p = plan_buffers(g);
  CHECK(p.offset.back() == -1);
  CHECK(p.arena_bytes < (1 << 20));
}

TEST_CASE("sizes beyond any device saturate instead of overflowing", "[plan]") {
  Graph g;
  TensorId a = add(g, "a", int64_t(1) << 60);  // 2^62 bytes: the largest the loader lets through is 2^63 - 1
  TensorId b = add(g, "b", int64_t(1) << 60);
  test::add_op(g, "add", OpType::ADD, {a, a}, b);
  g.outputs = {b};
  const BufferPlan p = plan_buffers(g);
  CHECK(p.arena_bytes >= (int64_t(1) << 62));
  CHECK(p.total_bytes >= (int64_t(1) << 62));
}
