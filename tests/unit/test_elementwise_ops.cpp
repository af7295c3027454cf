// SUB, DIV, SIGMOID, TANH, ERF, POW and the scalar operands: the CPU kernels against the reference
// on edge values (every input exact, so that the bound is the kernels' own arithmetic), the check
// refusing a wrong kernel (sharpness), the error model's terms, and the loader's refusals.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backend_ops.hpp"
#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "../../src/verify/ref_math.hpp"
#if GEXEC_HAVE_CPU
#include "gexec/backends/cpu_device.hpp"
#endif

using namespace gexec;

namespace {

std::string load_problem(const std::string& op_json) {
  const std::string text = R"({"format": "gexec.graph", "version": 1, "tensors": [{"name": "x", "shape": [4], "dtype": "f32"},
    {"name": "y", "shape": [4], "dtype": "f32"}, {"name": "z", "shape": [4], "dtype": "f32"}],
    "ops": [)" + op_json + "]}";
  auto g = load_graph_text(text, "t.json", ".");
  if (g.ok()) return "(loaded)";
  CHECK(g.error().code == Exit::bad_input);
  return g.error().message;
}

}  // namespace

TEST_CASE("elementwise ops: the reference's values and error terms", "[ops][reference]") {
  using ref::Elem;
  const Elem exact{2.0, 2.0, 0.0, false, DType::f32};
  auto apply = [](OpType t, const Elem& x, const Elem& y) {
    return ref::elementwise(t, GeluApprox::tanh, DType::f32, DType::f32, DType::f32, x, y, 0.0);
  };
  // A constant is its nearest f32, exact.
  CHECK(ref::constant_elem(0.1).value == double(0.1f));
  CHECK(ref::constant_elem(0.1).var == 0.0);
  CHECK(apply(OpType::SUB, exact, ref::constant_elem(0.5)).value == 1.5);
  CHECK(apply(OpType::DIV, exact, ref::constant_elem(4.0)).value == 0.5);
  // DIV: a divisor whose error may reach 0 has no bound (infinite variance); an exact divisor of
  // 0 gives the infinity, with nothing to bound.
  const Elem noisy_small{1e-3, 1e-3, 1e-6, false, DType::f32};  // sd 1e-3: 0 is one sd away
  CHECK(std::isinf(apply(OpType::DIV, exact, noisy_small).var));
  const Elem zero{0.0, 0.0, 0.0, false, DType::f32};
  CHECK(std::isinf(apply(OpType::DIV, exact, zero).value));
  CHECK(apply(OpType::DIV, exact, zero).var == 0.0);
  // A divisor of 2 with error variance 1e-6: (var(x) + r^2 var(y)) / m^2 with m = 2 - 6e-3.
  const Elem noisy_two{2.0, 2.0, 1e-6, false, DType::f32};
  const double m = 2.0 - 6e-3;
  CHECK(apply(OpType::DIV, exact, noisy_two).var == Approx(1e-6 / (m * m)).epsilon(1e-3));
  // Saturation: an error in x far out in the tails of SIGMOID, TANH, ERF does not move the result.
  const Elem far{40.0, 40.0, 1e-4, false, DType::f32};
  for (OpType t : {OpType::SIGMOID, OpType::TANH, OpType::ERF}) {
    INFO(op_type_name(t));
    CHECK(apply(t, far, {}).value == 1.0);
    CHECK(apply(t, far, {}).var < 1e-12);
    // Near 0 the slope is the largest: sigmoid 1/4, tanh 1, erf 2/sqrt(pi).
    const Elem near{0.0, 0.0, 1e-6, false, DType::f32};
    const double slope = t == OpType::SIGMOID ? 0.25 : t == OpType::TANH ? 1.0 : 2.0 / std::sqrt(std::numbers::pi);
    CHECK(apply(t, near, {}).var == Approx(1e-6 * slope * slope).epsilon(1e-4));  // and the evaluation error
  }
  // POW: C's pow; a negative base with a fractional exponent is NaN, x^0 is 1 exactly.
  const Elem minus{-2.0, 2.0, 0.0, false, DType::f32};
  CHECK(std::isnan(apply(OpType::POW, minus, ref::constant_elem(0.5)).value));
  CHECK(apply(OpType::POW, minus, ref::constant_elem(3.0)).value == -8.0);
  CHECK(apply(OpType::POW, minus, ref::constant_elem(-1.0)).value == -0.5);
  CHECK(apply(OpType::POW, noisy_small, ref::constant_elem(0.0)).value == 1.0);
  CHECK(apply(OpType::POW, noisy_small, ref::constant_elem(0.0)).var == 0.0);
  // p >= 1: the slope at the far end; p < 1 with an error that reaches 0: unbounded.
  CHECK(apply(OpType::POW, noisy_two, ref::constant_elem(2.0)).var >= 1e-6 * 4 * 4);
  CHECK(std::isinf(apply(OpType::POW, noisy_small, ref::constant_elem(0.5)).var));
}

#if GEXEC_HAVE_CPU
TEST_CASE("elementwise ops: the CPU kernels match the reference on edge values", "[ops][cpu]") {
  auto dev = open_cpu_device();
  const auto cases = test::edge_value_cases();
  CHECK(cases.size() >= 50);
  for (const test::OpCase& c : cases) {
    INFO(c.what);
    REQUIRE_FALSE(c.graph.ops.empty());
    const test::CaseResult r = test::run_case(*dev, c.graph);
    INFO(r.describe());
    CHECK(r.pass());
  }
}

