// Scale of input: a 100,000-op graph goes through loading, the passes, selection and planning;
// deep nesting, huge strings and huge numbers are refused with clear messages.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "catch.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/passes/pipeline.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::has;

namespace {

#if defined(__SANITIZE_ADDRESS__)
#define GEXEC_SCALE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GEXEC_SCALE_ASAN 1
#endif
#endif

// Under ASan every allocation is several times slower; a tenth of the layers keeps the test
// within a minute there, while still catching behaviour that grows faster than the graph.
#ifdef GEXEC_SCALE_ASAN
constexpr int kLayers = 3'334;
constexpr int kHoles = 1'000;
#else
constexpr int kLayers = 33'334;  // 3 ops each: just over 100,000 ops
constexpr int kHoles = 4'000;    // 5 ops each
#endif
constexpr int kWidth = 16;
constexpr int kRows = 8;

std::string shape(int64_t a, int64_t b) { return "[" + std::to_string(a) + "," + std::to_string(b) + "]"; }

// An MLP of `layers` MATMUL -> BIAS_ADD -> RELU layers, x0 -> x1 -> ... -> x<layers>.
std::string mlp_json(int layers) {
  std::string s = R"({"format": "gexec.graph", "version": 1, "name": "scale", "seed": 7, "tensors": [)";
  s.reserve(size_t(layers) * 420);
  s += R"({"name": "x0", "shape": )" + shape(kRows, kWidth) + R"(, "dtype": "f16"})";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i), next = std::to_string(i + 1);
    s += R"(, {"name": "W)" + n + R"(", "shape": )" + shape(kWidth, kWidth) +
         R"(, "dtype": "f16", "constant": true, "init": {"dist": "normal", "std": 0.1}})";
    s += R"(, {"name": "b)" + n + R"(", "shape": [)" + std::to_string(kWidth) +
         R"(], "dtype": "f32", "constant": true, "init": {"dist": "normal", "std": 0.05}})";
    s += R"(, {"name": "h)" + n + R"(", "shape": )" + shape(kRows, kWidth) + R"(, "dtype": "f16"})";
    s += R"(, {"name": "hb)" + n + R"(", "shape": )" + shape(kRows, kWidth) + R"(, "dtype": "f16"})";
    s += R"(, {"name": "x)" + next + R"(", "shape": )" + shape(kRows, kWidth) + R"(, "dtype": "f16"})";
  }
  s += R"(], "ops": [)";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i), next = std::to_string(i + 1);
    if (i) s += ", ";
    s += R"({"op_type": "MATMUL", "inputs": ["x)" + n + R"(", "W)" + n + R"("], "outputs": ["h)" + n + R"("]})";
    s += R"(, {"op_type": "BIAS_ADD", "inputs": ["h)" + n + R"(", "b)" + n + R"("], "outputs": ["hb)" + n + R"("]})";
    s += R"(, {"op_type": "RELU", "inputs": ["hb)" + n + R"("], "outputs": ["x)" + next + R"("]})";
  }
  s += R"(], "outputs": ["x)" + std::to_string(layers) + R"("]})";
  return s;
}

