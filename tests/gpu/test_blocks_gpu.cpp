// GPU tests of the transformer-block kernels: cuBLASLt with a residual as C (every dtype, R of
// another dtype, colmajor C through the bias tail), the FUSED_ELEMENTWISE kernel (vector path,
// ragged tail, bias inputs, several outputs), MUL and SILU, each run by gexec against its reference.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "unit/graph_builder.hpp"
#include "unit/process.hpp"

using namespace gexec;
using test::Builder;
using test::has;

namespace {

std::string temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("gexec_blocks_gpu_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Runs the graph with gexec on the GPU; returns its output after checking it passed.
std::string run_passing(const Graph& g, const std::string& extra = "") {
  static const std::string dir = temp_dir();
  const std::string path = dir + "/" + g.name + ".json";
  REQUIRE(save_graph_file(g, path).ok());
  auto r = test::run_gexec("-v run '" + path + "' --backend cuda " + extra);
  INFO(path << "\n" << r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "pass"));
  return r.output;
}

}  // namespace

TEST_CASE("gpu blocks: cuBLASLt adds the residual as C, in every dtype and beta", "[gpu][blocks]") {
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    for (DType rt : {dt, DType::f32}) {
      for (Act act : {Act::none, Act::relu, Act::gelu}) {
        Builder b;
        b.g.name = "residual_" + std::string(dtype_name(dt)) + "_r" + std::string(dtype_name(rt)) + "_" +
                   std::string(act_name(act));
        auto a = b.tensor("A", {96, 64}, dt), w = b.tensor("B", {64, 80}, dt), bias = b.tensor("bias", {80}, dt);
        auto r = b.tensor("R", {96, 80}, rt), c = b.tensor("C", {96, 80}, dt);
        Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, w, bias, r}, c);
        op.attrs.residual = true;
        op.attrs.beta = act == Act::relu ? -0.75 : 1.0;
        op.attrs.act = act;
        b.g.outputs = {c};
        const std::string out = run_passing(b.g);
        CHECK(has(out, "cuBLASLt's C"));
        if (rt != dt && dt != DType::f32) CHECK(has(out, "converted from"));
      }
    }
  }
}

TEST_CASE("gpu blocks: a colmajor C with a residual takes the bias tail after C", "[gpu][blocks]") {
  Builder b;
  b.g.name = "residual_colmajor";
  auto a = b.tensor("A", {64, 48}, DType::f16), w = b.tensor("B", {48, 40}, DType::f16);
  auto bias = b.tensor("bias", {40}, DType::f16);
  auto r = b.tensor("R", {64, 40}, DType::f16, Layout::colmajor), c = b.tensor("C", {64, 40}, DType::f16, Layout::colmajor);
  Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, w, bias, r}, c);
  op.attrs.residual = true;
  op.attrs.act = Act::relu;
  b.g.outputs = {c};
  run_passing(b.g);
}

TEST_CASE("gpu blocks: the fused group kernel, vectorised and ragged, with biases and two outputs", "[gpu][blocks]") {
  for (int64_t cols : {int64_t(4096), int64_t(1001)}) {  // 1001: no 8-element chunks line up with rows
    for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
      Builder b;
      b.g.name = "group_" + std::to_string(cols) + "_" + std::string(dtype_name(dt));
      auto x = b.tensor("x", {33, cols}, dt), y = b.tensor("y", {33, cols}, DType::f16);
      auto bias = b.tensor("b", {cols}, DType::f32);
      auto t0 = b.tensor("t0", {33, cols}, DType::f32), t1 = b.tensor("t1", {33, cols}, dt);
      auto t2 = b.tensor("t2", {33, cols}, DType::bf16), out = b.tensor("out", {33, cols}, dt);
      b.op(OpType::ADD, {x, y}, t0);
      b.op(OpType::SILU, {t0}, t1);
      b.op(OpType::BIAS_ADD, {t1, bias}, t2);
      b.op(OpType::GELU, {t2}, out).attrs.approximate = GeluApprox::none;
      b.g.outputs = {out, t1};
      const std::string o = run_passing(b.g);
      CHECK(has(o, "cuda.fused_elementwise"));
      run_passing(b.g, "--passes none");  // each op on its own: SILU through the same family
    }
  }
}

TEST_CASE("gpu blocks: MUL and SILU as ops of their own", "[gpu][blocks]") {
  Builder b;
  b.g.name = "mul_silu";
  auto x = b.tensor("x", {17, 23}, DType::bf16), y = b.tensor("y", {17, 23}, DType::f16);
  auto m = b.tensor("m", {17, 23}, DType::f32), s = b.tensor("s", {17, 23}, DType::f16);
  b.op(OpType::MUL, {x, y}, m);
  b.op(OpType::SILU, {m}, s);
  b.g.outputs = {s, m};
  const std::string o = run_passing(b.g, "--passes none");
  CHECK(has(o, "cuda.mul"));
  CHECK(has(o, "cuda.silu"));
}

TEST_CASE("gpu blocks: the block graphs pass, tuned too", "[gpu][blocks]") {
  for (const char* name : {"gpt_mlp_block", "llama_mlp_block"}) {
    const std::string graph = test::source_path(std::string("graphs/") + name + ".json");
    for (const char* extra : {"", " --autotune --iters 3"}) {
      auto r = test::run_gexec("run '" + graph + "' --backend cuda" + std::string(extra));
      INFO(r.output);
      CHECK(r.status == 0);
    }
  }
}