TEST_CASE("elementwise ops: a wrong kernel fails the check (sharpness)", "[ops][cpu]") {
  auto dev = open_cpu_device();
  for (const test::WrongCase& p : test::wrong_kernel_cases()) {
    INFO(p.what);
    const test::CaseResult right = test::run_case(*dev, p.right);
    INFO(right.describe());
    CHECK(right.pass());  // the correct kernel passes
    const test::CaseResult wrong = test::run_case(*dev, p.wrong, &p.right);
    INFO(wrong.describe());
    CHECK(wrong.error.empty());
    CHECK_FALSE(wrong.pass());
  }
}
#endif

TEST_CASE("elementwise ops: the loader's refusals of constant operands", "[ops][load]") {
  const std::string ok = load_problem(R"({"op_type": "DIV", "inputs": ["x"], "outputs": ["z"], "attrs": {"scalar": 4}})");
  CHECK(ok == "(loaded)");
  CHECK(load_problem(R"({"op_type": "POW", "inputs": ["x"], "outputs": ["z"], "attrs": {"exponent": 0.5}})") == "(loaded)");
  CHECK(load_problem(R"({"op_type": "SUB", "inputs": ["x", "y"], "outputs": ["z"]})") == "(loaded)");
  auto has = [](const std::string& msg, const std::string& part) {
    INFO(msg);
    CHECK(msg.find(part) != std::string::npos);
    // One problem, one line.
    CHECK(std::count(msg.begin(), msg.end(), '\n') <= 1);
  };
  has(load_problem(R"({"op_type": "POW", "inputs": ["x"], "outputs": ["z"]})"),
      "POW needs \"exponent\", a constant (POW by a tensor is not supported)");
  has(load_problem(R"({"op_type": "POW", "inputs": ["x", "y"], "outputs": ["z"], "attrs": {"exponent": 2}})"),
      "POW takes 1 input");
  has(load_problem(R"({"op_type": "ADD", "inputs": ["x"], "outputs": ["z"]})"),
      "ADD with one operand needs \"scalar\", its constant second operand");
  has(load_problem(R"({"op_type": "MUL", "inputs": ["x", "y"], "outputs": ["z"], "attrs": {"scalar": 2}})"),
      "MUL takes \"scalar\" or a second operand, not both");
  has(load_problem(R"({"op_type": "DIV", "inputs": ["x"], "outputs": ["z"], "attrs": {"scalar": 1e39}})"),
      "/ops/0/attrs/scalar: expected a finite number within f32's range");
  has(load_problem(R"({"op_type": "DIV", "inputs": ["x"], "outputs": ["z"], "attrs": {"scalar": "2"}})"),
      "/ops/0/attrs/scalar");
  has(load_problem(R"({"op_type": "POW", "inputs": ["x"], "outputs": ["z"], "attrs": {"scalar": 2}})"),
      "/ops/0/attrs/scalar: \"scalar\" is for ADD, SUB, MUL, DIV, not POW");
  has(load_problem(R"({"op_type": "TANH", "inputs": ["x"], "outputs": ["z"], "attrs": {"exponent": 2}})"),
      "TANH takes no attributes");
  has(load_problem(R"({"op_type": "FUSED_ELEMENTWISE", "inputs": ["x"], "outputs": ["z"], "attrs": {"steps":
      [{"op": "DIV", "args": [0, 0], "dtype": "f32", "scalar": 2}], "results": [1]}})"),
      "/ops/0/attrs/steps/0/args: expected an array of one value number (DIV with a constant)");
  has(load_problem(R"({"op_type": "FUSED_ELEMENTWISE", "inputs": ["x"], "outputs": ["z"], "attrs": {"steps":
      [{"op": "POW", "args": [0], "dtype": "f32"}], "results": [1]}})"),
      "step 0 (POW) needs \"exponent\"");
  has(load_problem(R"({"op_type": "FUSED_ELEMENTWISE", "inputs": ["x"], "outputs": ["z"], "attrs": {"steps":
      [{"op": "RELU", "args": [0], "dtype": "f32", "exponent": 2}], "results": [1]}})"),
      "\"exponent\" is for POW, not RELU");
}

TEST_CASE("elementwise ops: constants save, print and load back", "[ops][load]") {
  const std::string text = R"({"format": "gexec.graph", "version": 1, "tensors": [{"name": "x", "shape": [4], "dtype": "f32"},
    {"name": "y", "shape": [4], "dtype": "f16"}, {"name": "z", "shape": [4], "dtype": "f32"}],
    "ops": [{"op_type": "DIV", "inputs": ["x"], "outputs": ["y"], "attrs": {"scalar": 0.1}},
            {"op_type": "POW", "inputs": ["y"], "outputs": ["z"], "attrs": {"exponent": -1.5}}]})";
  auto g = load_graph_text(text, "t.json", ".");
  REQUIRE(g.ok());
  CHECK(g->ops[0].attrs.constant == 0.1);
  CHECK(g->ops[1].attrs.constant == -1.5);
  auto again = load_graph_text(save_graph(*g), "t.json", ".");
  REQUIRE(again.ok());
  CHECK(again->ops == g->ops);
}
