// The ONNX front end: models built here mapped onto the IR (what each op becomes, what is refused
// and how it is named), dimensions, initializer encodings, and small runs whose results are
// computed here by ONNX's definitions and compared through --expect.
#include "catch.hpp"
#include "skip.hpp"

#if GEXEC_HAVE_ONNX

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/io/load.hpp"
#include "gexec/onnx/onnx_import.hpp"
#include "gexec/passes/pipeline.hpp"
#include "onnx_builder.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::has;
using gexec::test::OnnxBuilder;
namespace fs = std::filesystem;

namespace {

constexpr int32_t kF32 = 1, kF16 = 10, kBF16 = 16, kF64 = 11;

Result<onnx_import::Model> load(const OnnxBuilder& b, const onnx_import::DimOptions& dims = {},
                                const std::string& dir = ".") {
  return onnx_import::load_onnx(b.bytes(), "m.onnx", dir, dims);
}

const Tensor& named(const Graph& g, const std::string& name) {
  const TensorId id = g.find_tensor(name);
  REQUIRE(id != kNone);
  return g.tensor(id);
}

// A constant's values in logical (row-major) order, whatever its layout.
std::vector<double> logical_values(const Tensor& t) {
  if (t.layout != Layout::colmajor) return t.init->values;
  return from_colmajor(t.init->values, t.shape[0], t.shape[1]);
}

std::vector<OpType> types(const Graph& g) {
  std::vector<OpType> t;
  for (const Op& op : g.ops) t.push_back(op.type);
  return t;
}

std::string refusal(const OnnxBuilder& b, const onnx_import::DimOptions& dims = {}) {
  auto m = load(b, dims);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code == Exit::bad_input);
  return m.error().message;
}

// x [batch, 4, 8] -> MatMul W1 [8,16] -> Add b1 -> Relu -> MatMul W2 [16,8] -> Add b2 -> y.
OnnxBuilder mlp() {
  OnnxBuilder b;
  b.input("x", kF32, {std::string("batch"), int64_t(4), int64_t(8)});
  b.output("y", kF32, {std::string("batch"), int64_t(4), int64_t(8)});
  b.init_f32("W1", {8, 16}, std::vector<float>(128, 0.125f));
  b.init_f32("b1", {16}, std::vector<float>(16, 0.5f));
  b.init_f32("W2", {16, 8}, std::vector<float>(128, -0.25f));
  b.init_f32("b2", {8}, std::vector<float>(8, 1.0f));
  b.node("MatMul", {"x", "W1"}, {"h0"}, "/fc1/MatMul");
  b.node("Add", {"h0", "b1"}, {"h1"}, "/fc1/Add");
  b.node("Relu", {"h1"}, {"h2"});
  b.node("MatMul", {"h2", "W2"}, {"h3"}, "/fc2/MatMul");
  b.node("Add", {"h3", "b2"}, {"y"}, "/fc2/Add");
  return b;
}

}  // namespace

TEST_CASE("onnx: an MLP as PyTorch exports it becomes 2-D products that the passes fuse", "[onnx]") {
  auto m = load(mlp(), {{{"batch", 3}}, {}});
  REQUIRE(m.ok());
  const Graph& g = m->graph;
  CHECK(types(g) == std::vector<OpType>{OpType::MATMUL, OpType::BIAS_ADD, OpType::RELU, OpType::MATMUL, OpType::BIAS_ADD});
  // The leading dimensions of x fold into M: one [12, 8] x [8, 16] product.
  CHECK(named(g, "x").shape == std::vector<int64_t>{12, 8});
  CHECK(named(g, "y").shape == std::vector<int64_t>{12, 8});
  CHECK(named(g, "W1").constant);
  REQUIRE(named(g, "W1").init);
  CHECK(named(g, "W1").init->values == std::vector<double>(128, 0.125));
  CHECK(g.ops[0].name == "_fc1_MatMul");
  CHECK(g.ops[2].name == "Relu_2");
  REQUIRE(m->inputs.size() == 1);
  CHECK(m->inputs[0].shape == std::vector<int64_t>{3, 4, 8});
  REQUIRE(m->outputs.size() == 1);
  CHECK(m->outputs[0].name == "y");
  CHECK(m->outputs[0].shape == std::vector<int64_t>{3, 4, 8});
  CHECK(m->opset == 17);
  CHECK(m->op_types == std::vector<std::string>{"2 Add", "2 MatMul", "Relu"});

  Graph after = g;
  std::ostringstream prints;
  REQUIRE(run_pipeline(after, {*parse_pass_list("default"), false, "", ""}, prints).ok());
  int fused = 0;
  for (const Op& op : after.ops) fused += op.type == OpType::GEMM_BIAS_ACT;
  CHECK(fused == 2);
  CHECK(after.ops.size() == 2);
}

