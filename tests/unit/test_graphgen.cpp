// The graph generator (tests/graphgen): its graphs valid and reproducible from the seed, the
// shrinker's minimum, and a fixed slice of graphs run through the passes and the CPU backend.
#include <filesystem>
#include <map>
#include <string>

#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "graphgen.hpp"
#include "skip.hpp"

using namespace gexec;
using namespace gexec::graphgen;

TEST_CASE("graphgen: a graph is a function of its seed, and valid", "[graphgen]") {
  for (uint64_t s = 0; s < 300; ++s) {
    const Graph g = generate_graph(s);
    INFO("seed " << s);
    CHECK(g == generate_graph(s));
    CHECK(random_runs(s)[1].args() == random_runs(s)[1].args());
    const auto problems = verify(g);
    CHECK(problems.empty());
    // What the file says it loads as, and every refusal names its JSON path.
    auto loaded = load_graph_text(save_graph(g), "g.json", ".");
    CHECK(loaded.ok());
    if (loaded) CHECK(*loaded == g);
  }
  CHECK(!(generate_graph(1) == generate_graph(2)));
}

TEST_CASE("graphgen: the graphs cover the format", "[graphgen]") {
  // Over a few hundred seeds every op type, dtype, f8 scale form, amax, residual, batched and
  // transposed product, colmajor tensor and kept intermediate appears.
  std::map<std::string, int> seen;
  for (uint64_t s = 0; s < 400; ++s) {
    const Graph g = generate_graph(s);
    const GraphIndex idx(g);
    for (const Op& op : g.ops) {
      ++seen[std::string(op_type_name(op.type))];
      if (amax_output(op) != kNone && op.type != OpType::FUSED_ELEMENTWISE) ++seen["amax"];
      if (op.attrs.residual) ++seen["residual"];
      if (op.attrs.trans_a || op.attrs.trans_b) ++seen["transposed"];
      if (op.type == OpType::MATMUL && g.tensor(op.inputs[0]).rank() == 3) ++seen["batched"];
      if (is_f8_product(g, op)) ++seen["f8 product"];
    }
    for (const Tensor& t : g.tensors) {
      ++seen[std::string(dtype_name(t.dtype))];
      if (t.layout == Layout::colmajor) ++seen["colmajor"];
      if (t.scale.axis >= 0) ++seen["scale axis " + std::to_string(t.scale.axis)];
      if (t.numel() == 1) ++seen["one element"];
      if (t.init && t.init->kind == InitKind::values) ++seen["values"];
    }
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      if (idx.is_output[t] && !idx.consumers[t].empty()) ++seen["kept intermediate"];
      if (idx.producer[t] == kNone && idx.consumers[t].empty()) ++seen["unused input"];
    }
  }
  for (OpType t : kAllOpTypes) {
    // Collectives belong to a sharded run's rank programs, which the sharding writes from the
    // generated graphs; a graph holding them does not run by itself (test_tensor_parallel.cpp).
    if (is_collective(t)) continue;
    CHECK(seen[std::string(op_type_name(t))] > 0);
  }
  for (DType d : kAllDTypes) CHECK(seen[std::string(dtype_name(d))] > 0);
  for (const char* k : {"amax", "residual", "transposed", "batched", "f8 product", "colmajor", "scale axis 0",
                        "scale axis 1", "one element", "values", "kept intermediate", "unused input"}) {
    INFO(k);
    CHECK(seen[k] > 0);
  }
}

TEST_CASE("graphgen: the shrinker keeps what fails and drops the rest", "[graphgen]") {
  // "Fails" here: the graph has a CAST to f8e5m2. The minimum is that one CAST, of one element.
  auto has_cast_to_e5m2 = [](const Graph& g) {
    for (const Op& op : g.ops)
      if (op.type == OpType::CAST && g.tensor(op.outputs[0]).dtype == DType::f8e5m2) return true;
    return false;
  };
  int shrunk = 0;
  for (uint64_t s = 0; s < 200 && shrunk < 3; ++s) {
    const Graph g = generate_graph(s);
    if (!has_cast_to_e5m2(g) || g.ops.size() < 3) continue;
    const Graph small = shrink(g, has_cast_to_e5m2);
    INFO("seed " << s << "\n" << save_graph(small));
    CHECK(verify(small).empty());
    CHECK(has_cast_to_e5m2(small));
    REQUIRE(small.ops.size() == 1);
    CHECK(small.tensor(small.ops[0].inputs[0]).numel() == 1);
    ++shrunk;
  }
  CHECK(shrunk == 3);
}

#if GEXEC_HAVE_CPU
TEST_CASE("graphgen: a fixed slice of graphs passes, through the default pipeline and random pass lists", "[cpu]") {
  // The bounded slice of CI (scripts/graphgen.sh) runs many more; this one runs with the tests.
  int runs = 0;
  for (uint64_t s = 1; s <= 150; ++s) {
    const Graph g = generate_graph(s);
    for (const RunSpec& run : random_runs(s)) {
      const Verdict v = judge(g, run);
      INFO("seed " << s << ", " << run.args() << ": " << v.kind << ": " << v.message);
      CHECK(v.outcome != Outcome::failed);
      ++runs;
    }
  }
  CHECK(runs == 600);  // four runs a graph: default, a pass list, an emitted graph, cut for --tp
}

TEST_CASE("graphgen: the minimised graphs of past failures pass", "[cpu]") {
  // tests/data/graphgen: what the generator found, minimised, each failing before its fix:
  //   fused_relu_f16_to_bf16       a RELU into a narrower dtype taken for exact by the reference
  //   gelu_tie_on_largest_element  the normwise rule's spread over 15 elements, one holding the variance
  //   f32_epilogue_cancels         an f32 epilogue's residual and bias additions, cancelling
  //   pow_infinity_into_relu_product  POW 0^-1 = inf into a product: a NaN variance, a NaN bound
  //   sigmoid_slope_of_a_tiny_result   SIGMOID(-47): its slope lost to cancellation, taken for 0
  //   f8_subnormal_intermediate        an f8 product's result on its subnormal grid, read by a CAST
  //   f8_subnormal_output_normwise     the same as an output: the normwise rule without that grid
  //   equal_elements_one_error         16 equal elements, one error: not 16 independent ones
  //   one_element_normwise             a lone element at 4 sigma: the normwise rule tighter than 6
  //   ones_rows_in_step_along_k        one value all along K (rows of a product of ones): K errors in step
  //   ones_rows_repeat_down_columns    a product of ones rows read down its columns (seed 3202, on the
  //                                    H200): its rows' errors repeat, though its values differ
  int graphs = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::string(GEXEC_SOURCE_DIR) + "/tests/data/graphgen")) {
    if (f.path().extension() != ".json") continue;
    auto g = load_graph_file(f.path().string());
    INFO(f.path().string() << (g ? "" : ": " + g.error().message));
    REQUIRE(g.ok());
    for (const char* passes : {"default", "none"}) {
      RunSpec run;
      run.passes = passes;
      const Verdict v = judge(*g, run);
      INFO("--passes " << passes << ": " << outcome_name(v.outcome) << " " << v.kind << ": " << v.message);
      CHECK(v.outcome == Outcome::pass);
    }
    ++graphs;
  }
  CHECK(graphs >= 10);
}
#else
GEXEC_SKIPPED_TEST("graphgen: a fixed slice of graphs passes", "[cpu]", GEXEC_NO_CPU_BACKEND)
#endif
