// Tests of the IR: dtype conversions, op names, topological order, shape rules, verify, printing.
#include <cmath>
#include <limits>

#include "catch.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/printer.hpp"

using namespace gexec;

namespace {

// The nearest f16 to x by exhaustive search over the finite halves, ties to the even one.
// Independent of the bit tricks in float_to_f16.
uint16_t nearest_f16(float x) {
  const double ax = std::fabs(double(x));
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (ax >= 65520.0) return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;  // positive finite halves are ordered like their bits
  while (hi - lo > 1) {
    const uint16_t mid = uint16_t((lo + hi) / 2);
    if (double(f16_to_float(mid)) <= ax) lo = mid;
    else hi = mid;
  }
  const double dlo = ax - double(f16_to_float(lo)), dhi = double(f16_to_float(hi)) - ax;
  if (dlo < dhi) return sign | lo;
  if (dhi < dlo) return sign | hi;
  return sign | ((lo & 1) ? hi : lo);
}

Tensor tensor(std::string name, std::vector<int64_t> shape, DType dt = DType::f16) {
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dt;
  return t;
}

Op op(std::string name, OpType type, std::vector<TensorId> in, std::vector<TensorId> out) {
  Op o;
  o.name = std::move(name);
  o.type = type;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  return o;
}

// A [64,80] x B [80,96] + Bias [96] -> C [64,96], written as one GEMM_BIAS_ACT.
Graph example() {
  Graph g;
  g.name = "gemm_bias_relu";
  Tensor a = tensor("A", {64, 80});
  a.init = Init{};
  a.init->std = 0.25;
  Tensor b = tensor("B", {80, 96});
  b.init = a.init;
  Tensor bias = tensor("Bias", {96}, DType::f32);
  bias.init = Init{};
  bias.init->std = 0.1;
  bias.constant = true;
  g.add_tensor(a);
  g.add_tensor(b);
  g.add_tensor(bias);
  g.add_tensor(tensor("C", {64, 96}));
  Op o = op("GEMM_BIAS_ACT_0", OpType::GEMM_BIAS_ACT, {0, 1, 2}, {3});
  o.attrs.act = Act::relu;
  o.attrs.mnk = std::array<int64_t, 3>{64, 96, 80};
  g.ops.push_back(o);
  g.outputs = {3};
  return g;
}

// X -> RELU -> T1 -> GELU -> T2, and X -> CAST -> T3, with ops given in `order`.
Graph chain(const std::vector<int>& order) {
  Graph g;
  for (const char* n : {"X", "T1", "T2", "T3"}) g.add_tensor(tensor(n, {8}));
  const std::vector<Op> ops = {op("relu", OpType::RELU, {0}, {1}), op("gelu", OpType::GELU, {1}, {2}),
                               op("cast", OpType::CAST, {0}, {3})};
  for (int i : order) g.ops.push_back(ops[size_t(i)]);
  g.outputs = {2, 3};
  return g;
}

std::vector<std::string> op_names(const Graph& g) {
  std::vector<std::string> n;
  for (const Op& o : g.ops) n.push_back(o.name);
  return n;
}

}  // namespace

TEST_CASE("dtype and layout names parse back", "[ir]") {
  for (DType t : {DType::f16, DType::bf16, DType::f32}) CHECK(parse_dtype(dtype_name(t)) == t);
  for (Layout l : {Layout::rowmajor, Layout::colmajor}) CHECK(parse_layout(layout_name(l)) == l);
  CHECK_FALSE(parse_dtype("f64").has_value());
  CHECK_FALSE(parse_dtype("F16").has_value());
  CHECK_FALSE(parse_layout("row").has_value());
}

TEST_CASE("every f16 value converts to float and back unchanged", "[ir]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_float(uint16_t(h));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (nan) {
      CHECK(std::isnan(f));
      CHECK(std::isnan(f16_to_float(float_to_f16(f))));
    } else if (float_to_f16(f) != h) {
      FAIL("f16 bits " << h << " -> " << f << " -> " << float_to_f16(f));
    }
  }
  CHECK(f16_to_float(0x3c00) == 1.0f);
  CHECK(f16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(f16_to_float(0x7bff) == 65504.0f);
  CHECK(std::isinf(f16_to_float(0xfc00)));
}