TEST_CASE("onnx: Gemm's C as a bias, a residual, a constant filled in, or refused", "[onnx]") {
  auto gemm = [](std::vector<int64_t> c_dims, bool c_constant, float beta) {
    OnnxBuilder b;
    b.input("A", kF32, {int64_t(3), int64_t(4)});
    b.init_f32("B", {5, 4}, std::vector<float>(20, 1.0f));
    b.output("Y", kF32, {int64_t(3), int64_t(5)});
    int64_t n = 1;
    for (int64_t d : c_dims) n *= d;
    if (c_constant) {
      std::vector<float> c;
      for (int64_t i = 0; i < n; ++i) c.push_back(float(i + 1));
      b.init_f32("C", c_dims, c);
    } else {
      std::vector<gexec::test::Dim> dims(c_dims.begin(), c_dims.end());
      b.input("C", kF32, dims);
    }
    auto& node = b.node("Gemm", {"A", "B", "C"}, {"Y"});
    OnnxBuilder::attr_float(node, "alpha", 0.5f);
    OnnxBuilder::attr_float(node, "beta", beta);
    OnnxBuilder::attr_int(node, "transB", 1);
    return b;
  };
  SECTION("a computed [N] C with beta 1 is the bias") {
    auto m = load(gemm({5}, false, 1.0f));
    REQUIRE(m.ok());
    const Op& op = m->graph.ops.at(0);
    CHECK(op.type == OpType::GEMM_BIAS_ACT);
    CHECK(op.inputs.size() == 3);
    CHECK_FALSE(op.attrs.residual);
    CHECK(op.attrs.alpha == 0.5);
    CHECK(op.attrs.trans_b);
    CHECK_FALSE(op.attrs.trans_a);
  }
  SECTION("a computed [M, N] C is the residual, times beta") {
    auto m = load(gemm({3, 5}, false, 0.25f));
    REQUIRE(m.ok());
    const Op& op = m->graph.ops.at(0);
    CHECK(op.attrs.residual);
    CHECK(op.attrs.beta == 0.25);
  }
  SECTION("a constant [1, N] C with beta 2 is a bias of beta * C") {
    auto m = load(gemm({1, 5}, true, 2.0f));
    REQUIRE(m.ok());
    const Op& op = m->graph.ops.at(0);
    REQUIRE(op.inputs.size() == 3);
    const Tensor& bias = m->graph.tensor(op.inputs[2]);
    CHECK(bias.shape == std::vector<int64_t>{5});
    CHECK(bias.init->values == std::vector<double>{2, 4, 6, 8, 10});
  }
  SECTION("a constant scalar C is a bias vector of N copies") {
    auto m = load(gemm({}, true, 0.5f));
    REQUIRE(m.ok());
    const Tensor& bias = m->graph.tensor(m->graph.ops.at(0).inputs.at(2));
    CHECK(bias.init->values == std::vector<double>(5, 0.5));
  }
  SECTION("a constant [M, 1] C is expanded to the [M, N] residual") {
    auto m = load(gemm({3, 1}, true, 1.5f));
    REQUIRE(m.ok());
    const Op& op = m->graph.ops.at(0);
    CHECK(op.attrs.residual);
    CHECK(op.attrs.beta == 1.5);
    const Tensor& r = m->graph.tensor(op.inputs.at(2));
    CHECK(r.shape == std::vector<int64_t>{3, 5});
    CHECK(r.init->values[0] == 1);
    CHECK(r.init->values[4] == 1);
    CHECK(r.init->values[5] == 2);
    CHECK(r.init->values[14] == 3);
  }
  SECTION("a computed scalar C, a computed [M, 1] C and a computed vector with beta are refused") {
    CHECK(has(refusal(gemm({}, false, 1.0f)), "node 0 (Gemm, opset 17): C \"C\" [] is one value computed at run time"));
    CHECK(has(refusal(gemm({3, 1}, false, 1.0f)), "broadcasts along N"));
    CHECK(has(refusal(gemm({5}, false, 0.5f)), "with beta 0.500000"));
  }
  SECTION("a scalar C when N is 1 (the fuzzer's finding: its shape was read from the right when it had none)") {
    auto one_column = [](bool c_constant) {
      OnnxBuilder b;
      b.input("A", kF32, {int64_t(2), int64_t(3)});
      b.init_f32("B", {3, 1}, std::vector<float>(3, 1.0f));
      b.output("Y", kF32, {int64_t(2), int64_t(1)});
      if (c_constant)
        b.init_f32("C", {}, {4.0f});
      else
        b.input("C", kF32, {});
      b.node("Gemm", {"A", "B", "C"}, {"Y"});
      return b;
    };
    auto m = load(one_column(true));
    REQUIRE(m.ok());
    const Tensor& bias = m->graph.tensor(m->graph.ops.at(0).inputs.at(2));
    CHECK(bias.init->values == std::vector<double>{4});
    CHECK(has(refusal(one_column(false)), "is one value computed at run time"));
  }
}

// A constant with NaN and -inf (an attention mask) imports, and the mapped graph saves as a graph
// file that loads back (the fuzzer's finding: JSON wrote them as null).
TEST_CASE("onnx: a constant with non-finite values saves as a graph file that loads back", "[onnx]") {
  OnnxBuilder b;
  b.input("X", kF32, {int64_t(2), int64_t(2)});
  b.output("Z", kF32, {int64_t(2), int64_t(2)});
  const float inf = std::numeric_limits<float>::infinity();
  b.init_f32("M", {2, 2}, {-inf, std::numeric_limits<float>::quiet_NaN(), inf, 0.5f});
  b.node("Add", {"X", "M"}, {"Z"});
  auto m = load(b);
  REQUIRE(m.ok());
  const std::string saved = save_graph(m->graph);
  auto again = load_graph_text(saved, "mask.json", ".");
  if (!again) FAIL(again.error().message);
  CHECK(save_graph(*again) == saved);
  const Tensor& mask = named(*again, "M");
  REQUIRE(mask.init);
  CHECK(mask.init->values[0] == -double(inf));
  CHECK(std::isnan(mask.init->values[1]));
}

