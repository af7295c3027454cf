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

// Values that reach the edges of each op: zeros of both signs, tiny and huge magnitudes, the
// saturation of SIGMOID/TANH/ERF (|x| of 10 to 90), the exp overflow of SIGMOID (x < -88.7).
const std::vector<double> kEdges = {0.0,  -0.0,  1e-3,  -1e-3, 1e-7, -3e-6, 0.5,  -0.5, 1.0,  -1.0,
                                    2.5,  -2.5,  4.0,   -4.0,  9.5,  -9.5,  10.0, -10.0, 30.0, -30.0,
                                    88.0, -88.0, 89.5,  -89.5, 100.0, -100.0, 0.1, -0.1, 1.5,  -1.5};
// Divisors: near 0 (f32 subnormal 3e-39 included), exactly 0, and ordinary ones.
const std::vector<double> kDivisors = {1e-30, -1e-20, 1e-7,  -1e-7, 3e-39, 0.0,  -0.0, 2.0,  -3.0, 0.25,
                                       1e-3,  -1e-3,  7.0,   -7.0,  0.1,   1e30, -1e30, 1.0,  -1.0, 0.5,
                                       1e-38, 5.0,    -5.0,  9.0,   -9.0,  1.5,  -1.5, 3.0,  0.3,  -0.3};

test::Builder unary_graph(OpType t, DType dt, std::optional<double> constant = std::nullopt) {
  test::Builder b;
  const TensorId x = b.tensor("X", {int64_t(kEdges.size())}, dt);
  Init in;
  in.kind = InitKind::values;
  in.values = kEdges;
  b.g.tensor(x).init = in;
  const TensorId z = b.tensor("Z", {int64_t(kEdges.size())}, dt);
  b.op(t, {x}, z).attrs.constant = constant;
  b.g.outputs = {z};
  return b;
}

test::Builder divide_graph(DType dt) {
  test::Builder b;
  const int64_t n = int64_t(kEdges.size());
  const TensorId x = b.tensor("X", {n}, dt), y = b.tensor("Y", {n}, dt);
  Init in;
  in.kind = InitKind::values;
  in.values = kEdges;
  b.g.tensor(x).init = in;
  in.values = kDivisors;
  b.g.tensor(y).init = in;
  const TensorId z = b.tensor("Z", {n}, dt);
  b.op(OpType::DIV, {x, y}, z);
  b.g.outputs = {z};
  return b;
}

// Normal(0, 2) inputs, 4096 of them: where a wrong formula shows.
test::Builder random_graph(OpType t, DType dt, std::optional<double> constant = std::nullopt, bool two = false) {
  test::Builder b;
  const TensorId x = b.tensor("X", {64, 64}, dt);
  Init in;
  in.std = 2.0;
  b.g.tensor(x).init = in;
  std::vector<TensorId> ins = {x};
  if (two) {
    const TensorId y = b.tensor("Y", {64, 64}, dt);
    Init u;
    u.kind = InitKind::uniform, u.low = 0.5, u.high = 2.0;
    b.g.tensor(y).init = u;
    ins.push_back(y);
  }
  const TensorId z = b.tensor("Z", {64, 64}, dt);
  b.op(t, ins, z).attrs.constant = constant;
  b.g.outputs = {z};
  return b;
}

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
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    const std::string d(dtype_name(dt));
    struct Case {
      std::string what;
      test::Builder b;
    };
    std::vector<Case> cases = {
        {"SIGMOID " + d, unary_graph(OpType::SIGMOID, dt)},
        {"TANH " + d, unary_graph(OpType::TANH, dt)},
        {"ERF " + d, unary_graph(OpType::ERF, dt)},
        {"DIV by values near and at 0 " + d, divide_graph(dt)},
        {"DIV by scalar 0.1 " + d, unary_graph(OpType::DIV, dt, 0.1)},
        {"DIV by scalar -3e-39 " + d, unary_graph(OpType::DIV, dt, -3e-39)},
        {"SUB scalar 2.5 " + d, unary_graph(OpType::SUB, dt, 2.5)},
        {"ADD scalar -1e-3 " + d, unary_graph(OpType::ADD, dt, -1e-3)},
        {"MUL scalar 7 " + d, unary_graph(OpType::MUL, dt, 7.0)},
    };
    for (double p : {2.0, 3.0, 0.5, 1.5, -1.0, -2.0, 0.0, 1.0 / 3.0})
      cases.push_back({"POW " + std::to_string(p) + " " + d, unary_graph(OpType::POW, dt, p)});
    for (const Case& c : cases) {
      INFO(c.what);
      const test::CaseResult r = test::run_case(*dev, c.b.g);
      INFO(r.describe());
      CHECK(r.pass());
    }
  }
}

TEST_CASE("elementwise ops: a wrong kernel fails the check (sharpness)", "[ops][cpu]") {
  auto dev = open_cpu_device();
  // The device computes `wrong`, the reference `right`: the same tensors, another op.
  struct Pair {
    std::string what;
    test::Builder wrong, right;
  };
  std::vector<Pair> pairs;
  for (DType dt : {DType::f32, DType::bf16}) {
    const std::string d = " " + std::string(dtype_name(dt));
    pairs.push_back({"tanh computed as x" + d, random_graph(OpType::CAST, dt), random_graph(OpType::TANH, dt)});
    pairs.push_back({"erf computed as tanh" + d, random_graph(OpType::TANH, dt), random_graph(OpType::ERF, dt)});
    pairs.push_back({"sigmoid computed as silu" + d, random_graph(OpType::SILU, dt), random_graph(OpType::SIGMOID, dt)});
    pairs.push_back({"DIV computed as MUL" + d, random_graph(OpType::MUL, dt, std::nullopt, true),
                     random_graph(OpType::DIV, dt, std::nullopt, true)});
    pairs.push_back({"SUB computed as ADD" + d, random_graph(OpType::ADD, dt, std::nullopt, true),
                     random_graph(OpType::SUB, dt, std::nullopt, true)});
    pairs.push_back({"POW 3 computed as POW 2" + d, random_graph(OpType::POW, dt, 2.0), random_graph(OpType::POW, dt, 3.0)});
  }
  // Small errors, seen at f32's precision: 1e-3 and about 1% relative.
  pairs.push_back({"DIV by 3 computed as MUL by 0.333", random_graph(OpType::MUL, DType::f32, 0.333),
                   random_graph(OpType::DIV, DType::f32, 3.0)});
  pairs.push_back({"POW 0.5 with the exponent 0.51", random_graph(OpType::POW, DType::f32, 0.51),
                   random_graph(OpType::POW, DType::f32, 0.5)});
  for (const Pair& p : pairs) {
    INFO(p.what);
    const test::CaseResult right = test::run_case(*dev, p.right.g);
    INFO(right.describe());
    CHECK(right.pass());  // the correct kernel passes
    const test::CaseResult wrong = test::run_case(*dev, p.wrong.g, &p.right.g);
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
