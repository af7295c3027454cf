// Tests of loading, checking and saving graph files.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/printer.hpp"

using namespace gexec;
namespace fs = std::filesystem;

namespace {

const std::string kSource = GEXEC_SOURCE_DIR;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

Result<Graph> load(const std::string& text, const std::string& base_dir = kSource + "/tests/data") {
  return load_graph_text(text, "t.json", base_dir);
}

std::string error_of(const std::string& text) {
  auto g = load(text);
  if (g.ok()) return "(loaded)";
  CHECK(g.error().code == Exit::bad_input);
  return g.error().message;
}

// A graph file around the given tensors and ops.
std::string graph(const std::string& tensors, const std::string& ops, const std::string& extra = "") {
  return R"({"format": "gexec.graph", "version": 1, )" + extra + R"("tensors": [)" + tensors + R"(], "ops": [)" +
         ops + "]}";
}

const std::string kVec = R"({"name": "X", "shape": [8], "dtype": "f32"}, {"name": "Y", "shape": [8], "dtype": "f32"})";

}  // namespace

TEST_CASE("every example graph loads, verifies, and saves back to an equal graph", "[load]") {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kSource + "/graphs")) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    const std::string path = entry.path().string();
    INFO(path);
    auto g = load_graph_file(path);
    if (!g) FAIL(g.error().message);
    CHECK(verify(*g).empty());
    CHECK_FALSE(g->outputs.empty());

    const std::string saved = save_graph(*g);
    auto again = load_graph_text(saved, path, entry.path().parent_path().string());
    if (!again) FAIL(again.error().message);
    CHECK(*again == *g);
    CHECK(save_graph(*again) == saved);
    CHECK(print_graph(*again) == print_graph(*g));
  }
  CHECK(count >= 8);
}

TEST_CASE("the example of graph-format.md loads as documented", "[load]") {
  auto g = load_graph_file(kSource + "/graphs/gemm_bias_relu.json");
  REQUIRE(g.ok());
  CHECK(print_graph(*g) ==
        "graph gemm_bias_relu\n"
        "tensor A [64,80] f16 input normal(0,0.25)\n"
        "tensor B [80,96] f16 input normal(0,0.25)\n"
        "tensor Bias [96] f32 constant input normal(0,0.1)\n"
        "tensor C [64,96] f16\n"
        "op GEMM_BIAS_ACT_0 = GEMM_BIAS_ACT(A, B, Bias) -> C {act=relu, mnk=[64,96,80]}\n"
        "outputs C\n");
}

TEST_CASE("defaults: graph name, op names, outputs, and data-flow order", "[load]") {
  const std::string text = graph(
      kVec + R"(, {"name": "Z", "shape": [8], "dtype": "f16"}, {"name": "W", "shape": [8], "dtype": "f32"})",
      R"({"op_type": "CAST", "inputs": ["Y"], "outputs": ["Z"]},
         {"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]},
         {"op_type": "GELU", "name": "g", "inputs": ["X"], "outputs": ["W"], "attrs": {"approximate": "none"}})");
  auto g = load_graph_text(text, "some/dir/my_graph.json", "");
  if (!g) FAIL(g.error().message);
  CHECK(g->name == "my_graph");
  CHECK_FALSE(g->seed.has_value());
  REQUIRE(g->ops.size() == 3);
  CHECK(g->ops[0].name == "RELU_1");  // moved before its consumer, keeps its file index
  CHECK(g->ops[1].name == "CAST_0");
  CHECK(g->ops[2].name == "g");
  CHECK(g->ops[2].attrs.approximate == GeluApprox::none);
  // Written by an op and read by none, in declaration order.
  REQUIRE(g->outputs.size() == 2);
  CHECK(g->tensor(g->outputs[0]).name == "Z");
  CHECK(g->tensor(g->outputs[1]).name == "W");
  CHECK_FALSE(g->tensor(0).init.has_value());
}

TEST_CASE("seeds, attributes and inits are read", "[load]") {
  const std::string text = graph(
      R"({"name": "A", "shape": [2, 3], "dtype": "f16", "layout": "colmajor", "init": {"values": [1, 2, 3, 4, 5, 6]}},
         {"name": "B", "shape": [2, 4], "dtype": "bf16", "init": {"dist": "uniform", "low": -2, "high": 0.5}, "device": "cuda"},
         {"name": "b", "shape": [4], "dtype": "f32", "init": {"dist": "ones"}, "constant": true},
         {"name": "C", "shape": [3, 4], "dtype": "f32"})",
      R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "b"], "outputs": ["C"],
          "attrs": {"trans_a": true, "alpha": 0.25, "act": "gelu", "mnk": [3, 4, 2]}})",
      R"("seed": 18446744073709551615, "name": "x", )");
  auto g = load(text);
  if (!g) FAIL(g.error().message);
  CHECK(g->seed == 18446744073709551615ull);
  CHECK(g->name == "x");
  const Tensor& a = g->tensor(0);
  CHECK(a.layout == Layout::colmajor);
  REQUIRE(a.init.has_value());
  CHECK(a.init->kind == InitKind::values);
  CHECK(a.init->values == std::vector<double>{1, 2, 3, 4, 5, 6});  // as written: storage order
  CHECK(g->tensor(1).init->kind == InitKind::uniform);
  CHECK(g->tensor(1).init->low == -2);
  CHECK(g->tensor(1).init->high == 0.5);
  CHECK(g->tensor(2).init->kind == InitKind::ones);
  CHECK(g->tensor(2).constant);
  const Attrs& at = g->ops[0].attrs;
  CHECK(at.trans_a);
  CHECK_FALSE(at.trans_b);
  CHECK(at.alpha == 0.25);
  CHECK(at.act == Act::gelu);
  CHECK(at.mnk == std::array<int64_t, 3>{3, 4, 2});
}

