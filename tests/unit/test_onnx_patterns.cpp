// The exporter patterns of the ONNX front end (src/onnx/patterns.cpp): x * Sigmoid(x) -> SILU, the
// erf and tanh GELUs -> GELU, as exporters write them, matched only when exactly right (every
// constant, single readers, no attribute); any other group is refused naming an unmapped op. And
// MatMul + Add(bias), which the passes fuse into one GEMM_BIAS_ACT.
#include "catch.hpp"
#include "skip.hpp"

#if GEXEC_HAVE_ONNX

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/onnx/onnx_import.hpp"
#include "gexec/passes/pipeline.hpp"
#include "onnx_builder.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::has;
using gexec::test::OnnxBuilder;
namespace fs = std::filesystem;

namespace {

constexpr int32_t kF32 = 1, kF16 = 10, kF64 = 11;

Result<onnx_import::Model> load(const OnnxBuilder& b) { return onnx_import::load_onnx(b.bytes(), "m.onnx", ".", {}); }

std::string refusal(const OnnxBuilder& b) {
  auto m = load(b);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code == Exit::bad_input);
  return m.error().message;
}

// A group that is not exactly a pattern: mapped node by node, `type` among the ops, no SILU or
// GELU (never an approximation), and no match listed.
void check_unfused(const OnnxBuilder& b, OpType type) {
  auto m = load(b);
  INFO((m.ok() ? std::string("loaded") : m.error().message));
  REQUIRE(m.ok());
  CHECK(m->patterns.empty());
  bool found = false;
  for (const Op& op : m->graph.ops) {
    found = found || op.type == type;
    CHECK(op.type != OpType::GELU);
    CHECK(op.type != OpType::SILU);
  }
  CHECK(found);
}

// The model's single op, which must be `type`.
const Op& only_op(const onnx_import::Model& m, OpType type) {
  REQUIRE(m.graph.ops.size() == 1);
  CHECK(m.graph.ops[0].type == type);
  return m.graph.ops[0];
}

void io(OnnxBuilder& b, int32_t type = kF32) {
  b.input("x", type, {int64_t(4), int64_t(8)});
  b.output("y", type, {int64_t(4), int64_t(8)});
}

// A Constant node holding one value as a tensor of `dims` (type FLOAT or DOUBLE).
void constant(OnnxBuilder& b, const std::string& name, double v, std::vector<int64_t> dims = {}, int32_t type = kF32) {
  auto* a = b.node("Constant", {}, {name}).add_attribute();
  a->set_name("value");
  a->set_type(gexec::onnx_pb::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  if (type == kF64) t->add_double_data(v);
  else t->add_float_data(float(v));
}

struct Erf {
  double sqrt2 = std::sqrt(2.0), one = 1.0, half = 0.5;
  std::vector<int64_t> half_dims = {};
  bool half_first = false;     // (x * 0.5) * (1 + erf) instead of (x * (1 + erf)) * 0.5
  bool erf_is_output = false;  // the Erf's value also a graph output
};

// The erf GELU as PyTorch's exporter writes it: Div, Erf, Add, Mul, Mul (constants as Constants).
OnnxBuilder gelu_erf(const Erf& e = {}) {
  OnnxBuilder b;
  io(b);
  if (e.erf_is_output) b.output("e", kF32, {int64_t(4), int64_t(8)});
  constant(b, "c_sqrt2", e.sqrt2);
  constant(b, "c_one", e.one);
  constant(b, "c_half", e.half, e.half_dims);
  b.node("Div", {"x", "c_sqrt2"}, {"d"}, "/act/Div");
  b.node("Erf", {"d"}, {"e"}, "/act/Erf");
  b.node("Add", {"e", "c_one"}, {"a"}, "/act/Add");
  if (e.half_first) {
    b.node("Mul", {"x", "c_half"}, {"m"}, "/act/Mul");
    b.node("Mul", {"m", "a"}, {"y"}, "/act/Mul_1");
  } else {
    b.node("Mul", {"x", "a"}, {"m"}, "/act/Mul");
    b.node("Mul", {"m", "c_half"}, {"y"}, "/act/Mul_1");
  }
  return b;
}

struct Tanh {
  double kappa = 0.044715, exponent = 3, beta = std::sqrt(2.0 / M_PI);
  bool pow = true;  // x^3 as Pow(x, 3) (Hugging Face's gelu_new), else x * (x * x) (PyTorch's tanh GELU)
};

// The tanh GELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), constants as initializers.
OnnxBuilder gelu_tanh(const Tanh& t = {}) {
  OnnxBuilder b;
  io(b);
  b.init_f32("kappa", {}, {float(t.kappa)});
  b.init_f32("beta", {}, {float(t.beta)});
  b.init_f32("one", {}, {1.0f});
  b.init_f32("half", {}, {0.5f});
  if (t.pow) {
    b.init_f32("three", {}, {float(t.exponent)});
    b.node("Pow", {"x", "three"}, {"p"}, "/act/Pow");
    b.node("Mul", {"p", "kappa"}, {"k"}, "/act/Mul");
  } else {
    b.node("Mul", {"x", "x"}, {"xx"});
    b.node("Mul", {"x", "xx"}, {"p"});
    b.node("Mul", {"kappa", "p"}, {"k"});
  }
  b.node("Add", {"x", "k"}, {"s"});
  b.node("Mul", {"s", "beta"}, {"i"});
  b.node("Tanh", {"i"}, {"t"});
  b.node("Add", {"t", "one"}, {"a"});
  b.node("Mul", {"x", "half"}, {"h"});
  b.node("Mul", {"h", "a"}, {"y"}, "/act/Mul_4");
  return b;
}

}  // namespace