TEST_CASE("float_to_f16 rounds to nearest even at the edges", "[ir]") {
  CHECK(float_to_f16(1.0f) == 0x3c00);
  CHECK(float_to_f16(-2.0f) == 0xc000);
  CHECK(float_to_f16(-0.0f) == 0x8000);
  CHECK(float_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie, down to even
  CHECK(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie, up to even
  CHECK(float_to_f16(65504.0f) == 0x7bff);
  CHECK(float_to_f16(65519.0f) == 0x7bff);
  CHECK(float_to_f16(65520.0f) == 0x7c00);  // tie with the next power: infinity
  CHECK(float_to_f16(1e10f) == 0x7c00);
  CHECK(float_to_f16(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(float_to_f16(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_f16(std::ldexp(1.0f, -25)) == 0x0000);             // tie, down to even zero
  CHECK(float_to_f16(std::ldexp(3.0f, -26)) == 0x0001);
  CHECK(float_to_f16(std::ldexp(3.0f, -25)) == 0x0002);             // 1.5 ulp: tie, up to even
  CHECK(float_to_f16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -30)) == 0x0400);  // rounds up into the normals
  CHECK(float_to_f16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  const uint16_t nan = float_to_f16(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x3ff) != 0);
}

TEST_CASE("float_to_f16 agrees with an exhaustive nearest search", "[ir]") {
  uint32_t state = 12345;
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    // Floats around the f16 range: exponents from 2^-30 to 2^17, random mantissas and signs.
    const uint32_t exp = 97 + (state >> 8) % 48;
    const uint32_t bits = (state & 0x80000000u) | (exp << 23) | ((state * 2654435761u) & 0x7fffffu);
    const float f = f32_from_bits(bits);
    if (float_to_f16(f) != nearest_f16(f) && ++mismatches < 5)
      FAIL_CHECK("float bits " << bits << ": " << float_to_f16(f) << " vs " << nearest_f16(f));
  }
  CHECK(mismatches == 0);
}

TEST_CASE("float_to_bf16 rounds to nearest even and keeps NaN", "[ir]") {
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(f32_from_bits(0x3f808000u)) == 0x3f80);  // tie, down to even
  CHECK(float_to_bf16(f32_from_bits(0x3f818000u)) == 0x3f82);  // tie, up to even
  CHECK(float_to_bf16(f32_from_bits(0x3f808001u)) == 0x3f81);
  CHECK(float_to_bf16(f32_from_bits(0x7f7fffffu)) == 0x7f80);  // overflows to infinity
  CHECK(float_to_bf16(f32_from_bits(0x00000001u)) == 0x0000);
  const uint16_t nan = float_to_bf16(f32_from_bits(0x7f800001u));
  CHECK(std::isnan(bf16_to_float(nan)));
  for (uint32_t h = 0; h < 0x10000; ++h)
    if (!std::isnan(bf16_to_float(uint16_t(h)))) REQUIRE(float_to_bf16(bf16_to_float(uint16_t(h))) == h);
}

TEST_CASE("op names and arities", "[ir]") {
  for (OpType t : kAllOpTypes) CHECK(parse_op_type(op_type_name(t)) == t);
  CHECK_FALSE(parse_op_type("matmul").has_value());
  for (Act a : {Act::none, Act::relu, Act::gelu}) CHECK(parse_act(act_name(a)) == a);
  CHECK_FALSE(parse_act("relux").has_value());
  for (GeluApprox a : {GeluApprox::tanh, GeluApprox::none}) CHECK(parse_gelu_approx(gelu_approx_name(a)) == a);
  CHECK(op_arity(OpType::MATMUL).min_inputs == 2);
  CHECK(op_arity(OpType::MATMUL).max_inputs == 2);
  CHECK(op_arity(OpType::GEMM_BIAS_ACT).min_inputs == 2);
  CHECK(op_arity(OpType::GEMM_BIAS_ACT).max_inputs == 4);  // [A, B, Bias, R] with a residual
  CHECK(op_arity(OpType::CAST).max_inputs == 1);
  for (OpType t : kAllOpTypes) CHECK(op_arity(t).outputs == 1);
  CHECK(op_arity(OpType::FUSED_ELEMENTWISE).most_outputs() == kGroupMaxOutputs);
  CHECK(op_arity(OpType::RELU).most_outputs() == 1);
}

TEST_CASE("topo_sort keeps a valid order and repairs a wrong one", "[ir]") {
  Graph g = chain({0, 1, 2});
  CHECK_FALSE(topo_sort(g).has_value());
  CHECK(op_names(g) == std::vector<std::string>{"relu", "gelu", "cast"});

  g = chain({2, 0, 1});  // also valid: unchanged
  CHECK_FALSE(topo_sort(g).has_value());
  CHECK(op_names(g) == std::vector<std::string>{"cast", "relu", "gelu"});

  g = chain({1, 2, 0});  // gelu before its producer: it moves after relu, cast stays first
  CHECK_FALSE(topo_sort(g).has_value());
  CHECK(op_names(g) == std::vector<std::string>{"cast", "relu", "gelu"});
  CHECK(verify(g).empty());
}

TEST_CASE("topo_sort reports a cycle and leaves the graph alone", "[ir]") {
  Graph g;
  for (const char* n : {"A", "X", "Y", "Z"}) g.add_tensor(tensor(n, {8}));
  g.ops = {op("in", OpType::ADD, {0, 3}, {1}), op("side", OpType::CAST, {0}, {2}), op("loop", OpType::RELU, {1}, {3})};
  const Graph before = g;
  auto cycle = topo_sort(g);
  REQUIRE(cycle.has_value());
  CHECK(*cycle == std::vector<OpId>{0, 2});  // in -> loop -> in
  CHECK(g == before);
  CHECK_FALSE(verify(g).empty());
}

TEST_CASE("check_op names the values that disagree", "[ir]") {
  Graph g;
  g.add_tensor(tensor("A", {64, 80}));
  g.add_tensor(tensor("B", {81, 96}));
  g.add_tensor(tensor("C", {64, 96}));
  g.ops.push_back(op("mm", OpType::MATMUL, {0, 1}, {2}));
  auto p = check_op(g, g.ops[0]);
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "MATMUL shapes disagree: A is [64,80] so K=80, B is [81,96] so K=81");

  g.tensor(1).shape = {80, 96};
  CHECK(check_op(g, g.ops[0]).empty());
  g.tensor(2).shape = {64, 95};
  CHECK(check_op(g, g.ops[0]).size() == 1);

  g.ops[0].inputs.push_back(2);
  p = check_op(g, g.ops[0]);
  REQUIRE_FALSE(p.empty());
  CHECK(p[0] == "MATMUL takes 2 inputs, has 3");
  g.ops[0].inputs = {0, 7};
  CHECK(check_op(g, g.ops[0]).size() == 1);  // id out of range, no crash
}