// JSON has no NaN or infinity: init.values writes them as "nan", "inf", "-inf", and such a graph
// (an ONNX constant with -inf, as an attention mask) saves and loads back to the same values.
TEST_CASE("init.values: non-finite values as strings, saved and loaded back", "[load]") {
  const std::string text = R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [4], "dtype": "f32", "constant": true, "init": {"values": ["nan", "inf", "-inf", 1.5]}},
    {"name": "Y", "shape": [4], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]}], "outputs": ["Y"]})";
  auto g = load_graph_text(text, "nf.json", ".");
  if (!g) FAIL(g.error().message);
  const std::vector<double>& v = g->tensors[0].init->values;
  REQUIRE(v.size() == 4);
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == std::numeric_limits<double>::infinity());
  CHECK(v[2] == -std::numeric_limits<double>::infinity());
  CHECK(v[3] == 1.5);
  const std::string saved = save_graph(*g);
  CHECK(saved.find(R"(["nan","inf","-inf",1.5])") != std::string::npos);
  auto again = load_graph_text(saved, "nf.json", ".");
  if (!again) FAIL(again.error().message);
  CHECK(save_graph(*again) == saved);
  CHECK(*again == *g);  // NaN equal to NaN in a graph's data
  // Any other string is refused where it stands.
  std::string bad = text;
  bad.replace(bad.find("\"inf\""), 5, "\"Inf\"");
  auto refused = load_graph_text(bad, "nf.json", ".");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("/tensors/0/init/values/1") != std::string::npos);
  CHECK(refused.error().message.find("\"nan\", \"inf\", \"-inf\"") != std::string::npos);
}

TEST_CASE("init.file reads .npy data into the tensor's storage order", "[load]") {
  // m[r][c] = 10 r + c + 0.5 in every fixture; a colmajor tensor stores it column by column.
  const std::vector<double> row_order = {0.5, 1.5, 2.5, 10.5, 11.5, 12.5};
  const std::vector<double> col_order = {0.5, 10.5, 1.5, 11.5, 2.5, 12.5};
  for (const char* file : {"npy/mat2x3_f32.npy", "npy/mat2x3_f32_fortran.npy", "npy/mat2x3_f16.npy"}) {
    INFO(file);
    const std::string text = graph(
        std::string(R"({"name": "R", "shape": [2, 3], "dtype": "f32", "init": {"file": ")") + file + R"("}},
           {"name": "K", "shape": [2, 3], "dtype": "f16", "layout": "colmajor", "init": {"file": ")" + file + R"("}},
           {"name": "S", "shape": [2, 3], "dtype": "f32"})",
        R"({"op_type": "ADD", "inputs": ["R", "K"], "outputs": ["S"]})");
    auto g = load(text);
    if (!g) FAIL(g.error().message);
    CHECK(g->tensor(0).init->kind == InitKind::file);
    CHECK(g->tensor(0).init->file == file);
    CHECK(g->tensor(0).init->values == row_order);
    CHECK(g->tensor(1).init->values == col_order);
  }
  // The path is relative to the graph file.
  auto g = load_graph_text(graph(R"({"name": "R", "shape": [3], "dtype": "f32", "init": {"file": "vec3_f32.npy"}},
                                    {"name": "S", "shape": [3], "dtype": "f32"})",
                                 R"({"op_type": "RELU", "inputs": ["R"], "outputs": ["S"]})"),
                           "t.json", kSource + "/tests/data/npy");
  if (!g) FAIL(g.error().message);
  CHECK(g->tensor(0).init->values == std::vector<double>{1, 2, 3});
}

