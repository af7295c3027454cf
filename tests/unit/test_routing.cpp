// `gexec gemm --groups`: the routings (uniform, zipf:S, file:F) as offsets, the sweep's grouped
// points and their refusals, and a grouped sweep run on the CPU with its check.
#include <sys/stat.h>

#include <numeric>
#include <string>

#include "catch.hpp"
#include "gexec/app/gemm_replay.hpp"
#include "gexec/app/gemm_sweep.hpp"
#include "gexec/app/routing.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using namespace gexec;

TEST_CASE("routing: uniform, zipf and file give offsets summing to T", "[gemm][grouped]") {
  CHECK(*routing_ends("uniform", 4, 10) == std::vector<int32_t>{3, 6, 8, 10});
  CHECK(*routing_ends("uniform", 4, 2) == std::vector<int32_t>{1, 2, 2, 2});  // empty experts
  // zipf:1: shares 1, 1/2, 1/3, 1/4 of 25/12: 48, 24, 16, 12 of 100 tokens.
  CHECK(*routing_ends("zipf:1", 4, 100) == std::vector<int32_t>{48, 72, 88, 100});
  const auto z = *routing_ends("zipf:1.2", 64, 4096);
  CHECK(z.back() == 4096);
  CHECK(std::is_sorted(z.begin(), z.end()));
  CHECK(z[0] > z[1] - z[0]);         // the first expert takes the most,
  CHECK(z[1] - z[0] > z[63] - z[62]);  // the last the fewest
  test::TempDir dir("routing");
  test::write(dir / "r.json", "[5, 0, 3]");
  CHECK(*routing_ends("file:" + (dir / "r.json"), 3, 8) == std::vector<int32_t>{5, 5, 8});
  test::write(dir / "whole.json", "[5.0, 0, 3e0]");  // integers written as JSON reals, as i32 `values` takes them
  CHECK(*routing_ends("file:" + (dir / "whole.json"), 3, 8) == std::vector<int32_t>{5, 5, 8});
  test::write(dir / "half.json", "[4.5, 0.5, 3]");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  for (const auto& [spec, says] : {std::pair<std::string, std::string>{"zipf:0", "positive exponent"},
                                   {"zipf:x", "positive exponent"},
                                   {"even", "is not uniform, zipf:S or file:F"},
                                   {"file:" + (dir / "r.json"), "sum to 8, not the 9 tokens"},
                                   {"file:/nonexistent", "cannot read"},
                                   {"file:" + (dir / "half.json"), "element 0 is not an integer"},
                                   // Refused at once, as init.file refuses them: a folder, and a FIFO
                                   // (never waited on: this would hang if it were opened).
                                   {"file:" + dir.path.string(), "is a folder"},
                                   {"file:" + (dir / "fifo"), "not a regular file (a FIFO)"}}) {
    INFO(spec);
    auto r = routing_ends(spec, 3, 9);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.find(says) != std::string::npos);
  }
}