TEST_CASE("onnx patterns: x * Sigmoid(x) becomes one SILU; anything else keeps SIGMOID, mapped as written", "[onnx]") {
  for (bool sigmoid_first : {false, true}) {
    OnnxBuilder b;
    io(b);
    b.node("Sigmoid", {"x"}, {"s"}, "/act/Sigmoid");
    b.node("Mul", sigmoid_first ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"}, {"y"},
           "/act/Mul");
    auto m = load(b);
    REQUIRE(m.ok());
    only_op(*m, OpType::SILU);
    REQUIRE(m->patterns.size() == 1);
    CHECK(m->patterns[0] == "nodes 0 \"/act/Sigmoid\", 1 \"/act/Mul\" (Sigmoid, Mul): SILU of \"x\"");
  }
  OnnxBuilder other;  // y * Sigmoid(x): not x's SILU
  other.input("x", kF32, {int64_t(4), int64_t(8)});
  other.input("z", kF32, {int64_t(4), int64_t(8)});
  other.output("y", kF32, {int64_t(4), int64_t(8)});
  other.node("Sigmoid", {"x"}, {"s"});
  other.node("Mul", {"z", "s"}, {"y"});
  check_unfused(other, OpType::SIGMOID);

  OnnxBuilder twice;  // the sigmoid is read by another node too: it must exist on its own
  io(twice);
  twice.output("w", kF32, {int64_t(4), int64_t(8)});
  twice.node("Sigmoid", {"x"}, {"s"});
  twice.node("Mul", {"x", "s"}, {"y"});
  twice.node("Relu", {"s"}, {"w"});
  check_unfused(twice, OpType::SIGMOID);

  OnnxBuilder output;  // the sigmoid is a graph output
  io(output);
  output.output("s", kF32, {int64_t(4), int64_t(8)});
  output.node("Sigmoid", {"x"}, {"s"});
  output.node("Mul", {"x", "s"}, {"y"});
  check_unfused(output, OpType::SIGMOID);
}

TEST_CASE("onnx patterns: the erf GELU in the orders exporters write becomes one GELU (none)", "[onnx]") {
  for (bool half_first : {false, true}) {
    Erf e;
    e.half_first = half_first;
    auto m = load(gelu_erf(e));
    REQUIRE(m.ok());
    const Op& op = only_op(*m, OpType::GELU);
    CHECK(op.attrs.approximate == GeluApprox::none);
    CHECK(op.name == "_act_Mul_1");
    REQUIRE(m->patterns.size() == 1);
    CHECK(m->patterns[0] ==
          "nodes 3 \"/act/Div\", 4 \"/act/Erf\", 5 \"/act/Add\", 6 \"/act/Mul\", 7 \"/act/Mul_1\" (Div, Erf, Add, Mul, "
          "Mul): GELU (erf) of \"x\"");
  }
  // A 0.5 of shape [1, 1] (rank no higher than x's) matches too.
  Erf d;
  d.half_dims = {1, 1};
  REQUIRE(load(gelu_erf(d)).ok());

  // x * (1/sqrt(2)) in place of x / sqrt(2), constants as initializers, the 0.5 first.
  OnnxBuilder b;
  io(b);
  b.init_f32("r", {1}, {float(std::sqrt(0.5))});
  b.init_f32("one", {}, {1.0f});
  b.init_f32("half", {}, {0.5f});
  b.node("Mul", {"r", "x"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"one", "e"}, {"a"});
  b.node("Mul", {"half", "x"}, {"h"});
  b.node("Mul", {"a", "h"}, {"y"});
  auto m = load(b);
  REQUIRE(m.ok());
  CHECK(only_op(*m, OpType::GELU).attrs.approximate == GeluApprox::none);
}

