// The command line end to end: dry-runs of every example graph with their kernel choices,
// usage errors, and exit statuses. Runs the real binary.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <initializer_list>
#include <string>

#include "catch.hpp"
#include "process.hpp"

using gexec::test::run_gexec;
using gexec::test::has;
using gexec::test::source_path;

namespace {

// Runs `run --dry-run <options>` on an example graph and checks that it succeeds and reports
// each of `wanted`.
void check_dry_run(const std::string& options, const char* graph, std::initializer_list<const char*> wanted) {
  auto r = run_gexec("run --dry-run " + options + "'" + source_path(graph) + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  for (const char* want : wanted) {
    INFO("wanted: " << want);
    CHECK(has(r.output, want));
  }
}

}  // namespace

TEST_CASE("--version and --help exit 0", "[cli]") {
  auto v = run_gexec("--version");
  CHECK(v.status == 0);
  CHECK(has(v.output, "gexec "));
  for (const char* sub : {"", "run ", "validate ", "kernels "}) {
    auto h = run_gexec(std::string(sub) + "--help");
    INFO(sub);
    CHECK(h.status == 0);
    CHECK(has(h.output, "Usage"));
  }
}

TEST_CASE("usage errors exit 2", "[cli]") {
  CHECK(run_gexec("").status == 2);
  CHECK(run_gexec("frobnicate").status == 2);
  CHECK(run_gexec("run").status == 2);
  CHECK(run_gexec("run --backend tpu x.json").status == 2);
  auto arch = run_gexec("run --dry-run --arch gfx90a '" + source_path("graphs/gemm_bias_relu.json") + "'");
  CHECK(arch.status == 2);
  CHECK(has(arch.output, "expected sm_XY"));
  auto missing = run_gexec("run --dry-run /nonexistent/graph.json");
  CHECK(missing.status == 2);
  CHECK(has(missing.output, "/nonexistent/graph.json"));
}

TEST_CASE("every example graph dry-runs with a kernel for every op", "[cli]") {
  int graphs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("graphs"))) {
    if (entry.path().extension() != ".json") continue;
    ++graphs;
    auto r = run_gexec("run --dry-run --arch sm_90 '" + entry.path().string() + "'");
    INFO(entry.path().string() << "\n" << r.output);
    CHECK(r.status == 0);
    CHECK(has(r.output, "// before the passes"));
    CHECK(has(r.output, "// after the passes"));
    CHECK(has(r.output, "kernels:"));
    CHECK_FALSE(has(r.output, "-> none"));
    CHECK(has(r.output, "buffers: one arena of"));
    CHECK(has(r.output, "dry run: nothing executed"));
  }
  CHECK(graphs >= 7);
}

TEST_CASE("the example's dry-run picks the fused cuBLASLt kernel and converts the bias once", "[cli]") {
  check_dry_run("", "graphs/gemm_bias_relu.json",
                {"GEMM_BIAS_ACT_0 (GEMM_BIAS_ACT) -> cublaslt.gemm_bias_act", "once, before the runs"});
}

TEST_CASE("the primitive example fuses into one cuBLASLt launch and --emit-graph writes it", "[cli]") {
  const std::string out = (std::filesystem::temp_directory_path() / "gexec_test_emit.json").string();
  auto r = run_gexec("run --dry-run --emit-graph '" + out + "' '" +
                     source_path("graphs/gemm_bias_relu_primitives.json") + "'");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(has(r.output, "3 ops -> 1"));
  CHECK(has(r.output, "-> cublaslt.gemm_bias_act"));
  auto v = run_gexec("validate '" + out + "'");
  CHECK(v.status == 0);
  CHECK(has(v.output, "(4 tensors, 1 ops)"));
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  CHECK(has(text, "GEMM_BIAS_ACT"));
  CHECK_FALSE(has(text, "\"op_type\": \"MATMUL\""));
  std::filesystem::remove(out);
}

TEST_CASE("--passes none keeps the primitives and selects a kernel for each", "[cli]") {
  check_dry_run("--passes none ", "graphs/gemm_bias_relu_primitives.json",
                {"-> cublaslt.matmul", "-> cuda.bias_add", "-> cuda.relu"});
  auto bad = run_gexec("run --dry-run --passes fuse_everything '" + source_path("graphs/gemm_bias_relu.json") + "'");
  CHECK(bad.status == 2);
  CHECK(has(bad.output, "fuse_elementwise"));
}

TEST_CASE("a device too old for every kernel is a runtime failure with the reasons", "[cli]") {
  auto r = run_gexec("run --dry-run --arch sm_50 '" + source_path("graphs/gemm_bias_relu.json") + "'");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(has(r.output, "cublaslt.gemm_bias_act: needs sm_"));
}

TEST_CASE("gexec kernels lists every backend's kernels", "[cli]") {
  auto r = run_gexec("kernels");
  CHECK(r.status == 0);
  CHECK(has(r.output, "cublaslt.gemm_bias_act"));
  CHECK(has(r.output, "cuda.gelu"));
}