TEST_CASE("gemm --groups: grouped points, their graphs and refusals", "[gemm][grouped]") {
  GemmSweepText t;
  t.groups = "4,8";
  t.tokens = "64";
  t.n = "32";
  t.k = "48";
  t.dtype = "bf16";
  t.trans = "nt";
  t.act = "silu";
  t.routing = "zipf:1.2";
  auto pts = expand_sweep(t);
  REQUIRE(pts.ok());
  REQUIRE(pts->size() == 2);
  const GemmPoint& p = (*pts)[1];
  CHECK(p.groups == 8);
  CHECK(p.m == 64);
  CHECK(p.ends.back() == 64);
  const Graph g = gemm_graph(p);
  REQUIRE(g.ops.size() == 1);
  CHECK(g.ops[0].type == OpType::GROUPED_GEMM);
  CHECK(g.ops[0].attrs.act == Act::silu);
  CHECK(g.tensor(g.ops[0].inputs[1]).shape == std::vector<int64_t>{8, 32, 48});  // [G, N, K]: nt
  CHECK(verify(g).empty());
  auto bad = [&](auto edit, const std::string& says) {
    GemmSweepText b = t;
    edit(b);
    auto r = expand_sweep(b);
    INFO(says);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(says) != std::string::npos);
  };
  bad([](GemmSweepText& b) { b.m = "64"; }, "not --m, --shapes or --cube");
  bad([](GemmSweepText& b) { b.trans = "tn"; }, "reads X as stored");
  bad([](GemmSweepText& b) { b.batch = "2"; }, "no batch");
  bad([](GemmSweepText& b) { b.routing = "zipf:-1"; }, "positive exponent");
  bad([](GemmSweepText& b) { b.routing = "uniform,zipf:0"; }, "positive exponent");
  bad([](GemmSweepText& b) { b.routing = "uniform,,zipf:1.2"; }, "--routing: an empty item");
  bad([](GemmSweepText& b) { b.routing = "uniform,zipfian"; }, "'zipfian' is not uniform, zipf:S or file:F");
  {
    // A list of routings: each G with each, in the order given, the same tokens split otherwise.
    GemmSweepText both = t;
    both.routing = "uniform, zipf:1.2";
    auto two = expand_sweep(both);
    REQUIRE(two.ok());
    REQUIRE(two->size() == 4);
    CHECK((*two)[0].routing == "uniform");
    CHECK((*two)[1].routing == "zipf:1.2");
    CHECK((*two)[0].groups == 4);
    CHECK((*two)[2].groups == 8);
    CHECK((*two)[2].ends == *routing_ends("uniform", 8, 64));
    CHECK((*two)[3] == p);
  }
  // Options a grouped point has no use for are refused, not dropped.
  bad([](GemmSweepText& b) { b.scale_a = "0.5"; }, "takes no --op matmul");
  bad([](GemmSweepText& b) { b.dtype = "f8e4m3", b.fast_accum = true; }, "takes no --op matmul");
  // A grouped point's command line is its own: it replays as the same point.
  const std::string line = gemm_command_line(p);
  INFO(line);
  CHECK(line.find("--groups 8 --tokens 64") != std::string::npos);
  CHECK(line.find("--routing zipf:1.2") != std::string::npos);
  auto replayed = parse_gemm_line(line);
  REQUIRE(replayed.ok());
  auto again = expand_sweep(replayed->sweep);
  REQUIRE(again.ok());
  REQUIRE(again->size() == 1);
  CHECK((*again)[0] == p);
  GemmSweepText f8 = t;  // f8 experts: X and W f8e4m3 (scale 1), Y bf16
  f8.dtype = "f8e4m3";
  auto f8_points = expand_sweep(f8);
  REQUIRE(f8_points.ok());
  CHECK((*f8_points)[0].out_dtype == DType::bf16);
  CHECK(verify(gemm_graph((*f8_points)[0])).empty());
  GemmSweepText plain;
  plain.m = plain.n = plain.k = "32";
  plain.act = "silu";  // a plain product's SiLU epilogue
  auto r = expand_sweep(plain);
  REQUIRE(r.ok());
  CHECK((*r)[0].act == Act::silu);
  CHECK(verify(gemm_graph((*r)[0])).empty());
  plain.act = "swish";
  REQUIRE_FALSE(expand_sweep(plain).ok());
  plain.act = "none";
  plain.tokens = "32";
  CHECK_FALSE(expand_sweep(plain).ok());  // --tokens without --groups
  plain.tokens.clear();
  plain.routing = "zipf:1.2";
  r = expand_sweep(plain);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("--routing: goes with --groups") != std::string::npos);
  plain.routing = "uniform,zipf:1.2";
  r = expand_sweep(plain);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("--routing: goes with --groups") != std::string::npos);
  plain.routing = "uniform";
  r = expand_sweep(plain);
  REQUIRE(r.ok());
  CHECK(r->size() == 1);
}

#if GEXEC_HAVE_CPU
TEST_CASE("gemm --groups runs and checks on the CPU", "[gemm][grouped][cpu]") {
  auto r = test::run_gexec("gemm --groups 4 --tokens 50 --n 24 --k 40 --dtype f16 --trans nt --routing zipf:1.5 "
                           "--bias f32 --act gelu --backend cpu --iters 2");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "pass"));
  CHECK(test::has(r.output, "cpu.grouped_gemm"));
}
#endif
