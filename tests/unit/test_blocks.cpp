// Transformer-block pieces: MUL, SILU, the residual of GEMM_BIAS_ACT and FUSED_ELEMENTWISE groups,
// through the loader and printer, the reference, the passes, the selection, and (with the CPU
// backend) the runs. Each kernel's own cases are in the backend-ops harness (tests/backend_ops.hpp).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/backends/cuda/fused_program.hpp"
#include "../../src/verify/ref_math.hpp"
#include "catch.hpp"
#include "temp_dir.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/reference.hpp"
#include "graph_builder.hpp"
#include "process.hpp"

using namespace gexec;
using test::Builder;
using test::has;

namespace {

Graph load_ok(const std::string& path) {
  auto g = load_graph_file(path);
  INFO(path << ": " << (g.ok() ? std::string() : g.error().message));
  REQUIRE(g.ok());
  return std::move(g).value();
}

Graph after_default_pipeline(Graph g) {
  PipelineOptions opts;
  opts.passes = default_pipeline();
  std::ostringstream sink;
  auto r = run_pipeline(g, opts, sink);
  INFO((r.ok() ? std::string() : r.error().message));
  REQUIRE(r.ok());
  return g;
}

int count(const Graph& g, OpType t) {
  int n = 0;
  for (const Op& op : g.ops) n += op.type == t;
  return n;
}

using test::inputs_of;

// A folder of the process's own, removed when the tests end.
std::string temp_dir(const std::string& tag) {
  static const gexec::test::TempDir root("blocks");
  auto dir = root.path / tag;
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A chain over [8, 24] values: t0 = X + Y (f32), t1 = silu(t0) (bf16), t2 = t1 * Z (f16),
// t3 = bias_add(t2, b) (f32), out = gelu_erf(t3) (f16); t1 is also a graph output.
Graph mixed_chain() {
  Builder b;
  b.g.name = "mixed_chain";
  const auto x = b.tensor("X", {8, 24}, DType::f16), y = b.tensor("Y", {8, 24}, DType::bf16);
  const auto z = b.tensor("Z", {8, 24}, DType::f32), bias = b.tensor("b", {24}, DType::f16);
  const auto t0 = b.tensor("t0", {8, 24}, DType::f32), t1 = b.tensor("t1", {8, 24}, DType::bf16);
  const auto t2 = b.tensor("t2", {8, 24}, DType::f16), t3 = b.tensor("t3", {8, 24}, DType::f32);
  const auto out = b.tensor("out", {8, 24}, DType::f16);
  b.op(OpType::ADD, {x, y}, t0);
  b.op(OpType::SILU, {t0}, t1);
  b.op(OpType::MUL, {t1, z}, t2);
  b.op(OpType::BIAS_ADD, {t2, bias}, t3);
  b.op(OpType::GELU, {t3}, out).attrs.approximate = GeluApprox::none;
  b.g.outputs = {out, t1};
  return b.g;
}

}  // namespace

TEST_CASE("blocks: a FUSED_ELEMENTWISE group computes the bits of the ops it replaces", "[blocks]") {
  const Graph original = mixed_chain();
  REQUIRE(verify(original).empty());
  Graph grouped = original;
  std::ostringstream sink;
  PipelineOptions opts;
  opts.passes = {"group_elementwise"};
  auto rec = run_pipeline(grouped, opts, sink);
  REQUIRE(rec.ok());
  REQUIRE(grouped.ops.size() == 1);
  const Op& f = grouped.ops[0];
  REQUIRE(f.type == OpType::FUSED_ELEMENTWISE);
  CHECK(f.attrs.steps.size() == 5);
  CHECK(f.outputs.size() == 2);  // out, and t1, a graph output
  CHECK(f.inputs.size() == 4);   // X, Y, Z, b
  CHECK(f.attrs.steps[1].dtype == DType::bf16);  // each step keeps its tensor's dtype
  CHECK(f.attrs.steps[4].approximate == GeluApprox::none);

  const auto in = inputs_of(original, 7);
  auto a = run_reference(original, in);
  auto b = run_reference(grouped, in);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (const char* name : {"out", "t1"}) {
    INFO(name);
    CHECK(a->at(name).value == b->at(name).value);
    CHECK(a->at(name).scale == b->at(name).scale);
  }
  // Rounding the bf16 step to f32 instead changes the values: the steps' dtypes are what it reads.
  Graph wrong = grouped;
  wrong.ops[0].attrs.steps[1].dtype = DType::f32;
  wrong.tensor(wrong.find_tensor("t1")).dtype = DType::f32;  // the output holding that step
  auto w = run_reference(wrong, in);
  REQUIRE(w.ok());
  CHECK(w->at("out").value != a->at("out").value);
}

TEST_CASE("blocks: FUSED_ELEMENTWISE saves, loads and prints as it was", "[blocks]") {
  Graph g = mixed_chain();
  PipelineOptions opts;
  opts.passes = {"group_elementwise"};
  std::ostringstream sink;
  REQUIRE(run_pipeline(g, opts, sink).ok());
  const std::string dir = temp_dir("save");
  const std::string path = dir + "/grouped.json";
  REQUIRE(save_graph_file(g, path).ok());
  Graph back = load_ok(path);
  CHECK(back.ops == g.ops);
  CHECK(has(print_graph(back), "steps=[%4=ADD(%0, %1)f32; %5=SILU(%4)bf16"));
  CHECK(has(print_graph(back), "results=[%5, %8]"));  // t1 and out, in the order of their steps
}

TEST_CASE("blocks: the residual is added inside the activation, times beta", "[blocks]") {
  // C = relu(A B + beta R + bias) with A B = 3: relu(3 - 5 + 1) = 0, not relu(3 + 1) - 5.
  Builder b;
  auto a = b.tensor("A", {1, 2}), w = b.tensor("B", {2, 1}), bias = b.tensor("bias", {1});
  auto r = b.tensor("R", {1, 1}), c = b.tensor("C", {1, 1});
  Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, w, bias, r}, c);
  op.attrs.residual = true;
  op.attrs.act = Act::relu;
  b.g.outputs = {c};
  REQUIRE(verify(b.g).empty());
  auto f32 = [](std::vector<float> v) {
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
  };
  std::map<std::string, std::vector<uint8_t>> in = {
      {"A", f32({1, 2})}, {"B", f32({1, 1})}, {"bias", f32({1})}, {"R", f32({-5})}};
  auto ref = run_reference(b.g, in);
  REQUIRE(ref.ok());
  CHECK(ref->at("C").value[0] == 0.0);
  b.g.ops[0].attrs.beta = -2.0;  // 3 + 10 + 1
  ref = run_reference(b.g, in);
  REQUIRE(ref.ok());
  CHECK(ref->at("C").value[0] == 14.0);
  CHECK(ref->at("C").scale[0] == 3.0 + 2.0 * 5.0 + 1.0);
  // The sampled reference agrees, element for element.
  auto sampled = run_reference_sampled(b.g, in, 1, 1);
  REQUIRE(sampled.ok());
  CHECK(sampled->at("C").ref.value[0] == 14.0);

  // An f32 R with an f16 C: cuBLASLt rounds R to f16 before reading it as C, which the bound
  // allows for (the variance of one rounding of beta R), in both references alike.
  b.g.tensor(c).dtype = DType::f16;
  auto f16_c = run_reference(b.g, in);
  REQUIRE(f16_c.ok());
  b.g.tensor(r).dtype = DType::f16;
  std::map<std::string, std::vector<uint8_t>> in16 = in;
  in16["R"] = {0x00, 0xC5};  // -5 in f16
  auto f16_r = run_reference(b.g, in16);
  REQUIRE(f16_r.ok());
  CHECK(f16_c->at("C").value[0] == f16_r->at("C").value[0]);
  CHECK(f16_c->at("C").var[0] > f16_r->at("C").var[0]);
  b.g.tensor(r).dtype = DType::f32;
  auto sampled16 = run_reference_sampled(b.g, in, 1, 1);
  REQUIRE(sampled16.ok());
  CHECK(sampled16->at("C").ref.var[0] == f16_c->at("C").var[0]);
}