TEST_CASE("onnx: Add and Mul: one shape, a bias along the last dimension, constants expanded", "[onnx]") {
  auto binary = [](const std::string& op, std::vector<gexec::test::Dim> b_dims, bool b_constant) {
    OnnxBuilder b;
    b.input("X", kF32, {int64_t(2), int64_t(3), int64_t(4)});
    b.output("Z", kF32, {int64_t(2), int64_t(3), int64_t(4)});
    if (b_constant) {
      std::vector<int64_t> dims;
      for (const auto& d : b_dims) dims.push_back(std::get<int64_t>(d));
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      b.init_f32("Y", dims, std::vector<float>(size_t(n), 3.0f));
    } else {
      b.input("Y", kF32, b_dims);
    }
    b.node(op, {"X", "Y"}, {"Z"});
    return b;
  };
  auto op_of = [](const OnnxBuilder& b) {
    auto m = load(b);
    REQUIRE(m.ok());
    return m->graph.ops.at(0).type;
  };
  CHECK(op_of(binary("Add", {int64_t(2), int64_t(3), int64_t(4)}, false)) == OpType::ADD);
  CHECK(op_of(binary("Mul", {int64_t(2), int64_t(3), int64_t(4)}, false)) == OpType::MUL);
  CHECK(op_of(binary("Add", {int64_t(4)}, false)) == OpType::BIAS_ADD);
  CHECK(op_of(binary("Add", {int64_t(1), int64_t(1), int64_t(4)}, false)) == OpType::BIAS_ADD);
  CHECK(op_of(binary("Add", {}, true)) == OpType::ADD);  // a constant scalar: ADD with `scalar`
  CHECK(op_of(binary("Mul", {int64_t(3), int64_t(1)}, true)) == OpType::MUL);  // expanded to [2,3,4]
  auto m = load(binary("Mul", {int64_t(3), int64_t(1)}, true));
  REQUIRE(m.ok());
  const Tensor& y = m->graph.tensor(m->graph.ops[0].inputs[1]);
  CHECK(y.constant);
  CHECK(y.numel() == 24);
  CHECK(has(refusal(binary("Mul", {int64_t(4)}, false)),
            "node 0 (Mul, opset 17): B \"Y\" [4] is computed and broadcasts to [2,3,4]"));
  CHECK(has(refusal(binary("Add", {int64_t(3), int64_t(1)}, false)), "gexec broadcasts only a vector along the last dimension"));
  CHECK(has(refusal(binary("Add", {int64_t(5)}, false)), "do not broadcast"));
}

