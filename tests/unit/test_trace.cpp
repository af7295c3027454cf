// Trace ranges (exec/trace.hpp) and --profile-range on the CPU backend: the phases and each op's
// launch as nested ranges named after the op and its kernel; a fixed count of timed iterations.
#if GEXEC_HAVE_CPU

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/exec/trace.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::has;
using gexec::test::run_gexec;
using gexec::test::source_path;

namespace {

// What the hooks saw: "+NAME" per push, "-" per pop.
std::vector<std::string> g_events;

}  // namespace

TEST_CASE("trace: a run's phases and each op's launch are nested ranges", "[trace]") {
  RunOptions o;
  o.graph_path = source_path("graphs/mlp3.json");
  o.backend = "cpu";
  o.timing.iters = 2;
  o.timing.warmup_iters = 0;
  (void)run_graph(o);  // installs the build's own hooks (NVTX where there is CUDA), once
  set_trace_hooks({[](const char* name) { g_events.push_back(std::string("+") + name); },
                   [] { g_events.push_back("-"); }});
  g_events.clear();
  const RunReport rep = run_graph(o);
  set_trace_hooks({});
  REQUIRE(rep.result == RunReport::Result::pass);
  int depth = 0;
  for (const std::string& e : g_events) {
    depth += e == "-" ? -1 : 1;
    REQUIRE(depth >= 0);
  }
  CHECK(depth == 0);
  const auto count = [&](const std::string& name) { return std::count(g_events.begin(), g_events.end(), "+" + name); };
  for (const char* phase : {"gexec load", "gexec passes", "gexec device", "gexec select", "gexec set-up", "gexec run",
                            "gexec check", "gexec timing"})
    CHECK(count(phase) == 1);
  // Each op's launches: the checked run, the calibration and the timed ones, the same count for every op.
  REQUIRE(rep.kernels);
  std::vector<long> launches;
  for (const KernelChoice& k : *rep.kernels)
    if (!k.hoisted) launches.push_back(count(k.op + " [" + k.kernel + "]"));
  REQUIRE(launches.size() >= 3);
  CHECK(launches.front() >= 3);  // one checked run and two timed iterations at least
  CHECK(std::all_of(launches.begin(), launches.end(), [&](long n) { return n == launches.front(); }));
  // Inside "gexec run", the ops in plan order.
  const auto run = std::find(g_events.begin(), g_events.end(), "+gexec run");
  REQUIRE(run != g_events.end());
  std::vector<std::string> in_run;
  for (auto it = run + 1; it != g_events.end() && *it != "-"; it += 2) in_run.push_back(it->substr(1));
  std::vector<std::string> plan;
  for (const KernelChoice& k : *rep.kernels)
    if (!k.hoisted) plan.push_back(k.op + " [" + k.kernel + "]");
  CHECK(in_run == plan);
}

TEST_CASE("trace: --profile-range times exactly --iters iterations, and needs --iters", "[cli][trace]") {
  const std::string g = "run '" + source_path("graphs/gemm_bias_relu.json") + "' --backend cpu ";
  const std::string report =
      (std::filesystem::temp_directory_path() / ("gexec_trace_" + std::to_string(getpid()) + ".json")).string();
  auto r = run_gexec(g + "--iters 7 --profile-range --report '" + report + "'");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream f(report);
  const auto doc = nlohmann::json::parse(f);
  std::filesystem::remove(report);
  CHECK(doc["timing"]["samples"] == 7);
  CHECK(doc["timing"]["reps"] == 1);
  CHECK(doc["options"]["profile_range"] == true);
  // No calibration: the warm-up is the asked-for count only.
  CHECK(doc["timing"]["warmup_iters"] == 10);
  for (const char* bad : {"--profile-range", "--profile-range --iters 0"}) {
    auto b = run_gexec(g + bad);
    INFO(bad << "\n" << b.output);
    CHECK(b.status == 2);
    CHECK(has(b.output, "--profile-range needs a fixed --iters N"));
  }
}

#endif