TEST_CASE("blocks: the block graphs fuse as intended", "[blocks]") {
  const Graph gpt = after_default_pipeline(load_ok(test::source_path("graphs/gpt_mlp_block.json")));
  CHECK(gpt.ops.size() == 2);
  REQUIRE(count(gpt, OpType::GEMM_BIAS_ACT) == 2);
  CHECK(gpt.ops[0].attrs.act == Act::gelu);
  CHECK(!gpt.ops[0].attrs.residual);
  CHECK(gpt.ops[1].attrs.residual);
  CHECK(gpt.ops[1].inputs.size() == 4);

  const Graph llama = after_default_pipeline(load_ok(test::source_path("graphs/llama_mlp_block.json")));
  CHECK(llama.ops.size() == 4);
  CHECK(count(llama, OpType::MATMUL) == 2);  // gate and up
  CHECK(count(llama, OpType::FUSED_ELEMENTWISE) == 1);  // silu(gate) * up
  REQUIRE(count(llama, OpType::GEMM_BIAS_ACT) == 1);  // down + residual
  CHECK(llama.ops.back().attrs.residual);
}

TEST_CASE("blocks: the sampled reference of a group equals the full one", "[blocks]") {
  const Graph g = after_default_pipeline(mixed_chain());
  const auto in = inputs_of(g, 3);
  auto full = run_reference(g, in);
  auto sampled = run_reference_sampled(g, in, 40, 9);
  REQUIRE(full.ok());
  REQUIRE(sampled.ok());
  for (const auto& [name, s] : *sampled) {
    for (size_t k = 0; k < s.index.size(); ++k) {
      CHECK(s.ref.value[k] == full->at(name).value[size_t(s.index[k])]);
      CHECK(s.ref.scale[k] == full->at(name).scale[size_t(s.index[k])]);
    }
  }
}

