// The replay lines of gemm_replay.hpp: every product of every shipped graph written as a
// `gexec gemm` line reads back as the same product, and a bad --from file is refused by line.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.hpp"
#include "temp_dir.hpp"
#include "gexec/app/gemm_replay.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "example_graphs.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::has;
using gexec::test::run_gexec;
using gexec::test::source_path;

namespace {

// graphs/*.json but the ones over 1 GiB (example_graphs.hpp), in name order.
std::vector<std::string> shipped_graphs() {
  std::vector<std::string> out = gexec::test::example_graphs();
  std::sort(out.begin(), out.end());
  return out;
}

// What the product computes and how its operands are stored, as the kernels read it.
void check_same_product(const Graph& g1, const Op& o1, const Graph& g2, const Op& o2) {
  CHECK(o1.type == o2.type);
  const auto s1 = gemm_shape(g1, o1), s2 = gemm_shape(g2, o2);
  REQUIRE(s1);
  REQUIRE(s2);
  CHECK(std::tie(s1->batch, s1->m, s1->n, s1->k, s1->b_batched, s1->trans_a, s1->trans_b, s1->layout_a, s1->layout_b,
                 s1->layout_c, s1->alpha, s1->has_bias, s1->has_residual, s1->beta) ==
        std::tie(s2->batch, s2->m, s2->n, s2->k, s2->b_batched, s2->trans_a, s2->trans_b, s2->layout_a, s2->layout_b,
                 s2->layout_c, s2->alpha, s2->has_bias, s2->has_residual, s2->beta));
  CHECK(o1.attrs.act == o2.attrs.act);
  CHECK(o1.attrs.fast_accum == o2.attrs.fast_accum);
  REQUIRE(o1.inputs.size() == o2.inputs.size());
  REQUIRE(o1.outputs.size() == o2.outputs.size());
  for (size_t i = 0; i < o1.inputs.size(); ++i) {
    const Tensor &t1 = g1.tensor(o1.inputs[i]), &t2 = g2.tensor(o2.inputs[i]);
    INFO("input " << i);
    CHECK(t1.dtype == t2.dtype);
    if (t1.scale.is_block()) {
      // S is data: the same blocks, read from a tensor of the same shape (a graph's own S,
      // computed or given, becomes a drawn input of the gemm command's graph).
      CHECK(t1.scale.block == t2.scale.block);
      REQUIRE(t2.scale.is_block());
      CHECK(g1.tensor(t1.scale.tensor).shape == g2.tensor(t2.scale.tensor).shape);
    } else {
      CHECK(t1.scale == t2.scale);
    }
    CHECK(t1.constant == t2.constant);
  }
  for (size_t i = 0; i < o1.outputs.size(); ++i) {
    const Tensor &t1 = g1.tensor(o1.outputs[i]), &t2 = g2.tensor(o2.outputs[i]);
    CHECK(t1.dtype == t2.dtype);
    CHECK(t1.shape == t2.shape);
    CHECK(t1.scale == t2.scale);
  }
}

// A folder of the process's own, removed when the tests end.
std::string temp_dir(const std::string& what) {
  static const gexec::test::TempDir root("replay");
  const auto dir = root.path / what;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("replay: every product of every shipped graph reads back as the same product", "[replay]") {
  int products = 0;
  for (const std::string& path : shipped_graphs()) {
    INFO(path);
    auto g = load_graph_file(path);
    REQUIRE(g);
    PreparedRun run(*g, PrepareOptions{});
    std::ostringstream prints;
    REQUIRE(run.run_passes(prints));
    const Graph& after = run.graph();
    for (const Op& op : after.ops) {
      const auto p = gemm_point_of(after, op);
      if (!p) continue;
      ++products;
      const std::string line = gemm_command_line(*p, {3, "never", "f32"});
      INFO(line);
      auto parsed = parse_gemm_line(line);
      REQUIRE(parsed);
      CHECK(parsed->run == ReplayRun{3, "never", "f32"});
      auto points = expand_sweep(parsed->sweep);
      REQUIRE(points);
      REQUIRE(points->size() == 1);
      CHECK(points->front() == *p);
      const Graph rebuilt = gemm_graph(points->front());
      CHECK(verify(rebuilt).empty());
      check_same_product(after, op, rebuilt, rebuilt.ops.front());
      CHECK(gemm_point_of(rebuilt, rebuilt.ops.front()) == *p);
    }
  }
  CHECK(products >= 15);
}

TEST_CASE("replay: what the shipped graphs leave out is written and read too", "[replay]") {
  // Per-axis scales of different values, mixed f8 operands, a colmajor C, a residual with beta, amax.
  GemmPoint p;
  p.m = 32, p.n = 16, p.k = 48;
  p.dtype = DType::f8e4m3, p.dtype_b = DType::f8e5m2, p.out_dtype = DType::f8e5m2;
  p.scale_a.axis = 0;
  p.scale_a.values.assign(32, 0.5);
  p.scale_a.values[3] = 0.25;
  p.scale_b = Scale{-1, {2.0}};
  p.scale_c = Scale{1, {0.125}};
  p.amax = true;
  p.constant_b = true;
  p.bias = DType::bf16;
  p.constant_bias = false;
  p.act = Act::gelu;
  const std::string line = gemm_command_line(p);
  INFO(line);
  CHECK(has(line, "--scale-a row:0.5/0.5/0.5/0.25/"));
  CHECK(has(line, "--scale-c col:0.125"));
  CHECK(has(line, "--constant b"));
  auto parsed = parse_gemm_line(line);
  REQUIRE(parsed);
  auto points = expand_sweep(parsed->sweep);
  REQUIRE(points);
  REQUIRE(points->size() == 1);
  const Graph g = gemm_graph(points->front());
  CHECK(verify(g).empty());
  CHECK(gemm_point_of(g, g.ops.front()) == p);

  GemmPoint r;
  r.m = 8, r.n = 8, r.k = 8, r.batch = 3, r.shared_b = true, r.residual = DType::f32, r.beta = -0.5;
  r.out_dtype = DType::f32;
  r.dtype = r.dtype_b = DType::f32;
  auto back = parse_gemm_line(gemm_command_line(r));
  REQUIRE(back);
  auto rp = expand_sweep(back->sweep);
  REQUIRE(rp);
  CHECK(rp->front() == r);
  // colmajor storage, only for rank 2
  r.batch = 1, r.shared_b = false, r.layout_c = Layout::colmajor, r.layout_a = Layout::colmajor;
  back = parse_gemm_line(gemm_command_line(r));
  REQUIRE(back);
  CHECK(back->sweep.layout == "crc");
  rp = expand_sweep(back->sweep);
  REQUIRE(rp);
  CHECK(rp->front() == r);
}

TEST_CASE("replay: options a line may not give, and products the format refuses", "[replay]") {
  CHECK_FALSE(parse_gemm_line("gexec run --m 1"));
  CHECK_FALSE(parse_gemm_line("gemm --m 1"));
  auto iters = parse_gemm_line("gexec gemm --m 1 --n 1 --k 1 --iters 5");
  REQUIRE_FALSE(iters);
  CHECK(has(iters.error().message, "--iters is not an option of a replay line"));
  CHECK_FALSE(parse_gemm_line("gexec gemm --m"));
  CHECK_FALSE(parse_gemm_line("gexec gemm --m 1 --amax=1"));
  CHECK(parse_gemm_line("/usr/local/bin/gexec gemm --m=4 --n 4 --k 4"));
  for (const char* bad : {"--op matmul --bias f16", "--op matmul --act relu", "--residual f8e4m3",
                          "--beta 2", "--layout rrx", "--scale-a 2", "--dtype f16 --dtype-b bf16 --out-dtype f8e4m3",
                          "--scale-a row:1/2 --dtype f8e4m3", "--constant w", "--dtype f8e5m2 --dtype-b f8e5m2",
                          "--batch 2 --layout crr"}) {
    auto l = parse_gemm_line(std::string("gexec gemm --m 4 --n 4 --k 4 ") + bad);
    INFO(bad);
    REQUIRE(l);
    auto points = expand_sweep(l->sweep);
    REQUIRE_FALSE(points);
    INFO(points.error().message);
    CHECK(points.error().code == Exit::bad_input);
  }
}

TEST_CASE("replay: run --emit-gemms, then gemm --from runs each product alone on the CPU", "[cli][replay]") {
  const std::string dir = temp_dir("roundtrip");
  // Every shipped graph's lines, from the dry run's --emit-gemms and its JSON report, into one file.
  std::vector<std::string> commands;
  std::string all;
  int graphs = 0;
  for (const std::string& path : shipped_graphs()) {
    INFO(path);
    const std::string file = dir + "/" + std::filesystem::path(path).stem().string() + ".gemms";
    auto r = run_gexec("run '" + path + "' --dry-run --backend cpu --report '" + dir + "/r.json' --emit-gemms '" + file +
                       "'");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(has(r.output, "wrote the gemm commands to " + file));
    std::ifstream rf(dir + "/r.json");
    const auto report = nlohmann::json::parse(rf);
    std::vector<std::string> in_report;
    for (const auto& k : report["kernels"])
      if (k.contains("gemm_command")) in_report.push_back(k["gemm_command"]);
    REQUIRE_FALSE(in_report.empty());
    // The file holds the report's lines (each followed by a comment naming its op).
    std::vector<std::string> in_file;
    std::ifstream ff(file);
    for (std::string l; std::getline(ff, l);) {
      all += l + "\n";
      if (!l.empty() && l[0] != '#') in_file.push_back(l.substr(0, l.find("  #")));
    }
    CHECK(in_file == in_report);
    commands.insert(commands.end(), in_report.begin(), in_report.end());
    ++graphs;
  }
  CHECK(graphs >= 15);
  std::ofstream(dir + "/all.gemms") << all;
  auto g = run_gexec("gemm --from '" + dir + "/all.gemms' --backend cpu --iters 1 --warmup 0 --verify sample --json '" +
                     dir + "/g.json'");
  INFO(g.output);
  CHECK(g.status == 0);
  std::ifstream gf(dir + "/g.json");
  const auto sweep = nlohmann::json::parse(gf);
  REQUIRE(sweep["points"].size() == commands.size());
  // Each point ran the product its line named: the line it writes for itself is the one it read.
  for (size_t i = 0; i < commands.size(); ++i) {
    CHECK(sweep["points"][i]["command"] == commands[i]);
    CHECK(sweep["points"][i]["result"] == "pass");
  }
  // The dry run prints the same lines, and --emit-gemms is never written over the graph.
  const std::string mlp3 = source_path("graphs/mlp3.json");
  auto dry = run_gexec("run '" + mlp3 + "' --dry-run --backend cpu --emit-gemms '" + mlp3 + "'");
  CHECK(dry.status == 2);
  CHECK(has(dry.output, "--emit-gemms"));
  auto text = run_gexec("run '" + mlp3 + "' --dry-run --backend cpu");
  CHECK(has(text.output, "gemm commands (each product alone"));
  CHECK(has(text.output,
            "  fc1: gexec gemm --m 64 --n 512 --k 256 --dtype f16 --out-dtype f16 --bias f32 --act relu --constant b,bias\n"));
}

TEST_CASE("replay: a bad --from file is refused with its file and line, before any point runs", "[cli][replay]") {
  const std::string dir = temp_dir("bad");
  const std::string good = "gexec gemm --m 16 --n 16 --k 16 --dtype f32 --out-dtype f32";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"# two good lines, then a bad one\n" + good + "\n\n" + good + "  # trailing comment\ngexec gemm --m 0 --n 1 --k 1\n",
       ":5: --m: 0 is out of range"},
      {good + "\ngexec gemm --m 16 --n 16 --k 16 --csv x.csv\n", ":2: --csv is not an option of a replay line"},
      {"gexec gemm --m 16 --n 16 --k 16 --dtype f17\n", ":1: --dtype: unknown dtype"},
      {"gexec run g.json\n", ":1: expected a command 'gexec gemm OPTIONS'"},
      {"# nothing\n\n", "holds no command"},
  };
  int i = 0;
  for (const auto& [text, why] : cases) {
    const std::string file = dir + "/bad" + std::to_string(i++) + ".gemms";
    std::ofstream(file) << text;
    auto r = run_gexec("gemm --from '" + file + "' --backend cpu --iters 1 --csv '" + dir + "/out.csv'");
    INFO(text << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, why));
    CHECK_FALSE(has(r.output, "points, "));
    CHECK_FALSE(std::filesystem::exists(dir + "/out.csv"));
  }
  auto both = run_gexec("gemm --from '" + dir + "/bad0.gemms' --m 4 --n 4 --k 4 --backend cpu");
  CHECK(both.status == 2);
  CHECK(has(both.output, "give no sweep option"));
  auto missing = run_gexec("gemm --from '" + dir + "/none.gemms' --backend cpu");
  CHECK(missing.status == 2);
}