// Live intermediates of two sizes interleaved, so that freed small ranges cannot take the
// large results that follow: the planner's free list holds `n` ranges at once.
std::string holes_json(int n) {
  auto tensor = [](const std::string& name, int cols) {
    return R"(, {"name": ")" + name + R"(", "shape": [1, )" + std::to_string(cols) + R"(], "dtype": "f32"})";
  };
  auto op = [](const char* type, const std::string& in, const std::string& out) {
    return R"(, {"op_type": ")" + std::string(type) + R"(", "inputs": [)" + in + R"(], "outputs": [")" + out + R"("]})";
  };
  std::string t = R"({"name": "W", "shape": [1, 1024], "dtype": "f32", "constant": true})";
  std::string o;
  t += tensor("xs", 1) + tensor("xb", 1024);
  for (int i = 0; i < n; ++i) {
    const std::string k = std::to_string(i);
    t += tensor("p" + k, 1) + tensor("q" + k, 1024) + tensor("r" + k, 1024);
    o += op("RELU", R"("xs")", "p" + k) + op("RELU", R"("xb")", "q" + k);
  }
  for (int i = 0; i < n; ++i) o += op("MATMUL", R"("p)" + std::to_string(i) + R"(", "W")", "r" + std::to_string(i));
  for (const char* x : {"r", "q"}) {
    std::string prev = std::string(x) + "0";
    for (int i = 1; i < n; ++i) {
      const std::string sum = "s" + std::string(x) + std::to_string(i);
      t += tensor(sum, 1024);
      o += op("ADD", "\"" + prev + R"(", ")" + x + std::to_string(i) + "\"", sum);
      prev = sum;
    }
  }
  return R"({"format": "gexec.graph", "version": 1, "tensors": [)" + t + R"(], "ops": [)" + o.substr(2) + "]}";
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A small valid graph with `extra` (", key: value") added to its top-level object.
std::string with(const std::string& extra) {
  std::string s = R"({"format": "gexec.graph", "version": 1, "seed": 1, "tensors": [
    {"name": "A", "shape": [4, 8], "dtype": "f32"}, {"name": "B", "shape": [8, 2], "dtype": "f32"},
    {"name": "C", "shape": [4, 2], "dtype": "f32"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}]})";
  return s.insert(s.size() - 1, extra);
}

// The same graph with the first `what` in its text replaced by `by`.
std::string with_replaced(const std::string& what, const std::string& by) {
  std::string s = with("");
  const size_t at = s.find(what);
  REQUIRE(at != std::string::npos);
  return s.replace(at, what.size(), by);
}

std::string graph_with_seed(const std::string& seed) {
  return R"({"format": "gexec.graph", "version": 1, "seed": )" + seed + R"(, "tensors": [
    {"name": "A", "shape": [4, 8], "dtype": "f32"}, {"name": "B", "shape": [8, 2], "dtype": "f32"},
    {"name": "C", "shape": [4, 2], "dtype": "f32"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}]})";
}

std::string graph_with_dim(const std::string& dim) {
  return R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "A", "shape": [4, )" + dim + R"(], "dtype": "f32"}, {"name": "B", "shape": [8, 2], "dtype": "f32"},
    {"name": "C", "shape": [4, 2], "dtype": "f32"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}]})";
}

// The refusal of `text`: bad_input, and a message that is short whatever the input's size.
std::string refusal(const std::string& text) {
  auto r = load_graph_text(text, "big.json", "");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Exit::bad_input);
  CHECK(r.error().message.size() < 4096);
  return r.error().message;
}

}  // namespace