TEST_CASE("blocks: measured costs make fuse_residual keep the unfused plan, and it says so", "[blocks]") {
  const std::string dir = temp_dir("costs");
  const std::string graph = test::source_path("tests/golden/fuse_residual/plain.json");
  std::ofstream(dir + "/slower.tsv") << "# M N K DTYPE FUSED_US UNFUSED_US\n16 8 32 f16 12.5 10.0\n";
  std::ofstream(dir + "/faster.tsv") << "16 8 32 f16 9.0 10.0\n8 8 8 f16 99 1\n";
  auto with_costs = [&](const std::string& table) {
    auto r = test::run_gexec("run '" + graph + "' --dry-run --backend cpu" +
                             (table.empty() ? std::string() : " --residual-costs '" + table + "'"));
    CHECK(r.status == 0);
    return r.output;
  };
  const std::string slower = with_costs(dir + "/slower.tsv");
  INFO(slower);
  CHECK(has(slower, "not fused: measured 12.5 us fused through C against 10 us"));
  CHECK(has(slower, "op add = ADD(P, R) -> Y"));
  const std::string faster = with_costs(dir + "/faster.tsv");
  INFO(faster);
  CHECK(has(faster, "fused into mm as cuBLASLt's C (measured 9 us fused through C against 10 us"));
  // Without a table: fused, since it saves a read and a write of C.
  const std::string none = with_costs("");
  INFO(none);
  CHECK(has(none, "no measurement for this shape"));
  CHECK(has(none, "residual=true"));
}

TEST_CASE("blocks: a residual cost table that cannot be read or parsed is refused", "[blocks]") {
  const std::string dir = temp_dir("badcosts");
  const std::string graph = test::source_path("tests/golden/fuse_residual/plain.json");
  std::ofstream(dir + "/bad.tsv") << "# fine\n16 8 32 f16 12.5 10.0\n16 8 f16 1 2\n";
  std::ofstream(dir + "/dtype.tsv") << "16 8 32 f64 1 2\n";
  auto bad = test::run_gexec("run '" + graph + "' --dry-run --backend cpu --residual-costs '" + dir + "/bad.tsv'");
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(has(bad.output, "bad.tsv:3: expected \"M N K DTYPE FUSED_US UNFUSED_US\""));
  auto dtype = test::run_gexec("run '" + graph + "' --dry-run --backend cpu --residual-costs '" + dir + "/dtype.tsv'");
  CHECK(dtype.status == 2);
  CHECK(has(dtype.output, "dtype.tsv:1:"));
  auto missing = test::run_gexec("run '" + graph + "' --dry-run --backend cpu --residual-costs '" + dir + "/none.tsv'");
  CHECK(missing.status == 2);
  CHECK(has(missing.output, "none.tsv: cannot read the file"));
}

#if GEXEC_HAVE_CPU
TEST_CASE("blocks: the block graphs and their emitted forms pass on the CPU backend", "[blocks][cpu]") {
  const std::string dir = temp_dir("emit");
  for (const char* name : {"gpt_mlp_block", "llama_mlp_block"}) {
    const std::string graph = test::source_path(std::string("graphs/") + name + ".json");
    const std::string emitted = dir + "/" + name + ".emitted.json";
    auto r = test::run_gexec("run '" + graph + "' --backend cpu --emit-graph '" + emitted + "'");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(has(r.output, "fuse_residual: op residual"));
    // The emitted graph, fused, loads and passes against its own reference, with no pass run.
    auto e = test::run_gexec("run '" + emitted + "' --backend cpu --passes none");
    INFO(e.output);
    CHECK(e.status == 0);
    const Graph back = load_ok(emitted);
    CHECK(count(back, OpType::GEMM_BIAS_ACT) >= 1);
  }
}

