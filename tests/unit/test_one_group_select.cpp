// The one-group GEMM's selection end to end, without a GPU: the dry-run of an f16 product with an
// activation cuBLASLt has no epilogue for takes gexec's grouped kernel as one group where the rows
// are as many as measured faster (one_group_caps.cpp), cuBLASLt and its tail kernel otherwise,
// with the reason; --kernel forces it; the CPU backend runs the erf GELU epilogue against the
// reference.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "process.hpp"

using gexec::test::has;
using gexec::test::run_gexec;

namespace {

// MATMUL -> BIAS_ADD -> GELU (erf) or SILU, M x N x K f16, B [K,N] constant (as an ONNX MatMul
// exports nn.Linear) or an input [N,K] with trans_b.
std::string act_graph(int m, int n, int k, const std::string& act, bool constant_kn) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("gexec_one_group_" + std::to_string(m) + "_" + act + (constant_kn ? "_c" : "_t") + "_" +
                     std::to_string(getpid()) + ".json");
  const std::string b = constant_kn ? "[" + std::to_string(k) + ", " + std::to_string(n) + "]"
                                    : "[" + std::to_string(n) + ", " + std::to_string(k) + "]";
  const std::string act_op = act == "silu" ? R"({"op_type": "SILU", "name": "act", "inputs": ["hb"], "outputs": ["y"]})"
                                           : R"({"op_type": "GELU", "name": "act", "inputs": ["hb"], "outputs": ["y"],
                                                  "attrs": {"approximate": ")" + act + R"("}})";
  std::ofstream(path) << R"({"format": "gexec.graph", "version": 1, "name": "one_group", "tensors": [
    {"name": "x", "shape": [)" << m << ", " << k << R"(], "dtype": "f16"},
    {"name": "W", "shape": )" << b << R"(, "dtype": "f16", "constant": )" << (constant_kn ? "true" : "false") << R"(},
    {"name": "b", "shape": [)" << n << R"(], "dtype": "f16", "constant": true},
    {"name": "h", "shape": [)" << m << ", " << n << R"(], "dtype": "f16"},
    {"name": "hb", "shape": [)" << m << ", " << n << R"(], "dtype": "f16"},
    {"name": "y", "shape": [)" << m << ", " << n << R"(], "dtype": "f16"}],
  "ops": [{"op_type": "MATMUL", "name": "fc", "inputs": ["x", "W"], "outputs": ["h"],
           "attrs": {"trans_b": )" << (constant_kn ? "false" : "true") << R"(}},
          {"op_type": "BIAS_ADD", "name": "bias", "inputs": ["h", "b"], "outputs": ["hb"]},
          )" << act_op << R"(],
  "outputs": ["y"]})";
  return path.string();
}

}  // namespace

TEST_CASE("dry-run: an erf GELU or SiLU epilogue on the one-group GEMM where measured faster, else cuBLASLt with a tail",
          "[cli][one-group]") {
  const auto bert = run_gexec("run " + act_graph(4096, 16384, 4096, "none", true) + " --dry-run --arch sm_90");
  INFO(bert.output);
  CHECK(bert.status == 0);
  CHECK(has(bert.output, "op fc = GEMM_BIAS_ACT(x, W, b) -> y {act=gelu_erf"));
  CHECK(has(bert.output, "fc (GEMM_BIAS_ACT) -> cuda.gemm_one_group"));
  CHECK(has(bert.output, "B [K,N] is a constant: copied transposed into [N,K] once, before the runs (128 MiB more)"));

  const auto small = run_gexec("run " + act_graph(2048, 16384, 4096, "none", true) + " --dry-run --arch sm_90");
  INFO(small.output);
  CHECK(has(small.output, "fc (GEMM_BIAS_ACT) -> cublaslt.gemm_bias_act"));
  CHECK(has(small.output, "erf GELU: cuBLASLt's GELU epilogue is the tanh form; a separate kernel applies the bias "
                          "and the activation after the product"));
  CHECK(has(small.output, "rejected cuda.gemm_one_group: M = 2048 is below 4096 rows"));

  const auto silu = run_gexec("run " + act_graph(1024, 4096, 4096, "silu", false) + " --dry-run --arch sm_90");
  INFO(silu.output);
  CHECK(has(silu.output, "fc (GEMM_BIAS_ACT) -> cuda.gemm_one_group"));

  // The tanh GELU is cuBLASLt's own epilogue.
  const auto tanh = run_gexec("run " + act_graph(4096, 16384, 4096, "tanh", true) + " --dry-run --arch sm_90");
  INFO(tanh.output);
  CHECK(has(tanh.output, "fc (GEMM_BIAS_ACT) -> cublaslt.gemm_bias_act"));
  CHECK(has(tanh.output, "rejected cuda.gemm_one_group: cuBLASLt's epilogue applies this activation"));

  // Forced where WGMMA does not fit (N % 128 != 0): its mma.sync kernel, said so.
  const auto forced = run_gexec("run " + act_graph(256, 200, 128, "none", false) +
                                " --dry-run --arch sm_90 --kernel fc=cuda.gemm_one_group");
  INFO(forced.output);
  CHECK(forced.status == 0);
  CHECK(has(forced.output, "fc (GEMM_BIAS_ACT) -> cuda.gemm_one_group"));
  CHECK(has(forced.output, "forced by --kernel"));
  CHECK(has(forced.output, "mma.sync (WGMMA takes sm_90, M >= 64, K % 64 == 0, N % 128 == 0)"));

  // Unforced there, the rule in the rejection is the f16 one (K in 64-value steps of 128 bytes).
  const auto unfit = run_gexec("run " + act_graph(4096, 200, 128, "none", true) + " --dry-run --arch sm_90");
  INFO(unfit.output);
  CHECK(has(unfit.output, "rejected cuda.gemm_one_group: chosen only where it runs on WGMMA (sm_90, M >= 64, "
                          "K % 64 == 0, N % 128 == 0, B [N,K] or a constant)"));
}

TEST_CASE("the erf GELU epilogue on the CPU backend against the reference", "[one-group]") {
  const std::string g = act_graph(70, 96, 64, "none", true);
  const auto ok = run_gexec("run " + g + " --backend cpu");
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK(has(ok.output, "--act gelu_erf"));  // the fused op's replay command
  CHECK(has(ok.output, "result: pass"));
}