TEST_CASE("problem messages name the path and the values", "[load]") {
  CHECK(error_of(graph(R"({"name": "A", "shape": [64, 80], "dtype": "f16"}, {"name": "B", "shape": [81, 96], "dtype": "f16"},
                          {"name": "C", "shape": [64, 96], "dtype": "f16"})",
                       R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]})")) ==
        "t.json: /ops/0: MATMUL shapes disagree: A is [64,80] so K=80, B is [81,96] so K=81");
  CHECK(error_of(graph(kVec, R"({"op_type": "RELU", "inputs": ["Y"], "outputs": ["X"]},
                                {"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]})",
                       R"("outputs": ["X"], )")) == "t.json: /ops: cycle through RELU_0 -> RELU_1 -> RELU_0");
  CHECK(error_of(graph(R"({"name": "A", "shape": [4, 4], "dtype": "f16"}, {"name": "C", "shape": [4, 4], "dtype": "f16"})",
                       R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "A"], "outputs": ["C"], "attrs": {"act": "relux"}})")) ==
        "t.json: /ops/0/attrs/act: unknown activation \"relux\"; expected one of none, relu, gelu, gelu_erf, silu");
  CHECK(error_of(graph(kVec, R"({"op_type": "RELU", "inputs": ["AB"], "outputs": ["Y"]})")) ==
        "t.json: /ops/0/inputs/0: tensor \"AB\" is not declared");
  CHECK(error_of(graph(kVec, R"({"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]})", R"("a/b~": 1, )")) ==
        "t.json: /a~1b~0: unknown key \"a/b~\"; expected one of format, version, name, seed, tensors, ops, outputs");
  CHECK(error_of("{\n  \"format\": \"gexec.graph\",\n  \"version\": 1,\n  \"tensors\": [,]\n}") ==
        "t.json:4:15: JSON syntax error: syntax error while parsing value - unexpected ','; expected '[', '{', or a literal");
}

TEST_CASE("every problem in a file is reported", "[load]") {
  const std::string text = graph(
      R"({"name": "A", "shape": [4, 0], "dtype": "f16"}, {"name": "B", "shape": [4], "dtype": "f8"},
         {"name": "C", "shape": [4], "dtype": "f16", "layout": "colmajor"}, {"name": "D", "shape": [4], "dtype": "f16"})",
      R"({"op_type": "RELU", "inputs": ["Q"], "outputs": ["D"]}, {"op_type": "GELU", "inputs": ["D"], "outputs": ["D2"],
          "attrs": {"approximate": "fast"}})",
      R"("version": 3, )");
  auto g = load(text);
  REQUIRE_FALSE(g.ok());
  const auto l = lines(g.error().message);
  // Repeating "version" in the object is itself reported; the rest follows in file order.
  const std::vector<std::string> want = {
      "t.json: /version: key \"version\" appears twice in one object",
      "t.json: /tensors/0/shape/1: expected a positive integer, found number 0",
      "t.json: /tensors/1/dtype: unknown dtype \"f8\"; expected one of f16, bf16, f32, f8e4m3, f8e5m2, i32",
      "t.json: /tensors/2/layout: colmajor needs a rank-2 tensor; the shape is [4]",
      "t.json: /ops/0/inputs/0: tensor \"Q\" is not declared",
      "t.json: /ops/1/outputs/0: tensor \"D2\" is not declared",
      "t.json: /ops/1/attrs/approximate: unknown GELU form \"fast\"; expected one of tanh, none",
  };
  for (const std::string& w : want) {
    INFO(g.error().message);
    CHECK(std::find(l.begin(), l.end(), w) != l.end());
  }
}

TEST_CASE("problems beyond kMaxProblems are counted, not listed", "[load]") {
  std::string tensors = R"({"name": "X", "shape": [8], "dtype": "f32"}, {"name": "Y", "shape": [8], "dtype": "f32"})";
  const size_t bad = kMaxProblems + 10;
  for (size_t i = 0; i < bad; ++i) tensors += R"(, {"name": "t)" + std::to_string(i) + R"(", "shape": [8], "dtype": "f64"})";
  auto g = load(graph(tensors, R"({"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]})"));
  REQUIRE_FALSE(g.ok());
  const auto l = lines(g.error().message);
  REQUIRE(l.size() == kMaxProblems + 1);
  CHECK(l[0] == "t.json: /tensors/2/dtype: unknown dtype \"f64\"; expected one of f16, bf16, f32, f8e4m3, f8e5m2, i32");
  CHECK(l.back() == "... and 10 more problems");
}