TEST_CASE("blocks: MUL, SILU, residual products and groups run on the CPU in every dtype", "[blocks][cpu]") {
  const std::string dir = temp_dir("cpu");
  int ran = 0;
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    for (bool fuse : {false, true}) {
      Builder b;
      b.g.name = "pieces";
      auto x = b.tensor("x", {24, 40}, dt), w = b.tensor("w", {40, 16}, dt), bias = b.tensor("bias", {16}, DType::f32);
      auto r = b.tensor("r", {24, 16}, dt, Layout::colmajor);
      auto y = b.tensor("y", {24, 16}, dt);
      Op& gemm = b.op(OpType::GEMM_BIAS_ACT, {x, w, bias, r}, y);
      gemm.attrs.residual = true;
      gemm.attrs.beta = 0.5;
      gemm.attrs.act = Act::gelu;
      auto s = b.tensor("s", {24, 16}, dt), m = b.tensor("m", {24, 16}, DType::f32), z = b.tensor("z", {24, 16}, dt);
      b.op(OpType::SILU, {y}, s);
      b.op(OpType::MUL, {s, y}, m);
      b.op(OpType::CAST, {m}, z);
      b.g.outputs = {z, s};
      REQUIRE(verify(b.g).empty());
      const std::string path = dir + "/pieces_" + std::string(dtype_name(dt)) + (fuse ? "_fused" : "") + ".json";
      REQUIRE(save_graph_file(b.g, path).ok());
      auto out = test::run_gexec("run '" + path + "' --backend cpu" + std::string(fuse ? "" : " --passes none"));
      INFO(path << "\n" << out.output);
      CHECK(out.status == 0);
      CHECK(has(out.output, fuse ? "FUSED_ELEMENTWISE" : "cpu.silu"));
      ++ran;
    }
  }
  CHECK(ran == 6);
}
#endif

// The CUDA group kernel's register-slot program, run on the host: each instruction as the kernel
// executes it, on one element, must give every output the reference's value.
TEST_CASE("blocks: the CUDA group program keeps every value in its slot until its last reader", "[blocks]") {
  using namespace gexec::cuda;
  auto check = [](const Graph& grouped, int expect_loads_first) {
    const Op& f = grouped.ops[0];
    REQUIRE(f.type == OpType::FUSED_ELEMENTWISE);
    const FusedProgram prog = plan_fused_program(f.attrs, int(f.inputs.size()));
    INFO(prog.error);
    REQUIRE(prog.error.empty());
    int leading_loads = 0;
    while (leading_loads < int(prog.code.size()) && prog.code[size_t(leading_loads)].kind == FusedKind::load) ++leading_loads;
    CHECK(leading_loads == expect_loads_first);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<ref::Elem> vals;
      std::vector<DType> dtypes;
      for (size_t i = 0; i < f.inputs.size(); ++i) {
        vals.push_back({0.37 * double(trial) - 3.1 + 0.9 * double(i), 1.0});
        dtypes.push_back(DType::f32);
      }
      std::vector<ref::Elem> want = vals;
      ref::group_values(f.attrs, want, dtypes, 0);
      double slot[kFusedSlots] = {};
      std::vector<double> out(f.outputs.size(), std::nan(""));
      for (const FusedInstr& in : prog.code) {
        REQUIRE(in.c < kFusedSlots + kGroupMaxOutputs);
        if (in.kind == FusedKind::load) slot[in.c] = vals[in.a].value;
        if (in.kind == FusedKind::store) out[in.c] = slot[in.a];
        // The constant (a scalar second operand, POW's exponent) is the instruction's k.
        const bool k = in.scalar || OpType(in.op) == OpType::POW;
        if (in.kind == FusedKind::op)
          slot[in.c] = ref::elementwise(OpType(in.op), in.erf ? GeluApprox::none : GeluApprox::tanh, DType(in.dtype),
                                        DType::f32, DType::f32, {slot[in.a], 0}, {k ? double(in.k) : slot[in.b], 0}, 0)
                           .value;
      }
      for (size_t o = 0; o < out.size(); ++o) CHECK(out[o] == want[size_t(f.attrs.results[o])].value);
    }
  };
  Graph chain = mixed_chain();
  PipelineOptions opts;
  opts.passes = {"group_elementwise"};
  std::ostringstream sink;
  REQUIRE(run_pipeline(chain, opts, sink).ok());
  check(chain, 4);  // X, Y, Z, b all loaded first

  // Seven inputs summed pairwise, one output: too many to load first, loaded as needed.
  Builder b;
  std::vector<TensorId> in;
  for (int i = 0; i < 7; ++i) in.push_back(b.tensor(std::string{'i', char('0' + i)}, {4, 8}, DType::f32));
  TensorId acc = in[0];
  for (int i = 1; i < 7; ++i) {
    const TensorId t = b.tensor(std::string{'s', char('0' + i)}, {4, 8}, i % 2 ? DType::f16 : DType::f32);
    b.op(i % 3 ? OpType::ADD : OpType::MUL, {acc, in[size_t(i)]}, t);
    acc = t;
  }
  b.g.outputs = {acc};
  REQUIRE(run_pipeline(b.g, opts, sink).ok());
  REQUIRE(b.g.ops.size() == 1);
  check(b.g, 2);  // the first step's two inputs, then each input before its reader

  // Constants: a scalar divisor and subtrahend, an exponent, each carried in the instruction.
  Builder c;
  const TensorId x = c.tensor("x", {4, 8}, DType::f32), y = c.tensor("y", {4, 8}, DType::f32);
  std::vector<TensorId> t;
  for (int i = 0; i < 4; ++i) t.push_back(c.tensor(std::string{'t', char('0' + i)}, {4, 8}, DType::f32));
  c.op(OpType::DIV, {x}, t[0]).attrs.constant = 0.1;
  c.op(OpType::POW, {t[0]}, t[1]).attrs.constant = 3.0;
  c.op(OpType::SUB, {t[1], y}, t[2]);
  c.op(OpType::SUB, {t[2]}, t[3]).attrs.constant = -2.5;
  c.g.outputs = {t[3]};
  REQUIRE(run_pipeline(c.g, opts, sink).ok());
  REQUIRE(c.g.ops.size() == 1);
  check(c.g, 2);
}

