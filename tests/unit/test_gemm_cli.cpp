// `gexec gemm` and `gexec compare` end to end on the CPU backend, and the command-line fixes
// that came with them (-v/-q after the subcommand, --report -, --load-inputs warnings).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.hpp"
#include "process.hpp"
#include "temp_dir.hpp"
#include "skip.hpp"

using gexec::test::has;
using gexec::test::run_gexec;
using gexec::test::source_path;

namespace {

std::string temp_dir(const std::string& what) {
  const auto dir = std::filesystem::temp_directory_path() / ("gexec_gemm_" + what + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

using gexec::test::lines;
using gexec::test::read;

}  // namespace

TEST_CASE("gemm: usage errors are found before any point runs", "[cli][gemm]") {
  CHECK(run_gexec("gemm --m 64 --n 64").status == 2);  // --k missing
  for (const char* bad : {"--m 0 --n 64 --k 64", "--m 64 --n 64 --k 10:5:1", "--m 64 --n 64 --k 64 --dtype f17",
                          "--m 64 --n 64 --k 64 --act swish", "--m 64 --n 64 --k 64 --trans xx",
                          "--m 64 --n 64 --k 64 --percentile 50,101", "--m 64 --n 64 --k 64 --tags nocolon",
                          "--m 64 --n 64 --k 64 --tags gpu:x,m:5", "--m 64 --n 64 --k 64 --tags result:ok",
                          "--m 64 --n 64 --k 64 --percentile 75,75", "--m 64 --n 64 --k 64 --alpha nan",
                          "--m 64 --n 64 --k 64 --alpha inf", "--m 64 --n 64 --k 64 --alpha=-inf",
                          "--m 8:16:0 --n 64 --k 64"}) {
    auto r = run_gexec(std::string("gemm ") + bad + " --backend cpu");
    INFO(bad << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK_FALSE(has(r.output, "points, "));  // no sweep ran
  }
}

TEST_CASE("gemm: --csv, --json and --export-times are checked before any point runs", "[cli][gemm]") {
  const std::string dir = temp_dir("outpaths");
  const std::string sweep = "gemm --m 64 --n 64 --k 64 --backend cpu --iters 1 ";
  std::ofstream(dir + "/old.csv") << "kept\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--csv '" + dir + "'", "is a folder"},
      {"--json '" + dir + "/missing/x.json'", "does not exist"},
      {"--export-times '" + dir + "/missing/t.csv'", "does not exist"},
      {"--csv '" + dir + "/old.csv' --json '" + dir + "/old.csv'", "name two different files"},
      {"--csv '" + dir + "/old.csv' --export-times '" + dir + "/./old.csv'", "name two different files"},
  };
  for (const auto& [opts, why] : cases) {
    auto r = run_gexec(sweep + opts);
    INFO(opts << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, why));
    CHECK_FALSE(has(r.output, "points, "));  // no sweep ran
  }
  CHECK(read(dir + "/old.csv") == "kept\n");
  // Out of range numbers are refused by the option checks, also before anything runs.
  for (const char* bad : {"--iters 0", "--seed -1", "--warmup -1", "--rotating 0", "--peak-tflops 0", "--device -1"}) {
    auto r = run_gexec(sweep + bad);
    INFO(bad << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK_FALSE(has(r.output, "points, "));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: a missing file is bad input", "[cli][compare]") {
  auto r = run_gexec("compare /nonexistent/a.json /nonexistent/b.json");
  CHECK(r.status == 2);
  CHECK(has(r.output, "/nonexistent/a.json"));
}

TEST_CASE("-v and -q are accepted after the subcommand", "[cli]") {
  auto q = run_gexec("kernels -q");
  CHECK(q.status == 0);
  auto v = run_gexec("validate -v '" + source_path("graphs/gemm_bias_relu.json") + "'");
  CHECK(v.status == 0);
  CHECK(has(v.output, "ok"));
}

#if GEXEC_HAVE_CPU

namespace {

// Runs `args` with --csv into csv, checks that it succeeds with `summary` in its report, and
// returns the CSV's lines (header included), of which there must be `count`.
std::vector<std::string> sweep_rows(const std::string& args, const std::string& csv, const std::string& summary,
                                    size_t count) {
  auto r = run_gexec(args + " --csv '" + csv + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, summary));
  auto rows = lines(read(csv));
  REQUIRE(rows.size() == count);
  return rows;
}

}  // namespace

TEST_CASE("gemm: the done-when sweep writes 8 rows that pass", "[cli][gemm][cpu]") {
  const std::string dir = temp_dir("sweep");
  const std::string csv = dir + "/out.csv";
  const auto rows = sweep_rows("gemm --m 64,128 --n 96 --k 80:160:80 --dtype f16 --bias f32 --act relu,none "
                                "--backend cpu --iters 3", csv, "8 points, 8 passed", 9);
  CHECK(rows[0].rfind("m,n,k,batch,dtype,out_dtype,bias,act,trans,", 0) == 0);
  for (const char* col : {",kernel,", ",algo,", ",median_us,p90_us,p99_us,", ",cv,tflops,gbps,peak_pct,max_abs,rel_fro,",
                          ",result,"})
    CHECK(has(rows[0], col));
  for (size_t i = 1; i < rows.size(); ++i) {
    INFO(rows[i]);
    CHECK(has(rows[i], ",f16,f16,f32,"));
    CHECK(has(rows[i], ",cpu,"));
    CHECK(has(rows[i], ",pass,"));
  }
  CHECK(rows[1].rfind("64,96,80,1,f16,f16,f32,relu,nn,", 0) == 0);
  CHECK(rows[8].rfind("128,96,160,1,f16,f16,f32,none,nn,", 0) == 0);
  // No temporary file is left beside it.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("gemm: the number of points is said once on stderr, terminal or not, unless -q", "[cli][gemm][cpu]") {
  // run_gexec reads through a pipe: no terminal, so no progress bar either.
  auto r = run_gexec("gemm --m 32,48 --n 32 --k 32 --backend cpu --iters 1");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "gexec: gemm: 2 points to run\n"));
  auto q = run_gexec("gemm --m 32,48 --n 32 --k 32 --backend cpu --iters 1 -q");
  CHECK(q.status == 0);
  CHECK_FALSE(has(q.output, "points to run"));
  auto tag = run_gexec("gemm --m 32 --n 32 --k 32 --backend cpu --iters 1 --tags m:5");
  CHECK(tag.status == 2);
  CHECK(has(tag.output, "--tags: the key \"m\" is also a column gexec gemm writes"));
  auto alpha = run_gexec("gemm --m 32 --n 32 --k 32 --backend cpu --iters 1 --alpha nan");
  CHECK(alpha.status == 2);
  CHECK(has(alpha.output, "--alpha"));
  CHECK(has(alpha.output, "expected a finite number"));
}