TEST_CASE("hostile inputs are refused cleanly", "[load]") {
  std::string deep = "{\"format\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto e = error_of(deep);
  CHECK(e.find("t.json:1:") == 0);
  CHECK(e.find("nesting deeper than 64") != std::string::npos);

  CHECK(error_of("") == "t.json:1:1: JSON syntax error: the file is empty");
  CHECK(error_of("\"just a string\"") == "t.json: /: the top level must be a JSON object, found string \"just a string\"");
  const std::string long_name(100000, 'x');
  e = error_of(graph(kVec, R"({"op_type": "RELU", "inputs": [")" + long_name + R"("], "outputs": ["Y"]})"));
  CHECK(e.size() < 400);  // long strings are shortened in messages
  CHECK(error_of("{\"a\": \"\\u0000\x01\"}").find("t.json:1:") == 0);  // raw control character

  // Too large to read: refused from its size alone (a sparse file costs no disk).
  const fs::path big = fs::temp_directory_path() / "gexec_test_big.json";
  { std::ofstream(big.string()) << "{"; }
  fs::resize_file(big, (uint64_t(256) << 20) + 1);
  auto g = load_graph_file(big.string());
  fs::remove(big);
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().message.find("graph files are limited to 256 MiB") != std::string::npos);

  auto missing = load_graph_file(kSource + "/graphs/does_not_exist.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == Exit::bad_input);
  CHECK(missing.error().message.find("does_not_exist.json") != std::string::npos);
}

namespace {

// An MLP chain of `layers` x (MATMUL W, BIAS_ADD b, RELU), every layer 16 wide.
std::string mlp_chain(int layers) {
  std::string t = R"({"name": "h0", "shape": [4, 16], "dtype": "f16"})", o;
  for (int i = 0; i < layers; ++i) {
    const std::string s = std::to_string(i), n = std::to_string(i + 1);
    t += R"(, {"name": "W)" + s + R"(", "shape": [16, 16], "dtype": "f16", "constant": true})";
    t += R"(, {"name": "b)" + s + R"(", "shape": [16], "dtype": "f32", "constant": true})";
    t += R"(, {"name": "m)" + s + R"(", "shape": [4, 16], "dtype": "f16"})";
    t += R"(, {"name": "a)" + s + R"(", "shape": [4, 16], "dtype": "f16"})";
    t += R"(, {"name": "h)" + n + R"(", "shape": [4, 16], "dtype": "f16"})";
    o += std::string(i ? ", " : "") + R"({"op_type": "MATMUL", "inputs": ["h)" + s + R"(", "W)" + s +
         R"("], "outputs": ["m)" + s + R"("]}, {"op_type": "BIAS_ADD", "inputs": ["m)" + s + R"(", "b)" + s +
         R"("], "outputs": ["a)" + s + R"("]}, {"op_type": "RELU", "inputs": ["a)" + s + R"("], "outputs": ["h)" + n +
         R"("]})";
  }
  return graph(t, o);
}

// CPU seconds, so that other processes on the machine do not count.
double cpu_seconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

TEST_CASE("a 10,000-op graph loads in linear time", "[load]") {
  const int layers = 3334;
  const std::string small = mlp_chain(layers / 4), big = mlp_chain(layers);
  double t0 = cpu_seconds();
  auto gs = load(small);
  const double t_small = cpu_seconds() - t0;
  t0 = cpu_seconds();
  auto g = load(big);
  const double t_big = cpu_seconds() - t0;
  if (!gs) FAIL(gs.error().message);
  if (!g) FAIL(g.error().message);
  CHECK(g->ops.size() == size_t(3 * layers));
  CHECK(g->outputs.size() == 1);
  // Four times the ops: about four times the time when linear, sixteen when quadratic.
  // (An optimised build loads the big one in under 100 ms.)
  INFO("loads took " << t_small * 1e3 << " ms and " << t_big * 1e3 << " ms");
  CHECK(t_big < 9 * t_small + 0.05);
  CHECK(t_big < 20.0);

  // The same graph with its ops reversed sorts back into the chain.
  Graph rev = g.value();
  std::reverse(rev.ops.begin(), rev.ops.end());
  t0 = cpu_seconds();
  CHECK_FALSE(topo_sort(rev).has_value());
  CHECK(cpu_seconds() - t0 < 2.0);
  CHECK(rev.ops == g->ops);
  t0 = cpu_seconds();
  CHECK(verify(rev).empty());
  CHECK(cpu_seconds() - t0 < 2.0);
}