TEST_CASE("check_op rules of the elementwise ops", "[ir]") {
  Graph g;
  g.add_tensor(tensor("X", {4, 6}));
  g.add_tensor(tensor("b", {6}, DType::f32));
  g.add_tensor(tensor("Y", {4, 6}, DType::f32));
  g.add_tensor(tensor("c", {5}));
  CHECK(check_op(g, op("ba", OpType::BIAS_ADD, {0, 1}, {2})).empty());
  auto p = check_op(g, op("ba", OpType::BIAS_ADD, {0, 3}, {2}));
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "BIAS_ADD bias must be [6] (the last dimension of X [4,6]); b is [5]");
  CHECK(check_op(g, op("add", OpType::ADD, {0, 2}, {2})).empty());  // dtypes may differ
  CHECK(check_op(g, op("add", OpType::ADD, {0, 1}, {2})).size() == 1);
  CHECK(check_op(g, op("cast", OpType::CAST, {0}, {2})).empty());
  CHECK(check_op(g, op("cast", OpType::CAST, {0}, {3})).size() == 1);
  CHECK(check_op(g, op("relu", OpType::RELU, {1}, {3})).size() == 1);
  CHECK(check_op(g, op("gelu", OpType::GELU, {0}, {2})).empty());
}

TEST_CASE("gemm_shape reads transposes, layouts, batches and bias", "[ir]") {
  Graph g;
  Tensor a = tensor("A", {80, 64});
  Tensor b = tensor("B", {96, 80});
  b.layout = Layout::colmajor;
  g.add_tensor(a);
  g.add_tensor(b);
  g.add_tensor(tensor("C", {64, 96}, DType::f32));
  g.add_tensor(tensor("bias", {96}));
  Op o = op("g", OpType::GEMM_BIAS_ACT, {0, 1, 3}, {2});
  o.attrs.trans_a = o.attrs.trans_b = true;
  o.attrs.alpha = 0.5;
  auto s = gemm_shape(g, o);
  REQUIRE(s.has_value());
  CHECK(s->m == 64);
  CHECK(s->n == 96);
  CHECK(s->k == 80);
  CHECK(s->batch == 1);
  CHECK(s->has_bias);
  CHECK(s->layout_b == Layout::colmajor);
  CHECK(s->alpha == 0.5);
  CHECK(gemm_flops(*s) == 2.0 * 64 * 96 * 80);

  o.attrs.mnk = std::array<int64_t, 3>{64, 96, 81};
  std::string why;
  CHECK_FALSE(gemm_shape(g, o, &why).has_value());
  CHECK(why == "GEMM_BIAS_ACT mnk [64,96,81] disagrees with the shapes, which give [64,96,80]");
  o.attrs.mnk.reset();
  g.tensor(3).shape = {64};
  CHECK_FALSE(gemm_shape(g, o, &why).has_value());
  CHECK(why.find("bias must be [96]") != std::string::npos);

  Graph bg;
  bg.add_tensor(tensor("A", {4, 64, 48}));
  bg.add_tensor(tensor("W", {48, 32}));
  bg.add_tensor(tensor("C", {4, 64, 32}));
  bg.add_tensor(tensor("B3", {4, 48, 32}));
  bg.add_tensor(tensor("B5", {5, 48, 32}));
  s = gemm_shape(bg, op("mm", OpType::MATMUL, {0, 1}, {2}));
  REQUIRE(s.has_value());
  CHECK(s->batch == 4);
  CHECK_FALSE(s->b_batched);
  s = gemm_shape(bg, op("mm", OpType::MATMUL, {0, 3}, {2}));
  REQUIRE(s.has_value());
  CHECK(s->b_batched);
  CHECK_FALSE(gemm_shape(bg, op("mm", OpType::MATMUL, {0, 4}, {2})).has_value());
  CHECK_FALSE(gemm_shape(bg, op("mm", OpType::MATMUL, {1, 3}, {2})).has_value());  // rank-2 A, rank-3 B
}