TEST_CASE("onnx: Reshape, Flatten, Squeeze, Unsqueeze relabel; Transpose of a constant transposes its data", "[onnx]") {
  OnnxBuilder b;
  b.input("x", kF32, {int64_t(2), int64_t(3), int64_t(4)});
  b.output("y", kF32, {int64_t(1), int64_t(6), int64_t(5), int64_t(1)});
  b.init_i64("shape", {2}, {-1, 4});
  b.init_i64("axes", {2}, {0, -1});
  b.init_f32("Wt", {5, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
  b.node("Reshape", {"x", "shape"}, {"x2"});
  b.node("Transpose", {"Wt"}, {"W"});
  b.node("MatMul", {"x2", "W"}, {"p"});
  b.node("Unsqueeze", {"p", "axes"}, {"y"});
  auto m = load(b);
  REQUIRE(m.ok());
  const Graph& g = m->graph;
  REQUIRE(g.ops.size() == 1);
  CHECK(g.ops[0].type == OpType::MATMUL);
  CHECK(named(g, "x").shape == std::vector<int64_t>{6, 4});  // declared in the shape its reader wants
  const Tensor& w = g.tensor(g.ops[0].inputs[1]);
  CHECK(w.shape == std::vector<int64_t>{4, 5});
  CHECK(w.layout == Layout::colmajor);  // a constant B is stored K-contiguous
  CHECK(logical_values(w)[0] == 1);
  CHECK(logical_values(w)[1] == 5);  // row 0 of the transposed data is column 0 of Wt
  CHECK(logical_values(w)[5] == 2);
  CHECK(w.init->values[1] == 2);     // stored by columns: column 0 of W, row 0 of Wt
  CHECK(m->outputs[0].shape == std::vector<int64_t>{1, 6, 5, 1});
  CHECK(m->inputs[0].shape == std::vector<int64_t>{2, 3, 4});

  OnnxBuilder f;
  f.input("x", kF32, {int64_t(2), int64_t(3), int64_t(4)});
  f.output("y", kF32, {int64_t(6), int64_t(4)});
  auto& flat = f.node("Flatten", {"x"}, {"y"});
  OnnxBuilder::attr_int(flat, "axis", -1);
  auto fm = load(f);
  REQUIRE(fm.ok());
  // Only a relabel: the output is a copy of the input (a CAST to its own dtype).
  REQUIRE(fm->graph.ops.size() == 1);
  CHECK(fm->graph.ops[0].type == OpType::CAST);
  CHECK(fm->outputs[0].shape == std::vector<int64_t>{6, 4});

  OnnxBuilder s;
  s.input("x", kF32, {int64_t(1), int64_t(3), int64_t(1)});
  s.output("y", kF32, {int64_t(3)});
  s.init_i64("axes", {1}, {1});
  s.node("Squeeze", {"x", "axes"}, {"y"});
  CHECK(has(refusal(s), "node 0 (Squeeze, opset 17): axis 1 of [1,3,1] has size 3, not 1"));

  OnnxBuilder t;
  t.input("x", kF32, {int64_t(1), int64_t(3)});
  t.output("y", kF32, {int64_t(3), int64_t(1)});
  t.node("Transpose", {"x"}, {"y"});
  CHECK(load(t).ok());  // moving a dimension of size 1 is a relabel
}

TEST_CASE("onnx: shape arithmetic (Shape, Gather, Slice, Concat) folds to a Reshape's target; data moves are refused",
          "[onnx]") {
  // GPT-2's Conv1D as PyTorch exports it: x.view(-1, x.size(-1)), the product, and
  // .view(x.size()[:-1] + (nf,)), with the token count a dynamic dimension.
  auto conv1d = [] {
    OnnxBuilder b;
    b.input("x", kF32, {std::string("tokens"), int64_t(8)});
    b.output("y", kF32, {std::string("tokens"), int64_t(16)});
    b.init_f32("W", {8, 16}, std::vector<float>(128, 0.25f));
    b.init_f32("bias", {16}, std::vector<float>(16, 0.5f));
    b.init_i64("last", {}, {-1});
    b.init_i64("minus1", {1}, {-1});
    b.init_i64("zero", {1}, {0});
    b.init_i64("to_last", {1}, {-1});
    b.init_i64("nf", {1}, {16});
    b.init_i64("axes0", {1}, {0});
    b.node("Shape", {"x"}, {"s0"});
    b.node("Gather", {"s0", "last"}, {"d"});  // x.size(-1): a scalar
    b.node("Unsqueeze", {"d", "axes0"}, {"d1"});
    OnnxBuilder::attr_int(b.node("Concat", {"minus1", "d1"}, {"flat_shape"}), "axis", 0);
    b.node("Reshape", {"x", "flat_shape"}, {"x2"});
    b.node("MatMul", {"x2", "W"}, {"p"});
    b.node("Add", {"p", "bias"}, {"q"});
    b.node("Shape", {"x"}, {"s1"});
    b.node("Slice", {"s1", "zero", "to_last"}, {"lead"});  // x.size()[:-1]
    OnnxBuilder::attr_int(b.node("Concat", {"lead", "nf"}, {"out_shape"}), "axis", 0);
    b.node("Reshape", {"q", "out_shape"}, {"y"});
    return b;
  };
  auto m = load(conv1d(), {{{"tokens", 5}}, {}});
  REQUIRE(m.ok());
  CHECK(types(m->graph) == std::vector<OpType>{OpType::MATMUL, OpType::BIAS_ADD});
  CHECK(named(m->graph, "x").shape == std::vector<int64_t>{5, 8});
  CHECK(m->outputs[0].shape == std::vector<int64_t>{5, 16});

  // Shape's start and end (opset 15), Slice backwards, Gather with a vector of indices.
  OnnxBuilder r(18);
  r.input("x", kF32, {int64_t(2), int64_t(3), int64_t(4)});
  r.output("y", kF32, {int64_t(4), int64_t(3), int64_t(2)});
  r.init_i64("start", {1}, {-1});
  r.init_i64("end", {1}, {-100});
  r.init_i64("step", {1}, {-1});
  r.init_i64("axis", {1}, {0});
  auto& sh = r.node("Shape", {"x"}, {"s"});
  OnnxBuilder::attr_int(sh, "start", 0);
  OnnxBuilder::attr_int(sh, "end", 3);
  r.node("Slice", {"s", "start", "end", "axis", "step"}, {"rev"});  // [4, 3, 2]
  r.node("Reshape", {"x", "rev"}, {"y"});
  auto rm = load(r);
  REQUIRE(rm.ok());
  CHECK(rm->outputs[0].shape == std::vector<int64_t>{4, 3, 2});

  OnnxBuilder g;
  g.input("x", kF32, {int64_t(2), int64_t(3), int64_t(4)});
  g.output("y", kF32, {int64_t(12), int64_t(2)});
  g.init_i64("idx", {2}, {2, 0});
  g.init_i64("three", {1}, {3});
  g.node("Shape", {"x"}, {"s"});
  g.node("Gather", {"s", "idx"}, {"pick"});  // [4, 2]
  g.node("Mul", {"pick", "three"}, {"scaled"});
  g.node("Reshape", {"x", "scaled"}, {"y"});
  // Arithmetic on shapes is not folded: Mul of integers is refused, naming the node.
  CHECK(has(refusal(g), "(Mul, opset 17)"));

  // Data moves are refused, naming the node and why.
  OnnxBuilder c;
  c.input("x", kF32, {int64_t(2), int64_t(4)});
  c.input("z", kF32, {int64_t(2), int64_t(4)});
  c.output("y", kF32, {int64_t(4), int64_t(4)});
  OnnxBuilder::attr_int(c.node("Concat", {"x", "z"}, {"y"}), "axis", 0);
  CHECK(has(refusal(c), "node 0 (Concat, opset 17): input 0 \"x\" is computed at run time: gexec folds Concat of constant "
                         "integer vectors only"));
  OnnxBuilder gi;
  gi.input("x", kF32, {int64_t(4)});
  gi.output("y", kF32, {int64_t(2)});
  gi.init_i64("idx", {2}, {0, 1});
  gi.node("Gather", {"x", "idx"}, {"y"});
  CHECK(has(refusal(gi), "(Gather, opset 17): data \"x\" is computed at run time"));
  OnnxBuilder oob;
  oob.input("x", kF32, {int64_t(2), int64_t(4)});
  oob.output("y", kF32, {int64_t(8)});
  oob.init_i64("idx", {}, {2});
  oob.node("Shape", {"x"}, {"s"});
  oob.node("Gather", {"s", "idx"}, {"y"});
  CHECK(has(refusal(oob), "(Gather, opset 17): index 2 is outside [-2, 1]"));
}

TEST_CASE("onnx: Cast, CastLike, Gelu and Identity", "[onnx]") {
  OnnxBuilder b(20);
  b.input("x", kF32, {int64_t(2), int64_t(3)});
  b.output("g", kF16, {int64_t(2), int64_t(3)});
  b.output("i", kF32, {int64_t(2), int64_t(3)});
  auto& gelu = b.node("Gelu", {"x"}, {"t"});
  OnnxBuilder::attr_string(gelu, "approximate", "tanh");
  auto& cast = b.node("Cast", {"t"}, {"g"});
  OnnxBuilder::attr_int(cast, "to", kF16);
  b.node("Identity", {"x"}, {"i"});
  auto m = load(b);
  REQUIRE(m.ok());
  const Graph& g = m->graph;
  REQUIRE(g.ops.size() == 3);
  CHECK(g.ops[0].type == OpType::GELU);
  CHECK(g.ops[0].attrs.approximate == GeluApprox::tanh);
  CHECK(g.ops[1].type == OpType::CAST);
  CHECK(named(g, "g").dtype == DType::f16);
  // An output that is an input under another name is a copy.
  CHECK(g.ops[2].type == OpType::CAST);
  CHECK(named(g, "i").dtype == DType::f32);

  OnnxBuilder c;
  c.input("x", kF32, {int64_t(2)});
  c.output("y", kF64, {int64_t(2)});
  OnnxBuilder::attr_int(c.node("Cast", {"x"}, {"y"}), "to", kF64);
  CHECK(has(refusal(c), "node 0 (Cast, opset 17): to DOUBLE: gexec casts to FLOAT"));

  OnnxBuilder s(19);
  s.input("x", kF32, {int64_t(2)});
  s.output("y", 17, {int64_t(2)});
  auto& sat = s.node("Cast", {"x"}, {"y"});
  OnnxBuilder::attr_int(sat, "to", 17);
  OnnxBuilder::attr_int(sat, "saturate", 0);
  CHECK(has(refusal(s), "saturate=0"));

  OnnxBuilder a(20);
  a.input("x", kF32, {int64_t(2)});
  a.output("y", kF32, {int64_t(2)});
  OnnxBuilder::attr_string(a.node("Gelu", {"x"}, {"y"}), "approximate", "fast");
  CHECK(has(refusal(a), "approximate \"fast\" is not one of none, tanh"));
}

TEST_CASE("onnx: graph outputs that are constants, inputs, or named twice are copies; an empty one is refused", "[onnx]") {
  OnnxBuilder b;
  b.input("x", kF32, {int64_t(3)});
  b.output("c", kF32, {int64_t(2)});
  b.output("x", kF32, {int64_t(3)});
  b.output("r", kF32, {int64_t(3)});
  b.output("r2", kF32, {int64_t(3)});
  auto& c = b.node("Constant", {}, {"c"});
  auto* a = c.add_attribute();
  a->set_name("value_floats");
  a->set_type(gexec::onnx_pb::AttributeProto::FLOATS);
  a->add_floats(1.5f);
  a->add_floats(-2.0f);
  b.node("Relu", {"x"}, {"r"});
  b.node("Identity", {"r"}, {"r2"});
  auto m = load(b);
  REQUIRE(m.ok());
  const Graph& g = m->graph;
  // Relu writes r; c, x and r2 are copies, each under its own name.
  REQUIRE(g.outputs.size() == 4);
  CHECK(g.tensor(g.outputs[0]).name == "c");
  CHECK(g.tensor(g.outputs[1]).name == "x_2");
  CHECK(g.tensor(g.outputs[2]).name == "r");
  CHECK(g.tensor(g.outputs[3]).name == "r2");
  int copies = 0;
  for (const Op& op : g.ops) copies += op.type == OpType::CAST;
  CHECK(copies == 3);
  CHECK(m->outputs[1].name == "x");

  OnnxBuilder e;
  e.input("x", kF32, {int64_t(3)});
  e.output("y", kF32, {int64_t(0)});
  auto& k = e.node("Constant", {}, {"y"});
  auto* t = k.add_attribute();
  t->set_name("value");
  t->set_type(gexec::onnx_pb::AttributeProto::TENSOR);
  t->mutable_t()->set_data_type(kF32);
  t->mutable_t()->add_dims(0);
  const std::string msg = refusal(e);
  CHECK(has(msg, "graph output \"y\" (from node 0 (Constant, opset 17)) is empty, [0]"));
  CHECK_FALSE(has(msg, "internal"));
}

TEST_CASE("onnx: initializers in every encoding, and external data beside the model", "[onnx]") {
  const fs::path dir = fs::temp_directory_path() / ("gexec_onnx_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<float> w = {1.5f, -2.0f, 0.25f, 3.0f};
  {
    std::ofstream f(dir / "w.bin", std::ios::binary);
    const float pad = 7.0f;
    f.write(reinterpret_cast<const char*>(&pad), 4);  // the data starts at offset 4
    f.write(reinterpret_cast<const char*>(w.data()), 16);
  }
  auto model = [&](int32_t type, int how) {
    OnnxBuilder b;
    b.input("x", type, {int64_t(3), int64_t(2)});
    b.output("y", type, {int64_t(3), int64_t(2)});
    if (type == kF32 && how == 2) {
      auto& t = *b.graph().add_initializer();
      t.set_name("W");
      t.set_data_type(kF32);
      t.add_dims(2);
      t.add_dims(2);
      t.set_data_location(gexec::onnx_pb::TensorProto::EXTERNAL);
      auto* e = t.add_external_data();
      e->set_key("location");
      e->set_value("w.bin");
      e = t.add_external_data();
      e->set_key("offset");
      e->set_value("4");
    } else if (type == kF32) {
      b.init_f32("W", {2, 2}, w, how == 1);
    } else {
      b.init_16("W", type, {2, 2}, w, how == 1);
    }
    b.node("MatMul", {"x", "W"}, {"y"});
    return b;
  };
  for (auto [type, how] : std::vector<std::pair<int32_t, int>>{{kF32, 0}, {kF32, 1}, {kF32, 2}, {kF16, 0}, {kF16, 1}, {kBF16, 0}, {kBF16, 1}}) {
    INFO("type " << type << ", encoding " << how);
    auto m = load(model(type, how), {}, dir.string());
    REQUIRE(m.ok());
    const Tensor& t = named(m->graph, "W");
    CHECK(logical_values(t) == std::vector<double>{1.5, -2.0, 0.25, 3.0});
    CHECK(t.dtype == (type == kF32 ? DType::f32 : type == kF16 ? DType::f16 : DType::bf16));
    if (how == 2) CHECK(m->data_files.size() == 1);
  }
  // A link in the folder is followed only to a file inside it: one to a file elsewhere is refused
  // as a path through ".." is (the data would be any file the user can read).
  const fs::path outside = fs::temp_directory_path() / ("gexec_onnx_outside_" + std::to_string(::getpid()) + ".bin");
  fs::copy_file(dir / "w.bin", outside, fs::copy_options::overwrite_existing);
  fs::create_directories(dir / "sub");
  fs::rename(dir / "w.bin", dir / "sub" / "real.bin");
  fs::create_symlink("sub/real.bin", dir / "w.bin");
  CHECK(load(model(kF32, 2), {}, dir.string()).ok());
  fs::remove(dir / "w.bin");
  fs::create_symlink(outside, dir / "w.bin");
  const auto escaped = load(model(kF32, 2), {}, dir.string());
  REQUIRE_FALSE(escaped.ok());
  CHECK(has(escaped.error().message, "external data location \"w.bin\" is a link to"));
  CHECK(has(escaped.error().message, "outside the model's folder"));
  fs::remove(outside);
  fs::remove(dir / "w.bin");
  CHECK(has(load(model(kF32, 2), {}, dir.string()).error().message, "w.bin"));
  fs::remove_all(dir);
}

TEST_CASE("onnx: an attribute before its opset, a Constant's value of another type, and a wrong input count are refused",
          "[onnx]") {
  auto relu_model = [](int64_t opset, auto add_node) {
    OnnxBuilder b(opset);
    b.input("x", kF32, {int64_t(2), int64_t(3)});
    b.output("y", kF32, {int64_t(2), int64_t(3)});
    add_node(b);
    return b;
  };
  // Attributes that later opsets added: refused where the model's opset predates them.
  CHECK(has(refusal(relu_model(13, [](OnnxBuilder& b) {
              b.init_i64("s", {2}, {2, 3});
              OnnxBuilder::attr_int(b.node("Reshape", {"x", "s"}, {"y"}), "allowzero", 0);
            })),
            "node 0 (Reshape, opset 13): attribute \"allowzero\" of Reshape is in ai.onnx from opset 14; this model imports opset 13"));
  CHECK(has(refusal(relu_model(17, [](OnnxBuilder& b) {
              auto& n = b.node("Cast", {"x"}, {"y"});
              OnnxBuilder::attr_int(n, "to", 1);
              OnnxBuilder::attr_int(n, "saturate", 1);
            })),
            "attribute \"saturate\" of Cast is in ai.onnx from opset 19; this model imports opset 17"));
  CHECK(has(refusal(relu_model(17, [](OnnxBuilder& b) {
              OnnxBuilder::attr_int(b.node("Cast", {"x"}, {"y"}), "to", 17);  // FLOAT8E4M3FN
            })),
            "a Cast from or to FLOAT8E4M3FN is in ai.onnx from opset 19; this model imports opset 17"));
  // The same attributes from their opsets on are taken.
  CHECK(load(relu_model(14, [](OnnxBuilder& b) {
          b.init_i64("s", {2}, {2, 3});
          OnnxBuilder::attr_int(b.node("Reshape", {"x", "s"}, {"y"}), "allowzero", 0);
        })).ok());
  // A Constant's value_float written as an INT: refused, not read as 0.
  CHECK(has(refusal(relu_model(17, [](OnnxBuilder& b) {
              OnnxBuilder::attr_int(b.node("Constant", {}, {"c"}), "value_float", 2);
              b.node("Mul", {"x", "c"}, {"y"});
            })),
            "node 0 (Constant, opset 17): attribute value_float is an INT; expected a FLOAT"));
  CHECK(has(refusal(relu_model(17, [](OnnxBuilder& b) {
              OnnxBuilder::attr_ints(b.node("Constant", {}, {"c"}), "value_floats", {2});
              b.node("Mul", {"x", "c"}, {"y"});
            })),
            "attribute value_floats is INTS; expected FLOATS"));
  // Inputs beyond (or short of) what the op's schema takes.
  CHECK(has(refusal(relu_model(17, [](OnnxBuilder& b) { b.node("Relu", {"x", "x"}, {"y"}); })),
            "node 0 (Relu, opset 17): Relu takes 1 input; this node has 2"));
  CHECK(has(refusal(relu_model(17, [](OnnxBuilder& b) { b.node("Add", {"x"}, {"y"}); })),
            "node 0 (Add, opset 17): Add takes 2 inputs; this node has 1"));
}

TEST_CASE("onnx: named dimensions from --dim or the data's shape; an open one is named", "[onnx]") {
  OnnxBuilder b;
  b.input("x", kF32, {std::string("n"), int64_t(4)});
  b.input("z", kF32, {std::string("n"), int64_t(4)});
  b.output("y", kF32, {std::string("n"), int64_t(4)});
  b.node("Add", {"x", "z"}, {"y"});
  CHECK(has(refusal(b), "graph input \"x\": dimension 0 \"n\" has no size; give it with --dim n=N"));
  auto m = load(b, {{{"n", 5}}, {}});
  REQUIRE(m.ok());
  CHECK(named(m->graph, "x").shape == std::vector<int64_t>{5, 4});
  CHECK(named(m->graph, "z").shape == std::vector<int64_t>{5, 4});
  onnx_import::DimOptions from_data;
  from_data.input_shape = [](size_t position, const std::string&, const std::string&) -> std::optional<std::vector<int64_t>> {
    if (position == 0) return std::vector<int64_t>{7, 4};
    return std::nullopt;
  };
  m = load(b, from_data);
  REQUIRE(m.ok());
  CHECK(named(m->graph, "z").shape == std::vector<int64_t>{7, 4});  // n bound by x's data
  from_data.dims = {{"n", 6}};
  CHECK(has(refusal(b, from_data), "dimension \"n\" is 6 (--dim) but the data given for this input has 7"));
  CHECK(has(refusal(b, {{{"m", 5}}, {}}), "--dim m=5: m.onnx has no dimension named \"m\" (it names n)"));
}

TEST_CASE("onnx: ONNX names become gexec names; the ports keep the model's", "[onnx]") {
  OnnxBuilder b;
  b.input("0", kF32, {int64_t(2)});
  b.input("a/b", kF32, {int64_t(2)});
  b.input("a_b", kF32, {int64_t(2)});
  b.output("out:0", kF32, {int64_t(2)});
  b.node("Add", {"0", "a/b"}, {"s"});
  b.node("Add", {"s", "a_b"}, {"out:0"});
  auto m = load(b);
  REQUIRE(m.ok());
  CHECK(m->graph.find_tensor("_0") != kNone);
  CHECK(m->graph.find_tensor("a_b") != kNone);
  CHECK(m->graph.find_tensor("a_b_2") != kNone);
  CHECK(m->graph.find_tensor("out:0") != kNone);
  CHECK(m->inputs[1].name == "a/b");
  CHECK(m->graph.tensor(m->inputs[1].tensor).name == "a_b");
  CHECK(m->graph.tensor(m->inputs[2].tensor).name == "a_b_2");
  CHECK(onnx_import::sanitize_name("/fc1/Gemm_output_0") == "_fc1_Gemm_output_0");
  CHECK(onnx_import::sanitize_name("") == "_");
}

TEST_CASE("onnx: every refusal names the node, its op and the opset", "[onnx]") {
  OnnxBuilder b;
  b.input("x", kF32, {int64_t(2), int64_t(3)});
  b.output("y", kF32, {int64_t(2), int64_t(3)});
  b.node("Relu", {"x"}, {"r"}, "first");
  b.node("Softmax", {"r"}, {"s"});
  b.node("LayerNormalization", {"s"}, {"y"});
  const std::string msg = refusal(b);
  CHECK(has(msg, "m.onnx: node 1 (Softmax, opset 17): op Softmax is not supported"));
  CHECK(has(msg, "m.onnx: node 2 (LayerNormalization, opset 17): op LayerNormalization is not supported"));

  OnnxBuilder w;
  w.input("x", kF32, {int64_t(2), int64_t(3)});
  w.output("y", kF32, {int64_t(2), int64_t(3)});
  w.node("Relu", {"x"}, {"y"}, "act");
  w.node("Relu", {"x"}, {"y"});
  CHECK(has(refusal(w), "node 1 (Relu, opset 17): output \"y\" is already defined"));

  OnnxBuilder none;
  none.proto().clear_opset_import();
  none.input("x", kF32, {int64_t(2)});
  none.output("y", kF32, {int64_t(2)});
  none.node("Relu", {"x"}, {"y"});
  CHECK(has(refusal(none), "node 0 (Relu, opset ?): the model imports no opset of ai.onnx"));

  CHECK(has(onnx_import::load_onnx("\x08\x07\x3a\xff\xff", "t.onnx", ".").error().message, "t.onnx: not an ONNX model"));
}

#if GEXEC_HAVE_CPU
namespace {

struct Dir {
  fs::path path;
  explicit Dir(const std::string& tag) : path(fs::temp_directory_path() / ("gexec_onnx_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

RunReport run_model(const std::string& model, const std::string& data, bool expect = true) {
  RunOptions o;
  o.graph_path = model;
  o.backend = "cpu";
  o.load_inputs_dir = data;
  if (expect) o.expect_dir = data;
  return run_graph(o);
}

}  // namespace

TEST_CASE("onnx: Gemm with alpha, beta, transB and a constant bias computes ONNX's result", "[onnx][cpu]") {
  Dir d("gemm");
  const int64_t M = 3, K = 4, N = 5;
  std::vector<float> a, bt, c;
  for (int64_t i = 0; i < M * K; ++i) a.push_back(float(i % 7) * 0.5f - 1.0f);
  for (int64_t i = 0; i < N * K; ++i) bt.push_back(float((i * 3) % 5) * 0.25f - 0.5f);
  for (int64_t j = 0; j < N; ++j) c.push_back(float(j) - 2.0f);
  const float alpha = 0.5f, beta = 2.0f;
  OnnxBuilder b;
  b.input("A", kF32, {M, K});
  b.input("B", kF32, {N, K});
  b.init_f32("C", {N}, c);
  b.output("Y", kF32, {M, N});
  auto& node = b.node("Gemm", {"A", "B", "C"}, {"Y"});
  OnnxBuilder::attr_float(node, "alpha", alpha);
  OnnxBuilder::attr_float(node, "beta", beta);
  OnnxBuilder::attr_int(node, "transB", 1);
  b.save(d / "m.onnx");
  // Y = alpha A B^T + beta C, ONNX's definition, in double.
  std::vector<float> y;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a[size_t(i * K + k)]) * bt[size_t(j * K + k)];
      y.push_back(float(alpha * s + beta * c[size_t(j)]));
    }
  // Unnamed files: matched by position.
  gexec::test::write_tensor_pb(d / "input_0.pb", "", {M, K}, a);
  gexec::test::write_tensor_pb(d / "input_1.pb", "", {N, K}, bt);
  gexec::test::write_tensor_pb(d / "output_0.pb", "", {M, N}, y);
  const RunReport r = run_model(d / "m.onnx", d.path.string());
  INFO((r.error ? r.error->message : ""));
  REQUIRE(r.result == RunReport::Result::pass);
  REQUIRE(r.loaded_inputs);
  CHECK(r.loaded_inputs->size() == 2);
  REQUIRE(r.expect);
  REQUIRE(r.expect->outputs.size() == 1);
  CHECK(r.expect->outputs[0].pass);
  CHECK(r.expect->outputs[0].max_abs < 1e-5);
  CHECK(r.graph->format == "onnx");

  // A wrong expected result fails the run (exit 1), and says where.
  y[7] += 0.5f;
  gexec::test::write_tensor_pb(d / "output_0.pb", "Y", {M, N}, y);
  const RunReport bad = run_model(d / "m.onnx", d.path.string());
  CHECK(bad.result == RunReport::Result::fail);
  CHECK(bad.exit_code() == Exit::check_failed);
  REQUIRE(bad.expect);
  CHECK(bad.expect->outputs[0].beyond == 1);
  CHECK(bad.expect->outputs[0].worst == 7);
  CHECK(bad.check->pass());
}

TEST_CASE("onnx: a rank-3 MatMul with a bias and a ReLU, inputs by name, a dimension from the data", "[onnx][cpu]") {
  Dir d("mlp");
  OnnxBuilder b = mlp();
  b.save(d / "m.onnx");
  std::vector<float> x(2 * 4 * 8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 11) - 5) * 0.25f;
  std::vector<float> y;
  for (int64_t r = 0; r < 8; ++r) {
    double h = 0;  // every hidden unit is the same: W1 is 0.125 everywhere, b1 0.5
    for (int64_t k = 0; k < 8; ++k) h += 0.125 * x[size_t(r * 8 + k)];
    h = std::max(h + 0.5, 0.0);
    for (int64_t j = 0; j < 8; ++j) y.push_back(float(16 * h * -0.25 + 1.0));
  }
  gexec::test::write_tensor_pb(d / "input_0.pb", "x", {2, 4, 8}, x);
  gexec::test::write_tensor_pb(d / "output_0.pb", "y", {2, 4, 8}, y);
  const RunReport r = run_model(d / "m.onnx", d.path.string());
  INFO((r.error ? r.error->message : ""));
  REQUIRE(r.result == RunReport::Result::pass);
  CHECK(r.expect->outputs[0].pass);
  // The fused run: one GEMM_BIAS_ACT per Linear.
  int gemms = 0;
  for (const KernelChoice& k : *r.kernels) gemms += k.type == "GEMM_BIAS_ACT";
  CHECK(gemms == 2);
}
#else
GEXEC_SKIPPED_TEST("onnx: runs on the CPU backend", "[onnx][cpu]", GEXEC_NO_CPU_BACKEND)
#endif

#else
GEXEC_SKIPPED_TEST("onnx: the ONNX front end", "[onnx]", "this build has no ONNX input (see the configure summary)")
#endif

#if GEXEC_HAVE_ONNX
TEST_CASE("onnx: Sub, Div, Sigmoid, Tanh, Erf, Pow and scalar constants become gexec's ops", "[onnx]") {
  const std::vector<gexec::test::Dim> shape = {int64_t(2), int64_t(3)};
  // One node over x [2,3] and, where given, a second operand: a computed y, or a constant.
  auto model = [&](const std::string& op, int operand, std::vector<int64_t> c_dims = {}, float c = 3.0f) {
    OnnxBuilder b;
    b.input("x", kF32, shape);
    b.output("z", kF32, shape);
    if (operand == 0) {
      b.node(op, {"x"}, {"z"});
    } else if (operand == 1) {
      b.input("y", kF32, shape);
      b.node(op, {"x", "y"}, {"z"});
    } else {
      int64_t n = 1;
      for (int64_t d : c_dims) n *= d;
      b.init_f32("c", c_dims, std::vector<float>(size_t(n), c));
      b.node(op, operand == 2 ? std::vector<std::string>{"x", "c"} : std::vector<std::string>{"c", "x"}, {"z"});
    }
    return b;
  };
  auto ops = [](const OnnxBuilder& b) {
    auto m = load(b);
    INFO((m.ok() ? std::string() : m.error().message));
    REQUIRE(m.ok());
    return m->graph.ops;
  };
  for (auto [name, type] : {std::pair{"Sigmoid", OpType::SIGMOID}, {"Tanh", OpType::TANH}, {"Erf", OpType::ERF}}) {
    INFO(name);
    const auto o = ops(model(name, 0));
    REQUIRE(o.size() == 1);
    CHECK(o[0].type == type);
    CHECK_FALSE(o[0].attrs.constant);
  }
  for (auto [name, type] : {std::pair{"Sub", OpType::SUB}, {"Div", OpType::DIV}}) {
    INFO(name);
    const auto o = ops(model(name, 1));
    REQUIRE(o.size() == 1);
    CHECK(o[0].type == type);
    CHECK(o[0].inputs.size() == 2);
  }
  // x op c for a constant of one element, of any rank up to x's: one input and `scalar`.
  for (auto [name, type] : {std::pair{"Add", OpType::ADD}, {"Sub", OpType::SUB}, {"Mul", OpType::MUL}, {"Div", OpType::DIV}})
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, {1}, {1, 1}}) {
      INFO(name << " rank " << dims.size());
      const auto o = ops(model(name, 2, dims, 0.1f));
      REQUIRE(o.size() == 1);
      CHECK(o[0].type == type);
      CHECK(o[0].inputs.size() == 1);
      CHECK(o[0].attrs.constant == double(0.1f));
    }
  // c + x and c * x commute; c - x is -1 * x + c; c / x is refused.
  CHECK(ops(model("Add", 3)).size() == 1);
  CHECK(ops(model("Mul", 3))[0].attrs.constant == 3.0);
  const auto sub = ops(model("Sub", 3));
  REQUIRE(sub.size() == 2);
  CHECK(sub[0].type == OpType::MUL);
  CHECK(sub[0].attrs.constant == -1.0);
  CHECK(sub[1].type == OpType::ADD);
  CHECK(sub[1].attrs.constant == 3.0);
  CHECK(has(refusal(model("Div", 3)), "node 0 (Div, opset 17): A \"c\" is a constant scalar and B \"x\" is not"));
  // Pow by a constant exponent (here of type INT64); a computed one or one of several values is refused.
  {
    OnnxBuilder b;
    b.input("x", kF32, shape);
    b.output("z", kF32, shape);
    b.init_i64("p", {}, {2});
    b.node("Pow", {"x", "p"}, {"z"});
    const auto o = ops(b);
    REQUIRE(o.size() == 1);
    CHECK(o[0].type == OpType::POW);
    CHECK(o[0].attrs.constant == 2.0);
  }
  CHECK(has(refusal(model("Pow", 1)), "node 0 (Pow, opset 17): Y \"y\" [2,3] is computed; gexec's POW takes a constant exponent"));
  CHECK(has(refusal(model("Pow", 2, {3})), "Y \"c\" [3] has more than one element"));
  // A Sub of a constant vector that broadcasts: expanded to x's shape, as for Mul.
  const auto expanded = ops(model("Sub", 2, {3}));
  REQUIRE(expanded.size() == 1);
  CHECK(expanded[0].type == OpType::SUB);
  CHECK(expanded[0].inputs.size() == 2);
}

TEST_CASE("onnx: a chain of the new ops maps one op per node (c - x: two)", "[onnx]") {
  // z = 1 - (sigmoid(x) - tanh(x) / 2 + erf(x))^2: every new op, scalars on either side.
  OnnxBuilder b;
  b.input("x", kF32, {int64_t(2), int64_t(3)});
  b.output("z", kF32, {int64_t(2), int64_t(3)});
  b.init_f32("two", {}, {2.0f});
  b.init_f32("one", {1}, {1.0f});
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Tanh", {"x"}, {"t"});
  b.node("Div", {"t", "two"}, {"t2"});
  b.node("Sub", {"s", "t2"}, {"d"});
  b.node("Erf", {"x"}, {"e"});
  b.node("Add", {"d", "e"}, {"a"});
  b.node("Pow", {"a", "two"}, {"p"});
  b.node("Sub", {"one", "p"}, {"z"});
  auto m = load(b);
  INFO((m.ok() ? std::string() : m.error().message));
  REQUIRE(m.ok());
  CHECK(m->graph.ops.size() == 9);  // c - x is two ops
}
#endif