TEST_CASE("onnx patterns: an erf GELU that is not exactly right is mapped node by node, not approximated", "[onnx]") {
  Erf wrong_sqrt2;
  wrong_sqrt2.sqrt2 = 1.41;
  check_unfused(gelu_erf(wrong_sqrt2), OpType::ERF);
  Erf wrong_half;
  wrong_half.half = 0.25;
  check_unfused(gelu_erf(wrong_half), OpType::ERF);
  Erf wrong_one;
  wrong_one.one = 2.0;
  check_unfused(gelu_erf(wrong_one), OpType::ERF);
  Erf output;
  output.erf_is_output = true;
  check_unfused(gelu_erf(output), OpType::ERF);
  // A 0.5 of rank 3 broadcasts x [4, 8] to [1, 4, 8]: matched, then refused naming why.
  Erf rank;
  rank.half_dims = {1, 1, 1};
  CHECK(has(refusal(gelu_erf(rank)),
            "node 7 \"/act/Mul_1\" (Mul, opset 17): the GELU (erf) pattern's constant \"c_half\" [1,1,1] has a higher "
            "rank than X \"x\" [4,8]"));
  // Div of another value than the one multiplied.
  OnnxBuilder other = gelu_erf();
  other.input("z", kF32, {int64_t(4), int64_t(8)});
  other.graph().mutable_node(3)->set_input(0, "z");
  check_unfused(other, OpType::ERF);
  // An attribute on one of the nodes: not the plain op.
  OnnxBuilder attr = gelu_erf();
  OnnxBuilder::attr_int(*attr.graph().mutable_node(5), "axis", 0);
  CHECK(has(refusal(attr), "axis"));  // Add takes no attributes
}

TEST_CASE("onnx patterns: the tanh GELU with Pow or x*x*x becomes one GELU (tanh); a wrong one is mapped node by node", "[onnx]") {
  for (bool pow : {true, false}) {
    Tanh t;
    t.pow = pow;
    auto m = load(gelu_tanh(t));
    INFO(pow);
    REQUIRE(m.ok());
    CHECK(only_op(*m, OpType::GELU).attrs.approximate == GeluApprox::tanh);
    REQUIRE(m->patterns.size() == 1);
    CHECK(has(m->patterns[0], "): GELU (tanh) of \"x\""));
  }
  Tanh square;
  square.exponent = 2;
  check_unfused(gelu_tanh(square), OpType::POW);
  Tanh kappa;
  kappa.kappa = 0.045;
  check_unfused(gelu_tanh(kappa), OpType::TANH);
  Tanh beta;
  beta.beta = 0.8;
  check_unfused(gelu_tanh(beta), OpType::TANH);
  Tanh cube;
  cube.pow = false;
  OnnxBuilder quartic = gelu_tanh(cube);  // x * (x * x) * x: x^4
  quartic.graph().mutable_node(1)->set_input(0, "xx");
  check_unfused(quartic, OpType::TANH);
}