TEST_CASE("gemm: FP8 points run and pass on the CPU, f8e4m3 -> bf16 and -> f8e4m3", "[cli][gemm][cpu][f8]") {
  const std::string dir = temp_dir("fp8");
  const std::string csv = dir + "/fp8.csv";
  const auto rows = sweep_rows("gemm --shapes 64x48x80 --dtype f8e4m3,f16 --bias f32 --act relu --trans nt "
                                "--fast-accum --backend cpu --iters 3", csv, "2 points, 2 passed", 3);
  CHECK(rows[1].rfind("64,48,80,1,f8e4m3,bf16,f32,relu,nt,", 0) == 0);
  CHECK(rows[2].rfind("64,48,80,1,f16,f16,f32,relu,nt,", 0) == 0);
  auto o = run_gexec("gemm --shapes 64x48x80 --dtype f8e4m3 --out-dtype f8e4m3 --backend cpu --iters 3");
  INFO(o.output);
  CHECK(o.status == 0);
  CHECK(has(o.output, "1 point, 1 passed"));
  auto bad = run_gexec("gemm --shapes 64x48x80 --dtype f8e5m2 --backend cpu --iters 3");
  CHECK(bad.status == 2);
  CHECK(has(bad.output, "f8e5m2 x f8e5m2"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("gemm: --append with --tags adds rows under the same header; another header is refused", "[cli][gemm][cpu]") {
  const std::string dir = temp_dir("append");
  const std::string csv = dir + "/a.csv";
  const std::string args = "gemm --m 32 --n 32 --k 32 --backend cpu --iters 2 --csv '" + csv + "' ";
  REQUIRE(run_gexec(args + "--tags run:1").status == 0);
  auto second = run_gexec(args + "--tags run:2 --append");
  INFO(second.output);
  REQUIRE(second.status == 0);
  const auto rows = lines(read(csv));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].substr(rows[0].size() - 4) == ",run");
  CHECK(rows[1].substr(rows[1].size() - 2) == ",1");
  CHECK(rows[2].substr(rows[2].size() - 2) == ",2");
  auto other = run_gexec(args + "--tags host:x --append");
  CHECK(other.status == 2);
  CHECK(has(other.output, "other columns"));
  CHECK(lines(read(csv)).size() == 3);  // untouched
  std::filesystem::remove_all(dir);
}

TEST_CASE("gemm: a failing point does not stop the sweep, and the exit status is 1", "[cli][gemm][cpu]") {
  const std::string dir = temp_dir("fail");
  // A point that stops with an error (no cuBLASLt candidate 3 on the CPU) is a row, and the sweep
  // goes on to the next.
  auto r = run_gexec("gemm --m 32,48 --n 32 --k 64 --backend cpu --iters 2 --algo 3 --json '" + dir + "/f.json'");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(has(r.output, "2 points, 0 passed, 2 failed"));
  auto doc = nlohmann::json::parse(read(dir + "/f.json"));
  REQUIRE(doc["points"].size() == 2);
  CHECK(doc["points"][0]["result"] == "error");
  CHECK(doc["points"][1]["result"] == "error");
  CHECK(doc["result"] == "fail");
  // The table names the error on each point's line.
  auto e = run_gexec("gemm --m 32 --n 32,48 --k 64 --backend cpu --iters 2 --algo 3");
  INFO(e.output);
  CHECK(e.status == 1);
  CHECK(has(e.output, "2 points, 0 passed, 2 failed"));
  CHECK(has(e.output, "--algo 3"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("gemm: runs without NVML, and its JSON carries options, environment and samples", "[cli][gemm][nvml][cpu]") {
  const std::string dir = temp_dir("json");
  auto r = run_gexec("gemm --m 64 --n 96 --k 80 --bias f32 --act gelu --trans nt --backend cpu --iters 20 "
                     "--percentile 50,75 --json '" + dir + "/g.json' --export-times '" + dir + "/t.csv'");
  INFO(r.output);
  // GEXEC_NVML_LIBRARY is read per process: run it again with a library that does not exist.
  const std::string cmd = std::string("GEXEC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 '") + GEXEC_BINARY +
                          "' gemm --m 64 --n 96 --k 80 --backend cpu --iters 5 --json '" + dir + "/n.json' 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(r.status == 0);
  auto doc = nlohmann::json::parse(read(dir + "/g.json"));
  CHECK(doc["format"] == "gexec.gemm");
  CHECK(has(doc["command_line"].get<std::string>(), "gemm --m 64"));
  CHECK(doc["options"]["trans"] == "nt");
  CHECK(doc["environment"].contains("nvml"));
  const auto& p = doc["points"][0];
  CHECK(p["trans"] == "nt");
  CHECK(p["act"] == "gelu");
  CHECK(p["result"] == "pass");
  CHECK(p["percentiles_us"].contains("75"));
  CHECK(p["samples"].get<int>() >= 2);
  CHECK(p["max_abs"].is_number());
  CHECK(p["rel_fro"].is_number());
  const auto times = lines(read(dir + "/t.csv"));
  CHECK(int(times.size()) == p["samples"].get<int>() + 1);
  auto none = nlohmann::json::parse(read(dir + "/n.json"));
  CHECK(has(none["environment"]["nvml"].get<std::string>(), "unavailable"));
  CHECK(has(none["environment"]["nvml"].get<std::string>(), "/nonexistent/libnvidia-ml.so.1"));
  CHECK(none["points"][0]["result"] == "pass");
  CHECK(none["points"][0]["power"]["start"].is_null());
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: identical reruns are no regression, a slower run is (exit 1)", "[cli][compare][cpu]") {
  const std::string dir = temp_dir("compare");
  auto r = run_gexec("gemm --m 64,128 --n 96 --k 80 --backend cpu --iters 10 -q --json '" + dir + "/a.json'");
  REQUIRE(r.status == 0);
  auto same = run_gexec("compare '" + dir + "/a.json' '" + dir + "/a.json'");
  INFO(same.output);
  CHECK(same.status == 0);
  CHECK(has(same.output, "0 slower"));
  CHECK_FALSE(has(same.output, "SLOW"));
  CHECK_FALSE(has(same.output, "FAST"));
  // The same points, as if measured quietly (a loaded CPU's spread could hide anything), and
  // again three times slower.
  auto doc = nlohmann::json::parse(read(dir + "/a.json"));
  for (auto& p : doc["points"]) p["spread"] = 0.01;
  std::ofstream(dir + "/quiet.json") << doc.dump();
  for (auto& p : doc["points"]) p["median_us"] = p["median_us"].get<double>() * 3;
  std::ofstream(dir + "/slow.json") << doc.dump();
  auto slow = run_gexec("compare '" + dir + "/quiet.json' '" + dir + "/slow.json'");
  INFO(slow.output);
  CHECK(slow.status == 1);
  CHECK(has(slow.output, "SLOW"));
  CHECK(has(slow.output, "2 slower"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: several NEW files, Markdown, JSON and a plot; an output never replaces an input", "[cli][compare]") {
  const std::string dir = temp_dir("compare_reports");
  auto doc = [](double median) {
    nlohmann::json pts = nlohmann::json::array();
    for (int m : {64, 128})
      pts.push_back({{"m", m}, {"n", 96}, {"k", 80}, {"batch", 1}, {"dtype", "f16"}, {"out_dtype", "f16"},
                     {"bias", "none"}, {"act", "none"}, {"trans", "nn"}, {"l2", "warm"}, {"backend", "cpu"},
                     {"median_us", median * m}, {"spread", 0.01}, {"result", "pass"}});
    return nlohmann::json{{"format", "gexec.gemm"}, {"version", 1}, {"points", pts}}.dump();
  };
  std::ofstream(dir + "/base.json") << doc(1.0);
  std::ofstream(dir + "/same.json") << doc(1.0);
  std::ofstream(dir + "/slow.json") << doc(3.0);
  const std::string files = "'" + dir + "/base.json' '" + dir + "/same.json' '" + dir + "/slow.json'";
  auto r = run_gexec("compare " + files + " --markdown '" + dir + "/c.md' --json '" + dir + "/c.json'");
  INFO(r.output);
  CHECK(r.status == 1);  // slow.json is slower
  CHECK(has(r.output, "== " + dir + "/same.json against"));
  CHECK(has(r.output, "2 rows: 0 faster, 2 slower"));
  CHECK(has(read(dir + "/c.md"), "**SLOW**"));
  const auto j = nlohmann::json::parse(read(dir + "/c.json"));
  REQUIRE(j["comparisons"].size() == 2);
  CHECK(j["comparisons"][0]["summary"]["same"] == 2);
  CHECK(j["comparisons"][1]["summary"]["slower"] == 2);
  // --json - prints the JSON alone.
  auto alone = run_gexec("compare " + files + " --json - 2>/dev/null");
  CHECK_NOTHROW(nlohmann::json::parse(alone.output));
  // An output over one of the files compared is refused before anything is read.
  auto over = run_gexec("compare " + files + " --markdown '" + dir + "/slow.json'");
  INFO(over.output);
  CHECK(over.status == 2);
  CHECK(has(over.output, "--markdown"));
  CHECK(read(dir + "/slow.json") == doc(3.0));
  // The plot: a PNG where python3 has matplotlib, else exit 3 saying what is missing.
  const bool matplotlib = std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
  auto plot = run_gexec("compare " + files + " --plot '" + dir + "/c.png'");
  INFO(plot.output);
  if (matplotlib) {
    CHECK(plot.status == 1);
    CHECK(read(dir + "/c.png").rfind("\x89PNG", 0) == 0);
  } else {
    WARN("python3 has no matplotlib here: the plot's refusal is tested, not the image");
    CHECK(plot.status == 3);
    CHECK(has(plot.output, "matplotlib is not available"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("run --report - writes the JSON alone on stdout, with options and environment", "[cli][report][cpu]") {
  const std::string cmd = std::string("'") + GEXEC_BINARY + "' run --backend cpu --iters 3 --report - '" +
                          source_path("graphs/gemm_bias_relu.json") + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  CHECK(pclose(p) == 0);
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(out));
  CHECK(doc["result"] == "pass");
  CHECK(has(doc["command_line"].get<std::string>(), "--report -"));
  CHECK(doc["options"]["iters"] == 3);
  CHECK(doc["environment"].contains("nvml"));
  CHECK(doc["timing"]["samples"].get<int>() >= 1);
}

TEST_CASE("run --load-inputs warns about files that match no input, and when none was loaded", "[cli][cpu]") {
  const std::string dir = temp_dir("load");
  std::ofstream(dir + "/Weights.npy") << "not read";
  auto r = run_gexec("run --backend cpu --load-inputs '" + dir + "' '" + source_path("graphs/gemm_bias_relu.json") + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "Weights.npy (no tensor Weights) was not loaded"));
  CHECK(has(r.output, "no input was loaded from"));
  std::filesystem::remove_all(dir);
}

#else

GEXEC_SKIPPED_TEST("gemm and compare end to end on the CPU backend", "[cli][gemm][cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU

TEST_CASE("gemm: --duration takes several rounds on the CPU backend", "[cli][gemm]") {
  // The later rounds pass no graph_used flag: the CPU device once wrote through that null pointer.
  auto r = run_gexec("gemm --m 32 --n 32 --k 32 --dtype f32 --backend cpu --iters 5 --warmup 0 --duration 0.3");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.signal == 0);
  CHECK(has(r.output, "1 point, 1 passed"));
}