// What the cuBLASLt declaration says about a residual, read from the selection for a GPU (no GPU
// needed): R as C times beta, converted when its dtype is not D's, refused when stored otherwise
// than C, and not padded where the rows are misaligned.
TEST_CASE("blocks: the cuBLASLt residual's notes and refusals, from the selection", "[blocks]") {
  auto residual_graph = [](DType r_t, Layout r_layout, int64_t n) {
    Builder b;
    auto a = b.tensor("A", {64, 48}, DType::f16), w = b.tensor("B", {48, n}, DType::f16);
    auto bias = b.tensor("bias", {n}, DType::f16);
    auto r = b.tensor("R", {64, n}, r_t, r_layout), c = b.tensor("C", {64, n}, DType::f16);
    Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, w, bias, r}, c);
    op.attrs.residual = true;
    op.attrs.beta = 0.5;
    op.attrs.act = Act::relu;
    b.g.outputs = {c};
    REQUIRE(verify(b.g).empty());
    return b.g;
  };
  auto notes = [](const OpChoice& c) {
    std::string all;
    for (const std::string& n : c.notes) all += n + "\n";
    return all;
  };
  DeviceCaps caps;
  caps.cc = 90;
  {
    const Graph g = residual_graph(DType::f16, Layout::rowmajor, 40);
    auto sel = select_kernels(g, caps, Backend::cuda);
    REQUIRE(sel.ok());
    REQUIRE(sel->ops[0].kernel);
    CHECK(sel->ops[0].kernel->name == "cublaslt.gemm_bias_act");
    INFO(notes(sel->ops[0]));
    CHECK(has(notes(sel->ops[0]), "residual R read as cuBLASLt's C with beta 0.5"));
    CHECK_FALSE(has(notes(sel->ops[0]), "converted from"));
  }
  {
    const Graph g = residual_graph(DType::f32, Layout::rowmajor, 40);
    auto sel = select_kernels(g, caps, Backend::cuda);
    REQUIRE(sel.ok());
    INFO(notes(sel->ops[0]));
    CHECK(has(notes(sel->ops[0]), "converted from f32 to f16 into D in every run"));
  }
  {
    const Graph g = residual_graph(DType::f16, Layout::colmajor, 40);
    auto sel = select_kernels(g, caps, Backend::cuda);
    REQUIRE_FALSE(sel.ok());
    CHECK(has(sel.error().message, "cuBLASLt reads R as its C, which must be stored like D"));
  }
  {
    const Graph g = residual_graph(DType::f16, Layout::rowmajor, 41);  // rows of 82 bytes
    auto sel = select_kernels(g, caps, Backend::cuda, KernelOptions{PadPolicy::always});
    REQUIRE(sel.ok());
    INFO(notes(sel->ops[0]));
    CHECK(has(notes(sel->ops[0]), "a residual read as C is not padded"));
  }
}