TEST_CASE("a graph of 100,000 ops loads, runs the passes, selects and plans", "[scale]") {
  const std::string text = mlp_json(kLayers);
  auto t0 = std::chrono::steady_clock::now();
  auto loaded = load_graph_text(text, "scale.json", "");
  const double load_ms = ms_since(t0);
  REQUIRE(loaded.ok());
  Graph& g = *loaded;
  REQUIRE(g.ops.size() == size_t(3 * kLayers));
  REQUIRE(g.tensors.size() == size_t(5 * kLayers + 1));

  t0 = std::chrono::steady_clock::now();
  PipelineOptions opts;
  opts.passes = default_pipeline();
  std::ostream null_out(nullptr);
  auto records = run_pipeline(g, opts, null_out);
  const double passes_ms = ms_since(t0);
  REQUIRE(records.ok());
  CHECK(verify(g).empty());
  // Every layer fuses into one GEMM_BIAS_ACT; the MATMUL and BIAS_ADD results disappear.
  REQUIRE(g.ops.size() == size_t(kLayers));
  CHECK(g.tensors.size() == size_t(3 * kLayers + 1));
  size_t fused = 0;
  for (const Op& op : g.ops)
    fused += op.type == OpType::GEMM_BIAS_ACT && op.attrs.act == Act::relu && op.inputs.size() == 3;
  CHECK(fused == size_t(kLayers));
  REQUIRE(g.outputs.size() == 1);
  CHECK(g.tensor(g.outputs[0]).name == "x" + std::to_string(kLayers));

  t0 = std::chrono::steady_clock::now();
  auto caps = caps_for_arch("sm_90");
  REQUIRE(caps.ok());
  auto sel = select_kernels(g, *caps, Backend::cuda);
  const double select_ms = ms_since(t0);
  REQUIRE(sel.ok());
  size_t chosen = 0;
  for (const OpChoice& c : sel->ops) chosen += c.kernel != nullptr;
  CHECK(chosen == g.ops.size());

  t0 = std::chrono::steady_clock::now();
  const BufferPlan plan = plan_buffers(g);
  const double plan_ms = ms_since(t0);
  // The weights, biases, x0 and the output live throughout; of the layer results at most two
  // (one layer's input and output) are live at once, so the arena stays that small.
  const GraphIndex idx(g);
  int64_t whole = 0, step = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const int64_t b = (g.tensors[t].bytes() + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    if (idx.producer[t] == kNone || idx.is_output[t]) whole += b;
    else step = std::max(step, b);
  }
  CHECK(plan.arena_bytes <= whole + 2 * step);
  CHECK(plan.arena_bytes < plan.total_bytes);

  t0 = std::chrono::steady_clock::now();
  auto back = load_graph_text(save_graph(g), "scale.json", "");
  const double round_trip_ms = ms_since(t0);
  REQUIRE(back.ok());
  CHECK(back->ops.size() == g.ops.size());

  std::printf("scale: %zu bytes of JSON, %d ops: load %.0f ms, passes %.0f ms, select %.0f ms, plan %.0f ms, "
              "save+load %.0f ms\n",
              text.size(), 3 * kLayers, load_ms, passes_ms, select_ms, plan_ms, round_trip_ms);
}

TEST_CASE("a plan whose free list grows with the graph stays valid", "[scale]") {
  auto loaded = load_graph_text(holes_json(kHoles), "holes.json", "");
  REQUIRE(loaded.ok());
  Graph& g = *loaded;
  std::ostream null_out(nullptr);
  PipelineOptions opts;
  // Without fuse_residual and group_elementwise, which would merge the chains of ADDs that make
  // the holes this test is about.
  opts.passes = {"canonicalize", "dead_ops", "fold_constant_casts", "fuse_elementwise"};
  REQUIRE(run_pipeline(g, opts, null_out).ok());
  REQUIRE(g.ops.size() == size_t(5 * kHoles - 2));

  const auto t0 = std::chrono::steady_clock::now();
  const BufferPlan plan = plan_buffers(g);
  const double plan_ms = ms_since(t0);
  // Every small p is freed while the large q beside it lives on, so its range can only be
  // reused by another small tensor; the arena still stays below one buffer per tensor.
  CHECK(plan.arena_bytes < plan.total_bytes);
  const GraphIndex idx(g);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const TensorId out = g.ops[i].outputs[0];
    for (TensorId in : g.ops[i].inputs) {
      const int64_t a = plan.offset[size_t(in)], b = plan.offset[size_t(out)];
      const bool apart = a + g.tensor(in).bytes() <= b || b + g.tensor(out).bytes() <= a;
      if (!apart) FAIL("op " << g.ops[i].name << " writes over its input " << g.tensor(in).name);
    }
  }
  std::printf("scale: %zu ops with %d interleaved holes: plan %.0f ms\n", g.ops.size(), kHoles, plan_ms);
}

TEST_CASE("deeply nested JSON is refused without recursion", "[scale]") {
  constexpr int kDepth = 100'000;
  SECTION("arrays, closed") {
    const std::string msg = refusal(with(R"(, "name": )" + std::string(kDepth, '[') + std::string(kDepth, ']')));
    CHECK(has(msg, "nesting deeper than"));
  }
  SECTION("arrays, never closed") {
    CHECK(has(refusal(std::string(kDepth, '[')), "nesting deeper than"));
  }
  SECTION("objects") {
    std::string deep;
    for (int i = 0; i < kDepth; ++i) deep += R"({"a":)";
    deep += "1" + std::string(kDepth, '}');
    CHECK(has(refusal(deep), "nesting deeper than"));
  }
  SECTION("brackets inside strings do not count") {
    auto r = load_graph_text(with(R"(, "name": ")" + std::string(kDepth, '[') + "\""), "big.json", "");
    REQUIRE(r.ok());
    CHECK(r->name.size() == size_t(kDepth));
  }
  SECTION("the command line exits 2") {
    const auto path = std::filesystem::temp_directory_path() / "gexec_scale_deep.json";
    std::ofstream(path) << std::string(kDepth, '[') << std::string(kDepth, ']');
    const auto r = test::run_gexec("validate '" + path.string() + "'");
    std::filesystem::remove(path);
    CHECK(r.signal == 0);
    CHECK(r.status == 2);
    CHECK(has(r.output, "nesting deeper than"));
  }
}