TEST_CASE("onnx patterns: f16 constants are the values rounded to f16", "[onnx]") {
  OnnxBuilder b;
  io(b, kF16);
  b.init_16("c_sqrt2", kF16, {}, {float(std::sqrt(2.0))});
  b.init_16("c_one", kF16, {}, {1.0f});
  b.init_16("c_half", kF16, {}, {0.5f});
  b.node("Div", {"x", "c_sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "c_one"}, {"a"});
  b.node("Mul", {"x", "a"}, {"m"});
  b.node("Mul", {"m", "c_half"}, {"y"});
  auto m = load(b);
  REQUIRE(m.ok());
  only_op(*m, OpType::GELU);
  CHECK(m->graph.tensor(m->graph.outputs[0]).dtype == DType::f16);
  // An f32 constant with f16 X is not ONNX (Div takes one type): refused naming both.
  OnnxBuilder mixed = b;
  mixed.init_f32("c32", {}, {float(std::sqrt(2.0))});
  mixed.graph().mutable_node(0)->set_input(1, "c32");
  CHECK(has(refusal(mixed), "constant \"c32\" is FLOAT and X \"x\" is FLOAT16"));
}

TEST_CASE("onnx patterns: MatMul + Add(bias), in either order, fuses into one GEMM_BIAS_ACT", "[onnx]") {
  for (bool bias_first : {true, false}) {
    OnnxBuilder b;
    b.input("x", kF32, {int64_t(2), int64_t(3), int64_t(8)});
    b.output("y", kF32, {int64_t(2), int64_t(3), int64_t(16)});
    b.init_f32("W", {8, 16}, std::vector<float>(128, 0.5f));
    b.init_f32("bias", {16}, std::vector<float>(16, 1.0f));
    b.node("MatMul", {"x", "W"}, {"h"}, "/fc/MatMul");
    b.node("Add", bias_first ? std::vector<std::string>{"bias", "h"} : std::vector<std::string>{"h", "bias"}, {"y"},
           "/fc/Add");
    auto m = load(b);
    REQUIRE(m.ok());
    Graph g = m->graph;
    std::ostringstream prints;
    REQUIRE(run_pipeline(g, {*parse_pass_list("default"), false, "", ""}, prints).ok());
    REQUIRE(g.ops.size() == 1);
    CHECK(g.ops[0].type == OpType::GEMM_BIAS_ACT);
    CHECK(g.ops[0].inputs.size() == 3);  // A, B, the bias
  }
  // The product read by another node too: it stays, and so does the Add.
  OnnxBuilder b;
  b.input("x", kF32, {int64_t(4), int64_t(8)});
  b.output("y", kF32, {int64_t(4), int64_t(16)});
  b.output("h", kF32, {int64_t(4), int64_t(16)});
  b.init_f32("W", {8, 16}, std::vector<float>(128, 0.5f));
  b.init_f32("bias", {16}, std::vector<float>(16, 1.0f));
  b.node("MatMul", {"x", "W"}, {"h"});
  b.node("Add", {"bias", "h"}, {"y"});
  auto m = load(b);
  REQUIRE(m.ok());
  Graph g = m->graph;
  std::ostringstream prints;
  REQUIRE(run_pipeline(g, {*parse_pass_list("default"), false, "", ""}, prints).ok());
  int gemms = 0;
  for (const Op& op : g.ops) gemms += op.type == OpType::GEMM_BIAS_ACT;
  CHECK(gemms == 0);
}

#if GEXEC_HAVE_CPU
TEST_CASE("onnx patterns: SILU and both GELUs compute ONNX's formulas on the CPU backend (--expect)", "[onnx][cpu]") {
  const fs::path dir = fs::temp_directory_path() / ("gexec_onnx_patterns_" + std::to_string(::getpid()));
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i) - 16) * 0.25f;
  auto formula = [](const std::string& kind, double v) {
    if (kind == "silu") return v / (1 + std::exp(-v));
    if (kind == "erf") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  OnnxBuilder silu;
  io(silu);
  silu.node("Sigmoid", {"x"}, {"s"});
  silu.node("Mul", {"s", "x"}, {"y"});
  for (const auto& [kind, model] : {std::pair<std::string, OnnxBuilder>{"silu", silu}, {"erf", gelu_erf()}, {"tanh", gelu_tanh()}}) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    model.save((dir / "m.onnx").string());
    std::vector<float> y;
    for (float v : x) y.push_back(float(formula(kind, v)));
    gexec::test::write_tensor_pb((dir / "input_0.pb").string(), "x", {4, 8}, x);
    gexec::test::write_tensor_pb((dir / "output_0.pb").string(), "y", {4, 8}, y);
    RunOptions o;
    o.graph_path = (dir / "m.onnx").string();
    o.backend = "cpu";
    o.load_inputs_dir = o.expect_dir = dir.string();
    const RunReport r = run_graph(o);
    INFO(kind << ": " << (r.error ? r.error->message : ""));
    REQUIRE(r.result == RunReport::Result::pass);
    REQUIRE(r.expect);
    CHECK(r.expect->outputs[0].pass);
  }
  fs::remove_all(dir);
}
#endif

#else
GEXEC_SKIPPED_TEST("onnx patterns: the ONNX front end", "[onnx]", "this build has no ONNX input (see the configure summary)")
#endif
