// `gexec gemm` on the device: the cuBLASLt algorithm each point runs is described, --algo N runs
// candidate N (and refuses one out of range), cold-L2 timing rotates operand sets, and every
// point still passes the check.
#include <nlohmann/json.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "catch.hpp"
#include "gexec/app/gemm_command.hpp"
#include "gexec/app/run_report.hpp"

using namespace gexec;

namespace {

GemmOptions gemm_options(const std::string& shapes) {
  GemmOptions o;
  o.sweep.shapes = shapes;
  o.sweep.bias = "f16";
  o.sweep.act = "relu";
  o.run.backend = "cuda";
  o.run.timing.iters = 50;
  o.run.timing.count_iterations = true;
  o.progress = false;
  return o;
}

nlohmann::json run_json(GemmOptions o, Exit* code, std::string* text) {
  const std::string path = "/tmp/gexec_gpu_gemm_" + std::to_string(getpid()) + ".json";
  o.json_path = path;
  std::ostringstream out, err;
  *code = gemm_command(o, out, err);
  *text = out.str() + err.str();
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  std::remove(path.c_str());
  return j;
}

}  // namespace

TEST_CASE("gemm on cuBLASLt: the chosen algorithm is described and --algo replays another", "[gpu][gemm]") {
  Exit code{};
  std::string text;
  auto doc = run_json(gemm_options("1024x1024x1024"), &code, &text);
  INFO(text);
  REQUIRE(code == Exit::ok);
  const auto& p = doc["points"][0];
  CHECK(p["kernel"].get<std::string>().rfind("cublaslt", 0) == 0);
  CHECK(p["algo"].get<std::string>().rfind("algo ", 0) == 0);
  CHECK(p["algo"].get<std::string>().find(" tile ") != std::string::npos);
  CHECK(p["algo_index"] == 0);
  const int candidates = p["algo_count"].get<int>();
  REQUIRE(candidates >= 1);
  CHECK(p["result"] == "pass");
  CHECK(p["tflops"].get<double>() > 0);
  if (candidates > 1) {
    auto o = gemm_options("1024x1024x1024");
    o.run.algo = 1;
    auto one = run_json(o, &code, &text);
    CHECK(code == Exit::ok);
    CHECK(one["points"][0]["algo_index"] == 1);
    CHECK(one["points"][0]["result"] == "pass");
  }
  auto o = gemm_options("1024x1024x1024");
  o.run.algo = candidates + 5;
  auto bad = run_json(o, &code, &text);
  CHECK(code == Exit::check_failed);
  CHECK(bad["points"][0]["result"] == "error");
  CHECK(bad["points"][0]["error"].get<std::string>().find("--algo") != std::string::npos);
}

TEST_CASE("gemm --cold-l2 rotates operand sets on small shapes and stays checked", "[gpu][gemm]") {
  auto o = gemm_options("256x256x256");
  o.cold_l2 = true;
  Exit code{};
  std::string text;
  auto doc = run_json(o, &code, &text);
  INFO(text);
  REQUIRE(code == Exit::ok);
  const auto& p = doc["points"][0];
  CHECK(p["l2"] == "cold");
  CHECK(p["rotating_sets"].get<int>() > 1);
  CHECK(p["result"] == "pass");
  // NVML, where the machine has it, frames the timed part.
  if (doc["environment"]["nvml"] == "available") {
    CHECK(p["power"]["start"]["sm_mhz"].get<unsigned>() > 0);
    CHECK(p["power"]["end"]["power_limit_w"].get<double>() > 0);
  }
}