TEST_CASE("multi-megabyte strings are refused or kept, with short messages", "[scale]") {
  const std::string big(10 << 20, 'a');
  SECTION("as an undeclared output") {
    CHECK(has(refusal(with(R"(, "outputs": [")" + big + "\"]")), "is not declared"));
  }
  SECTION("as an unknown key") {
    CHECK(has(refusal(with(", \"" + big + "\": 1")), "unknown key"));
  }
  SECTION("as a tensor name with a bad character") {
    CHECK(has(refusal(with_replaced("\"A\"", "\"" + big + "!\"")), "bad name"));
  }
  SECTION("as an init file path") {
    const std::string text = with_replaced(R"("dtype": "f32"})", R"("dtype": "f32", "init": {"file": ")" + big + "\"}}");
    CHECK(has(refusal(text), "/tensors/0/init/file"));
  }
  SECTION("as an op_type") {
    CHECK(has(refusal(with_replaced("\"MATMUL\"", "\"" + big + "\"")), "unknown op_type"));
  }
  SECTION("as a dtype") {
    CHECK(has(refusal(with_replaced("\"f32\"", "\"" + big + "\"")), "unknown dtype"));
  }
  SECTION("as the graph's name: kept whole") {
    auto r = load_graph_text(with(R"(, "name": ")" + big + "\""), "big.json", "");
    REQUIRE(r.ok());
    CHECK(r->name == big);
  }
}

TEST_CASE("enormous numbers are refused with clear messages", "[scale]") {
  SECTION("numbers beyond double are JSON errors, located by line and column") {
    for (const char* seed : {"1e400", "-1e400"}) {
      const std::string msg = refusal(graph_with_seed(seed));
      INFO(msg);
      CHECK(has(msg, "big.json:1:"));
      CHECK(has(msg, std::string("number overflow parsing '") + seed + "'"));
    }
  }
  SECTION("seed beyond 64 bits") {
    for (const char* seed : {"18446744073709551616", "-1", "1.5", "-0.0"}) {
      const std::string msg = refusal(graph_with_seed(seed));
      INFO(msg);
      CHECK(has(msg, "/seed"));
      CHECK(has(msg, "unsigned 64-bit integer"));
    }
  }
  SECTION("seed at the limits is kept") {
    auto r = load_graph_text(graph_with_seed("18446744073709551615"), "big.json", "");
    REQUIRE(r.ok());
    CHECK(r->seed == UINT64_MAX);
    auto z = load_graph_text(graph_with_seed("-0"), "big.json", "");
    REQUIRE(z.ok());
    CHECK(z->seed == 0u);
  }
  SECTION("shape dimensions") {
    for (const char* dim : {"18446744073709551616", "9223372036854775808", "-0", "0", "8.0", "-8"}) {
      const std::string msg = refusal(graph_with_dim(dim));
      INFO(dim << ": " << msg);
      CHECK(has(msg, "/tensors/0/shape/1"));
      CHECK(has(msg, "positive"));
    }
  }
  SECTION("a shape whose size overflows") {
    const std::string msg = refusal(graph_with_dim("4611686018427387904"));
    CHECK(has(msg, "exceeds the largest tensor size, 9223372036854775807 (2^63 - 1)"));
  }
  SECTION("an init value beyond double") {
    const std::string text = with_replaced(R"("dtype": "f32"})", R"("dtype": "f32", "init": {"dist": "normal", "std": -1e999}})");
    CHECK(has(refusal(text), "number overflow parsing '-1e999'"));
  }
}
