// GROUPED_GEMM on the GPU with gexec's grouped kernel: the shared cases (also in the backend-ops
// harness) at sizes with many tiles and uneven routing, the check failing a misrouted row, bad
// offsets failing the run with exit 3 and the index, and a run timed through the CLI.
#include <string>

#include "backend_ops.hpp"
#include "catch.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "grouped_case.hpp"
#include "unit/process.hpp"
#include "unit/temp_dir.hpp"

using namespace gexec;
using test::has;

TEST_CASE("gpu grouped gemm: many tiles, uneven and empty groups, both layouts, against the reference", "[gpu][grouped]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  std::vector<test::GroupedCase> cases;
  for (bool tb : {false, true})
    for (DType out : {DType::bf16, DType::f32}) {
      test::GroupedCase c;  // 8 groups of 0 to 700 rows, T not a tile multiple, K several k-steps
      c.tokens = 2000, c.k = 520, c.n = 392, c.trans_b = tb, c.in = DType::bf16, c.out = out;
      c.ends = {700, 700, 1100, 1350, 1351, 1700, 1900, 1990};
      c.act = tb ? Act::silu : Act::gelu;
      cases.push_back(c);
    }
  // Shapes the WGMMA kernel takes on a Hopper (W [G, N, K], K % 64, N % 128, 64+ rows a group
  // on average): 128- and 256-wide tiles, a group of one row, an unowned tail; f16 and bf16.
  for (const auto& [n, in] : {std::pair<int64_t, DType>{384, DType::bf16}, {512, DType::f16}}) {
    test::GroupedCase c;
    c.tokens = 2100, c.k = 576, c.n = n, c.trans_b = true, c.in = in, c.out = DType::f32, c.act = Act::silu;
    c.ends = {640, 640, 1100, 1101, 1500, 1800, 2000, 2090};
    cases.push_back(c);
  }
  for (const test::GroupedCase& c : cases)
    for (const char* kernel : {"", "cuda.grouped_gemm_mma"}) {
      INFO(c.describe() << " " << kernel);
      const test::CaseResult r = test::run_case(**dev, test::grouped_graph(c), nullptr, kernel);
      INFO(r.describe());
      CHECK(r.kernel == (*kernel ? kernel : "cuda.grouped_gemm"));
      CHECK(r.pass());
    }
  // Sharp: a reference with one row moved to the next group, and one that owns the tail.
  const Graph g = test::grouped_graph(cases[0]);
  CHECK_FALSE(test::run_case(**dev, g, nullptr, {}, test::with_offsets({700, 700, 1099, 1350, 1351, 1700, 1900, 1990})).pass());
  CHECK_FALSE(test::run_case(**dev, g, nullptr, {}, test::with_offsets({700, 700, 1100, 1350, 1351, 1700, 1900, 2000})).pass());
  const Graph gw = test::grouped_graph(cases.back());  // on the WGMMA kernel
  CHECK_FALSE(test::run_case(**dev, gw, nullptr, {}, test::with_offsets({640, 640, 1100, 1100, 1500, 1800, 2000, 2090})).pass());
}

TEST_CASE("gpu grouped gemm: bad offsets fail the run with exit 3 and the first bad index", "[gpu][grouped]") {
  test::TempDir dir("grouped_gpu");
  const std::string head = R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [100, 64], "dtype": "bf16"}, {"name": "W", "shape": [4, 64, 32], "dtype": "bf16"},
    {"name": "offsets", "shape": [4], "dtype": "i32", "init": {"values": )";
  const std::string tail = R"(}}, {"name": "Y", "shape": [100, 32], "dtype": "bf16"}],
    "ops": [{"op_type": "GROUPED_GEMM", "name": "experts", "inputs": ["X", "W", "offsets"], "outputs": ["Y"]}]})";
  for (const auto& [offsets, says] : {std::pair<std::string, std::string>{"[10, 50, 40, 90]", "offsets[2] = 40 is below offsets[1] = 50"},
                                      {"[10, 50, 60, 101]", "offsets[3] = 101 exceeds the 100 tokens of X"},
                                      {"[-5, 50, 60, 70]", "offsets[0] = -5 is below 0"},
                                      {"[10, 2000000000, 60, 70]", "offsets[1] = 2000000000 exceeds"}}) {
    const std::string path = dir / "bad.json";
    test::write(path, head + offsets + tail);
    auto r = test::run_gexec("run --backend cuda '" + path + "'");
    INFO(offsets << "\n" << r.output);
    CHECK(r.status == 3);
    CHECK(has(r.output, "op experts: " + says));
  }
  const std::string ok = dir / "ok.json";
  test::write(ok, head + "[0, 0, 60, 97]" + tail);
  auto r = test::run_gexec("run --backend cuda --iters 20 '" + ok + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "result: pass"));
  CHECK(has(r.output, "cuda.grouped_gemm"));
}