TEST_CASE("verify finds broken invariants", "[ir]") {
  CHECK(verify(example()).empty());

  Graph g = chain({1, 0, 2});  // out of data-flow order
  auto p = verify(g);
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "op gelu reads \"T1\" before op relu writes it");

  g = chain({0, 1, 2});
  g.ops[2].outputs = {2};  // T2 written twice
  p = verify(g);
  REQUIRE_FALSE(p.empty());
  CHECK(p[0].find("already written by op gelu") != std::string::npos);

  g = example();
  g.tensor(3).init = Init{};
  CHECK(verify(g).size() == 1);

  g = example();
  g.outputs = {0};
  CHECK(verify(g) == std::vector<std::string>{"output \"A\" is not written by any op"});

  g = example();
  g.tensor(1).shape = {80, 97};
  CHECK(verify(g).size() == 1);
}

TEST_CASE("drop_unused_tensors renumbers what is left", "[ir]") {
  Graph g = example();
  g.tensors.insert(g.tensors.begin(), tensor("unused0", {3}));
  g.add_tensor(tensor("unused1", {3}));
  for (TensorId& t : g.ops[0].inputs) ++t;
  for (TensorId& t : g.ops[0].outputs) ++t;
  for (TensorId& t : g.outputs) ++t;
  drop_unused_tensors(g);
  CHECK(g == example());
}

TEST_CASE("print_graph is the documented text", "[ir]") {
  Graph g = example();
  g.seed = 42;
  const std::string want =
      "graph gemm_bias_relu\n"
      "seed 42\n"
      "tensor A [64,80] f16 input normal(0,0.25)\n"
      "tensor B [80,96] f16 input normal(0,0.25)\n"
      "tensor Bias [96] f32 constant input normal(0,0.1)\n"
      "tensor C [64,96] f16\n"
      "op GEMM_BIAS_ACT_0 = GEMM_BIAS_ACT(A, B, Bias) -> C {act=relu, mnk=[64,96,80]}\n"
      "outputs C\n";
  CHECK(print_graph(g) == want);

  g = chain({0, 1, 2});
  g.tensor(0).layout = Layout::colmajor;  // printed even where invalid: the printer only shows
  g.tensor(0).init = Init{InitKind::uniform, 0, 1, -0.5, 0.125, {}, ""};
  g.ops[1].attrs.approximate = GeluApprox::none;
  g.ops[2].hoisted = true;
  const std::string want2 =
      "graph \n"
      "tensor X [8] f16 colmajor input uniform(-0.5,0.125)\n"
      "tensor T1 [8] f16\n"
      "tensor T2 [8] f16\n"
      "tensor T3 [8] f16\n"
      "op relu = RELU(X) -> T1\n"
      "op gelu = GELU(T1) -> T2 {approximate=none}\n"
      "op cast = CAST(X) -> T3 hoisted\n"
      "outputs T2, T3\n";
  CHECK(print_graph(g) == want2);
}
