// GROUPED_GEMM: the format's rules (i32 offsets, shapes, what other ops may not read), the CPU
// backend against the reference over the shared cases (sound), and the check catching a row
// routed to the wrong group (sharp); bad offsets, which are data, fail a run with exit 3.
#include <string>

#include "catch.hpp"
#include "grouped_case.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

#if GEXEC_HAVE_CPU
#include "backend_ops.hpp"
#include "gexec/backends/cpu_device.hpp"
#endif

using namespace gexec;
using test::has;

namespace {

// A graph file of one GROUPED_GEMM with `offsets` and the attrs given as JSON text.
std::string grouped_json(const std::string& offsets, const std::string& attrs = "{}", const std::string& w_shape = "[3, 16, 8]",
                         const std::string& off_dtype = "i32") {
  return R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [10, 16], "dtype": "f16"},
    {"name": "W", "shape": )" + w_shape + R"(, "dtype": "f16"},
    {"name": "offsets", "shape": [3], "dtype": ")" + off_dtype + R"(", "init": {"values": )" + offsets + R"(}},
    {"name": "Y", "shape": [10, 8], "dtype": "f32"}],
  "ops": [{"op_type": "GROUPED_GEMM", "name": "experts", "inputs": ["X", "W", "offsets"], "outputs": ["Y"], "attrs": )" +
         attrs + "}]}";
}

}  // namespace

TEST_CASE("grouped gemm: the format's rules", "[grouped]") {
  test::TempDir dir("grouped_rules");
  auto check = [&](const std::string& text, int status, const std::string& says) {
    const std::string path = dir / "g.json";
    test::write(path, text);
    auto r = test::run_gexec("validate '" + path + "'");
    INFO(text << "\n" << r.output);
    CHECK(r.status == status);
    CHECK(has(r.output, says));
  };
  check(grouped_json("[2, 2, 9]", R"({"act": "silu", "alpha": 0.5})"), 0, ": ok (");
  check(grouped_json("[2, 2, 9]", R"({"act": "swish"})"), 2, "expected one of none, relu, gelu, silu");
  check(grouped_json("[2, 2, 9]", R"({"trans_a": true})"), 2, "unknown key");
  check(grouped_json("[2, 2, 9]", "{}", "[3, 8, 16]"), 2, "(W is [G, K, N]; [G, N, K] needs trans_b)");
  check(grouped_json("[2, 2, 9]", R"({"trans_b": true})", "[3, 8, 16]"), 0, ": ok (");
  check(grouped_json("[2, 2, 9]", "{}", "[2, 16, 8]"), 2, "must be [2] (one per group of W)");
  check(grouped_json("[2, 2, 9]", "{}", "[3, 16, 8]", "f32"), 2, "offsets \"offsets\" must be i32");
  check(grouped_json("[2, 2.5, 9]"), 2, "an i32 value is an integer");
  check(grouped_json("[2, \"nan\", 9]"), 2, "an i32 value is an integer");
  check(grouped_json("[2, 2, 3000000000]"), 2, "an i32 value is an integer");
  // i32 is no arithmetic op's operand, and SiLU no GEMM_BIAS_ACT epilogue.
  check(R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "a", "shape": [4], "dtype": "i32", "init": {"values": [1, 2, 3, 4]}}, {"name": "b", "shape": [4], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": ["a"], "outputs": ["b"]}]})", 2, "i32 is allowed only as GROUPED_GEMM's offsets");
  check(R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "a", "shape": [4, 4], "dtype": "f16"}, {"name": "b", "shape": [4, 4], "dtype": "f16"}, {"name": "c", "shape": [4, 4], "dtype": "f16"}],
    "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["a", "b"], "outputs": ["c"], "attrs": {"act": "silu"}}]})", 2,
        "expected one of none, relu, gelu");
  // The dry-run plans it on CUDA (any machine) with the grouped kernel.
  const std::string path = dir / "ok.json";
  test::write(path, grouped_json("[2, 2, 9]", R"({"act": "relu"})"));
  auto dry = test::run_gexec("run --dry-run --arch sm_90 '" + path + "'");
  INFO(dry.output);
  CHECK(dry.status == 0);
  CHECK(has(dry.output, "cuda.grouped_gemm"));
}

#if GEXEC_HAVE_CPU

// The shared cases pass on the CPU in the backend-ops harness (test_backend_ops.cpp); here the
// check's sharpness on them.
TEST_CASE("grouped gemm: the check fails a row routed to the wrong group, and unowned rows not zero", "[grouped][cpu]") {
  auto dev = open_cpu_device();
  test::GroupedCase c;
  const test::CaseResult right = test::run_case(*dev, test::grouped_graph(c));
  INFO(right.describe());
  CHECK(right.kernel == "cpu.grouped_gemm");
  CHECK(right.pass());
  // The reference routes the last row of group 2 to group 3 instead; that row must fail.
  const Graph g = test::grouped_graph(c);
  const test::CaseResult wrong = test::run_case(*dev, g, nullptr, {}, test::with_offsets({7, 7, 29, 37}));
  INFO(wrong.describe());
  CHECK(wrong.error.empty());
  CHECK_FALSE(wrong.pass());
  // So must a reference that owns the tail: rows past the last offset are the kernel's zeros.
  CHECK_FALSE(test::run_case(*dev, g, nullptr, {}, test::with_offsets({7, 7, 30, 40})).pass());
  // And the right offsets through the same edit pass (the edit itself changes nothing else).
  CHECK(test::run_case(*dev, g, nullptr, {}, test::with_offsets({7, 7, 30, 37})).pass());
}

TEST_CASE("grouped gemm: offsets that decrease or exceed T fail the run with exit 3 on the CPU", "[grouped][cpu]") {
  test::TempDir dir("grouped_offsets");
  for (const auto& [offsets, says] : {std::pair<std::string, std::string>{"[2, 1, 9]", "offsets[1] = 1 is below offsets[0] = 2"},
                                      {"[2, 2, 11]", "offsets[2] = 11 exceeds the 10 tokens of X"},
                                      {"[-1, 2, 9]", "offsets[0] = -1 is below 0"}}) {
    const std::string path = dir / "bad.json";
    test::write(path, grouped_json(offsets));
    auto r = test::run_gexec("run --backend cpu '" + path + "'");
    INFO(r.output);
    CHECK(r.status == 3);
    CHECK(has(r.output, "op experts: " + says));
  }
  // Valid offsets with an unowned tail and an empty group pass.
  const std::string ok = dir / "ok.json";
  test::write(ok, grouped_json("[0, 4, 7]", R"({"act": "gelu"})"));
  auto r = test::run_gexec("run --backend cpu '" + ok + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "result: pass"));
}

#else

#include "skip.hpp"
GEXEC_SKIPPED_TEST("grouped gemm: the CPU backend", "[grouped][cpu]", GEXEC_NO_CPU_BACKEND)

#endif
