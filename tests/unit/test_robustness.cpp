// No crash, no hang, no lost file (issue 13): valid graphs with unused inputs, writes that are
// atomic and never clobber the user's files, bounded messages, options checked up front. Each
// case runs the real binary on files it writes into its own temporary folder.
#if GEXEC_HAVE_CPU

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"
#include "memory_refusal.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using gexec::test::has;
using gexec::test::ProcessResult;
using gexec::test::q;
using gexec::test::read;
using gexec::test::shell;
using gexec::test::source_path;
using gexec::test::TempDir;
using gexec::test::write;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// gexec with a time limit: a hang shows as exit 124, not as a test that never ends.
ProcessResult run_cli(const std::string& args, int seconds = 120) {
  return shell("timeout -s KILL " + std::to_string(seconds) + " " + q(GEXEC_BINARY) + " " + args);
}

// Every line of what gexec printed is valid UTF-8 and bounded.
void check_lines(const std::string& out, size_t max_line = 600) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    INFO(line.substr(0, 200));
    CHECK(gexec::printable(line) == line);
    CHECK(line.size() <= max_line);
  }
}

// One f32 RELU from X to Y, plus whatever extra tensors and ops the test wants.
std::string relu_graph(const std::string& extra_tensors = "", const std::string& extra_ops = "",
                       const std::string& outputs = "\"Y\"") {
  return R"({"format": "gexec.graph", "version": 1, "name": "g", "tensors": [
    {"name": "X", "shape": [4, 8], "dtype": "f32"}, {"name": "Y", "shape": [4, 8], "dtype": "f32"})" +
         extra_tensors + R"(],
  "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]})" + extra_ops + R"(],
  "outputs": [)" + outputs + "]}";
}

bool no_temporaries(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".gexec-tmp-") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("an input no op reads runs, dumps its declared values, and is never read out of the arena", "[robust]") {
  TempDir d("unused");
  const std::string g = d / "g.json";
  write(g, relu_graph(R"(, {"name": "U", "shape": [4], "dtype": "f32", "init": {"values": [1, 2, 3, 4]}},
    {"name": "K", "shape": [2], "dtype": "f16", "constant": true, "init": {"values": [5, 6]}})"));
  for (const char* extra : {"", "--passes none", "--verify none", "--passes none --verify none"}) {
    fs::remove_all(d / "dump");
    const auto r = run_cli("run --backend cpu " + std::string(extra) + " --dump " + q(d / "dump") + " " + q(g));
    INFO(extra << "\n" << r.output);
    REQUIRE(r.status == 0);
    CHECK(has(r.output, "result: pass"));
    auto u = gexec::read_npy(d / "dump/U.npy");
    REQUIRE(u.ok());
    CHECK(u->values == std::vector<double>{1, 2, 3, 4});
    auto k = gexec::read_npy(d / "dump/K.npy");
    REQUIRE(k.ok());
    CHECK(k->values == std::vector<double>{5, 6});
  }
}

TEST_CASE("a huge unused input runs; read only by a dead op, or dumped, it is refused up front with exit 3", "[robust]") {
  TempDir d("huge");
  const std::string huge = R"(, {"name": "H", "shape": [1048576, 1048576], "dtype": "f32"})";
  const std::string unused = d / "unused.json", dead = d / "dead.json";
  write(unused, relu_graph(huge));
  write(dead, relu_graph(huge + R"(, {"name": "D", "shape": [1048576, 1048576], "dtype": "f32"})",
                         R"(, {"op_type": "RELU", "inputs": ["H"], "outputs": ["D"]})"));
  auto r = run_cli("run --backend cpu " + q(unused));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "result: pass"));
  r = run_cli("run --backend cpu --dump " + q(d / "dump") + " " + q(unused));
  INFO(r.output);
  gexec::test::check_memory_refusal(r, "host");
  r = run_cli("run --backend cpu " + q(dead));
  INFO(r.output);
  gexec::test::check_memory_refusal(r, "host");
}

TEST_CASE("host memory is estimated before the run and refused under an address-space limit", "[robust]") {
  if (kAsan) {
    WARN("skipped: ASan reserves terabytes of address space, so ulimit -v cannot be used under it");
    return;
  }
  TempDir d("hostmem");
  // 1 GiB in, 1 GiB out: the reference alone holds 16 bytes per element of both (8 GiB).
  const std::string g = d / "g.json";
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [16384, 16384], "dtype": "f32"}, {"name": "Y", "shape": [16384, 16384], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]}]})");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = shell("ulimit -v 4000000; timeout -s KILL 120 " + q(GEXEC_BINARY) + " run --backend cpu " + q(g));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.signal == 0);
  CHECK(has(r.output, "bytes of host memory (an estimate: reference"));
  CHECK(has(r.output, "the address-space limit (ulimit -v)"));
  CHECK_FALSE(has(r.output, "result:"));
  CHECK(s < 20);  // refused before the run, not after 18 s of it
}

namespace {

// The address space (KiB) gexec has mapped when a run sizes its host memory: the libraries it
// loads, whatever they are in this build. Read off a refusal under a limit of 4 GiB, which names
// the bytes left.
int64_t address_space_in_use_kib(const TempDir& d) {
  const std::string g = d / "huge.json";
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [16384, 16384], "dtype": "f32"}, {"name": "Y", "shape": [16384, 16384], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]}]})");
  const int64_t limit = int64_t(4) << 20;
  const auto r = shell("ulimit -v " + std::to_string(limit) + "; timeout -s KILL 60 " + q(GEXEC_BINARY) +
                       " run --backend cpu " + q(g));
  const size_t at = r.output.find("the process has ");
  INFO(r.output);
  REQUIRE(at != std::string::npos);
  REQUIRE(has(r.output, "(the address-space limit (ulimit -v))"));
  return limit - std::stoll(r.output.substr(at + 16)) / 1024;
}

// The smallest address-space limit (KiB, to 6 MiB) in [lo, hi] under which `env gexec args` exits 0.
int64_t least_address_space_kib(const std::string& env, const std::string& args, int64_t lo, int64_t hi) {
  while (hi - lo > (6 << 10)) {
    const int64_t mid = (lo + hi) / 2;
    const auto r = shell("ulimit -v " + std::to_string(mid) + "; " + env + " timeout -s KILL 60 " + q(GEXEC_BINARY) +
                         " " + args);
    (r.status == 0 ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

TEST_CASE("under an address-space limit a CPU run passes or is refused (exit 3), never spins in OpenBLAS", "[robust]") {
  if (kAsan) {
    WARN("skipped: ASan reserves terabytes of address space, so ulimit -v cannot be used under it");
    return;
  }
  // OpenBLAS maps a 128 MiB work buffer per thread (its workers' as it loads, the caller's on its
  // first product) and, when it cannot, retries forever at 100% CPU. From what the binary needs to
  // start to well past it, every limit must end quickly: refused up front, or run.
  TempDir d("openblas");
  const std::string g = q(source_path("graphs/gemm_bias_relu.json"));
  // Below this much, OpenBLAS cannot start its threads as it loads: it says so and exits 1.
  const int64_t in_use = address_space_in_use_kib(d);
  const int64_t start = least_address_space_kib("", "validate " + g, in_use - (64 << 10), in_use + (320 << 10));
  int passed = 0, refused = 0;
  for (int64_t extra = 0; extra <= (480 << 10); extra += (96 << 10)) {
    const auto r = shell("ulimit -v " + std::to_string(start + extra) + "; timeout -s KILL 30 " + q(GEXEC_BINARY) +
                         " run --backend cpu " + g);
    INFO("ulimit -v " << start + extra << "\n" << r.output);
    REQUIRE(r.signal == 0);
    REQUIRE((r.status == 0 || r.status == 3));  // 137 would be the timeout: a hang
    if (r.status == 0) {
      ++passed;
      CHECK(has(r.output, "result: pass"));
    }
    if (r.status == 3) {
      ++refused;
      gexec::test::check_memory_refusal(r, "host");
    }
    // OpenBLAS's worker threads map their buffers as the library loads, whatever the command:
    // one that cannot would spin, and exit would wait for it forever.
    const auto v = shell("ulimit -v " + std::to_string(start + extra) + "; timeout -s KILL 30 " + q(GEXEC_BINARY) +
                         " validate " + g);
    INFO(v.output);
    CHECK(v.status == 0);
  }
  CHECK(refused > 0);
  CHECK(passed > 0);
}

TEST_CASE("compare streams its files: a large one compares in little memory, and running out is exit 3", "[robust]") {
  if (kAsan) {
    WARN("skipped: ASan reserves terabytes of address space, so ulimit -v cannot be used under it");
    return;
  }
  TempDir d("bigcompare");
  // 20000 points with all the fields `gemm --json` writes (about 1.5 KB each, 30 MB): a reader
  // that parses the whole document needs several times that.
  std::string text = R"({"format": "gexec.gemm", "version": 1, "points": [)";
  const std::string rest = R"(, "n": 96, "k": 80, "batch": 1, "dtype": "f16", "out_dtype": "f16", "bias": "f32",
    "act": "relu", "trans": "nn", "alpha": 1.0, "backend": "cuda", "pad": "auto", "l2": "warm",
    "kernel": "cublaslt.gemm_bias_act", "algo_index": 0, "algo_count": 8, "algo": "algo 21 tile 15 stages 8 splitK 1",
    "max_abs": 0.0009765625, "rel_fro": 0.00012, "result": "pass", "error": "", "samples": 100, "reps": 17,
    "median_us": 12.5, "p90_us": 12.9, "p99_us": 13.4, "min_us": 12.1, "mean_us": 12.6, "cv": 0.021, "spread": 0.011,
    "tflops": 301.2, "gbps": 1200.5, "peak_pct": 43.1, "peak_tflops": 700.0, "graph_used": true, "rotating_sets": 1,
    "percentiles_us": {"50": 12.5, "90": 12.9, "99": 13.4}, "warnings": ["the SM clock fell from 1980 to 1650 MHz"],
    "power": {"start": {"sm_mhz": 1980, "mem_mhz": 3201, "power_w": 400.5, "power_limit_w": 700, "temp_c": 50,
    "throttle": 0}, "end": {"sm_mhz": 1980, "mem_mhz": 3201, "power_w": 500.5, "power_limit_w": 700, "temp_c": 60,
    "throttle": 0}, "min_sm_mhz": 1965, "max_power_w": 520.0, "throttle_seen": "none"}})";
  for (int i = 0; i < 20000; ++i) text += std::string(i ? ", " : "") + R"({"m": )" + std::to_string(i + 1) + rest;
  text += "]}";
  write(d / "big.json", text);
  write(d / "small.json", R"({"format": "gexec.gemm", "version": 1, "points": []})");
  // One OpenBLAS thread from the start (its workers map 128 MiB each as the library loads): the
  // limits below are then this process's own needs.
  const std::string env = "OPENBLAS_NUM_THREADS=1";
  const int64_t in_use = address_space_in_use_kib(d);
  const int64_t start = least_address_space_kib(env, "compare " + q(d / "small.json") + " " + q(d / "small.json"),
                                                in_use - (256 << 10), in_use + (64 << 10));
  const std::string big = " compare " + q(d / "big.json") + " " + q(d / "big.json");
  auto r = shell("ulimit -v " + std::to_string(start + (64 << 10)) + "; " + env + " timeout -s KILL 60 " +
                 q(GEXEC_BINARY) + big);
  INFO(r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000 : 0));
  CHECK(r.status == 0);
  CHECK(has(r.output, "20000 rows: 0 faster, 0 slower, 20000 same"));
  // Just what two empty files need: the points cannot be held.
  r = shell("ulimit -v " + std::to_string(start) + "; " + env + " timeout -s KILL 60 " + q(GEXEC_BINARY) + big);
  INFO(r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000 : 0));
  CHECK(r.signal == 0);
  CHECK(r.status == 3);
  CHECK(has(r.output, "out of host memory"));
}

TEST_CASE("--iters and the other counts have readable bounds", "[robust]") {
  const std::string g = source_path("graphs/gemm_f32.json");
  struct Case {
    const char* args;
    const char* message;
  } cases[] = {
      {"--iters 2147483647", "expected an integer from 0 to 10000000"},
      {"--samples 0", "expected an integer from 1 to 9223372036854775807"},
      {"--autotune-top 0", "expected an integer from 1 to 2048"},
      {"--warmup -1", "expected an integer from 0 to 10000000"},
      {"--seed -1", "expected an integer from 0 to 18446744073709551615"},
      {"--seed 18446744073709551616", "expected an integer from 0 to 18446744073709551615"},
      {"--seed 99999999999999999999999", "expected an integer from 0 to 18446744073709551615"},
      {"--atol nan", "expected a finite number"},
      {"--rtol nan", "expected a finite number"},
      {"--atol inf", "expected a finite number"},
      {"--rtol -1", "expected a finite number"},
      {"--atol -1", "expected a finite number from 0 to 1e300, got \"-1\""},  // not 301 digits
      {"--warmup-ms -1", "expected a finite number from 0 to 3600000, got"},
      {"--report ''", "the path is empty"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli("run --backend cpu " + std::string(c.args) + " " + q(g));
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, c.message));
    CHECK_FALSE(has(r.output, "result:"));
    check_lines(r.output, 400);
  }
  const auto ok = run_cli("run --dry-run --arch sm_90 --seed 18446744073709551615 " + q(g));
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK(has(ok.output, "seed 18446744073709551615"));
}

TEST_CASE("non-UTF-8 text never aborts --report, and a failed run still replaces the report whole", "[robust]") {
  TempDir d("utf8");
  // A Latin-1 file name, a graph that fails with a key cut inside a UTF-8 sequence.
  const std::string g = d / "caf\xe9.json";
  std::string key(63, 'k');
  for (int i = 0; i < 10; ++i) key += "\xc3\xa9";
  write(g, R"({"format": "gexec.graph", "version": 1, ")" + key + R"(": 1, "tensors": [{"name": "X", "shape": [4], "dtype": "f32"}], "ops": []})");
  const std::string rep = d / "report.json";
  write(rep, "an earlier report");
  const auto r = run_cli("run --backend cpu --report " + q(rep) + " " + q(g));
  INFO(gexec::printable(r.output, true));
  CHECK(r.status == 2);
  CHECK(r.signal == 0);
  check_lines(r.output);
  const std::string text = read(rep);
  REQUIRE(nlohmann::json::accept(text));
  const auto j = nlohmann::json::parse(text);
  CHECK(j["result"] == "error");
  CHECK(j["exit_code"] == 2);
  CHECK(has(j["error"].get<std::string>(), "unknown key"));
  CHECK(no_temporaries(d.path));
}

TEST_CASE("a FIFO as init.file or --load-inputs file is refused at once, not waited on", "[robust]") {
  TempDir d("fifo");
  REQUIRE(mkfifo((d / "w.npy").c_str(), 0600) == 0);
  const std::string g = d / "g.json";
  write(g, relu_graph(R"(, {"name": "W", "shape": [3], "dtype": "f32", "init": {"file": "w.npy"}})"));
  auto r = run_cli("validate " + q(g), 20);
  INFO(r.output);
  CHECK(r.status == 2);  // 124 would be the time limit
  CHECK(has(r.output, "is not a regular file (a FIFO)"));
  fs::create_directories(d / "in");
  REQUIRE(mkfifo((d / "in/X.npy").c_str(), 0600) == 0);
  write(g, relu_graph());
  r = run_cli("run --backend cpu --load-inputs " + q(d / "in") + " " + q(g), 20);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(has(r.output, "--load-inputs: "));
  CHECK(has(r.output, "is not a regular file (a FIFO)"));
  // A FIFO given as --tuning-cache is neither read nor waited on.
  REQUIRE(mkfifo((d / "cache.json").c_str(), 0600) == 0);
  r = run_cli("run --backend cpu --tuning-cache " + q(d / "cache.json") + " " + q(g), 20);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(has(r.output, "is not a regular file (a FIFO)"));
}

TEST_CASE("gexec never overwrites one of its own inputs without --force", "[robust]") {
  TempDir d("clobber");
  fs::copy_file(source_path("tests/data/npy/mat2x3_f32.npy"), d / "W.npy");
  const std::string g = d / "g.json";
  const std::string graph = relu_graph(R"(, {"name": "W", "shape": [2, 3], "dtype": "f32", "init": {"file": "W.npy"}})");
  write(g, graph);
  const std::string w = read(d / "W.npy");
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--report " + q(g), "--report: " + g + ": is the graph file of this run"},
      {"--dry-run --emit-graph " + q(g), "--emit-graph: " + g + ": is the graph file of this run"},
      {"--dump " + q(d.path.string()), "is the init.file of tensor \"W\" of this run"},
      {"--report " + q(d / "W.npy"), "is the init.file of tensor \"W\""},
      {"--report " + q(d / "r.json") + " --emit-graph " + q(d / "r.json"), "is also the file of --report"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli("run --backend cpu " + c.args + " " + q(g));
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, c.message));
    if (!has(c.message, "is also")) CHECK(has(r.output, "--force"));
    CHECK_FALSE(has(r.output, "result:"));
    CHECK(read(g) == graph);
    CHECK(read(d / "W.npy") == w);
  }
  // --load-inputs files are inputs too.
  fs::create_directories(d / "io");
  fs::copy_file(source_path("tests/data/npy/mat2x3_f32.npy"), d / "io/W.npy");
  auto r = run_cli("run --backend cpu --load-inputs " + q(d / "io") + " --dump " + q(d / "io") + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(has(r.output, "is the --load-inputs file of \"W\""));
  // With --force the user's choice stands.
  r = run_cli("run --backend cpu --force --report " + q(g) + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(read(g))["result"] == "pass");
}

TEST_CASE("a --tuning-cache file that is not a gexec tuning cache is refused unless --force", "[robust]") {
  TempDir d("tuning");
  const std::string g = d / "g.json", other = d / "settings.json";
  write(g, relu_graph());
  write(other, R"({"editor": "vim", "entries": 3})");
  auto r = run_cli("run --backend cpu --tuning-cache " + q(other) + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(has(r.output, "is not a gexec tuning cache"));
  CHECK(read(other) == R"({"editor": "vim", "entries": 3})");
  r = run_cli("run --backend cpu --force --tuning-cache " + q(other) + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
  // A real cache (or none yet) is fine.
  write(d / "cache.json", R"({"format": "gexec.tuning", "device": "x", "cuda": "", "cublaslt": "", "entries": {}})");
  r = run_cli("run --backend cpu --tuning-cache " + q(d / "cache.json") + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("a failed write keeps the old file, says why, and leaves no temporary", "[robust]") {
  TempDir d("atomic");
  const std::string g = d / "g.json", rep = d / "r.json";
  write(g, relu_graph());
  write(rep, "old report");
  // A file-size limit of 1 KiB (SIGXFSZ ignored, so the write fails with EFBIG): the report,
  // several KiB, cannot be written whole.
  const auto r = shell("trap '' XFSZ; ulimit -f 1; timeout -s KILL 60 " + q(GEXEC_BINARY) + " run --backend cpu --report " +
                       q(rep) + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(has(r.output, "--report: " + rep + ": cannot write the file: File too large (the file was left as it was)"));
  CHECK(read(rep) == "old report");
  CHECK(no_temporaries(d.path));
}

TEST_CASE("SIGINT during --dump leaves each file whole or absent, and no temporary", "[robust]") {
  TempDir d("sigint");
  const std::string g = d / "g.json";
  // 128 MiB per tensor: the dump takes long enough to be interrupted in the middle.
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [8192, 4096], "dtype": "f32"}, {"name": "Y", "shape": [8192, 4096], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]}]})");
  const fs::path dump = d.path / "dump";
  fs::create_directories(dump);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(GEXEC_BINARY, GEXEC_BINARY, "run", "--backend", "cpu", "--verify", "none", "--dump", dump.c_str(), g.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for a temporary to appear (the dump has started), then interrupt.
  bool seen = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  bool exited = false;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    seen = !no_temporaries(dump);
    if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!exited) {
    // Ctrl-C twice: the first asks the run to stop at its next step (the file being written is
    // finished), the second, where it comes before that, ends it through the handler that removes
    // the temporary (the two signals may also arrive as one).
    if (seen) {
      kill(pid, SIGINT);
      kill(pid, SIGINT);
    } else {
      kill(pid, SIGKILL);
    }
    waitpid(pid, &status, 0);
  }
  INFO("temporary seen: " << seen << ", status " << status);
  REQUIRE(seen);
  CHECK(((WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) || (WIFEXITED(status) && WEXITSTATUS(status) == 130)));
  CHECK(no_temporaries(dump));
  // What is there is complete: it reads back with its full shape.
  for (const auto& e : fs::directory_iterator(dump)) {
    auto a = gexec::read_npy(e.path().string());
    INFO(e.path().string());
    REQUIRE(a.ok());
    CHECK(a->values.size() == size_t(8192) * 4096);
  }
}

TEST_CASE("--emit-graph into another folder rewrites init.file paths so the graph loads there", "[robust]") {
  TempDir d("emit");
  fs::create_directories(d / "a");
  fs::create_directories(d / "b/c");
  fs::copy_file(source_path("tests/data/npy/mat2x3_f32.npy"), d / "a/W.npy");
  const std::string g = d / "a/g.json";
  write(g, relu_graph(R"(, {"name": "W", "shape": [2, 3], "dtype": "f32", "init": {"file": "W.npy"}},
    {"name": "Z", "shape": [2, 3], "dtype": "f32"})", R"(, {"op_type": "RELU", "inputs": ["W"], "outputs": ["Z"]})",
                    R"("Y", "Z")"));
  const std::string out = d / "b/c/out.json";
  auto r = run_cli("run --dry-run --arch sm_90 --emit-graph " + q(out) + " " + q(g));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(has(read(out), "\"file\":\"../../a/W.npy\""));
  r = run_cli("validate " + q(out));
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("output paths are checked before the run (exit 2), not after result: pass", "[robust]") {
  TempDir d("outpaths");
  const std::string g = d / "g.json";
  write(g, relu_graph());
  write(d / "file", "x");
  fs::create_directories(d / "folder");
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--report " + q(d / "missing/r.json"), "does not exist"},
      {"--report " + q(d / "folder"), "is a folder; name a file"},
      {"--emit-graph " + q(d / "file/x.json"), "is not a folder"},
      {"--dump " + q(d / "file"), "exists and is not a folder"},
      {"--report " + q(d / ("folder/" + std::string(256, 'x'))), "a file or folder name is at most 255 bytes"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli("run --backend cpu " + c.args + " " + q(g));
    INFO(c.args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, c.message));
    CHECK_FALSE(has(r.output, "result:"));
  }
  if (geteuid() != 0) {  // root writes anywhere
    fs::permissions(d.path / "folder", fs::perms::owner_read | fs::perms::owner_exec);
    const auto r = run_cli("run --backend cpu --report " + q(d / "folder/r.json") + " " + q(g));
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, "Permission denied"));
  }
}

TEST_CASE("a 300-character tensor name gets a dump file name that works, and --load-inputs reads it", "[robust]") {
  TempDir d("longname");
  const std::string name = "x" + std::string(299, 'a');
  const std::string g = d / "g.json";
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": ")" + name + R"(", "shape": [4], "dtype": "f32", "init": {"values": [1, -2, 3, -4]}},
    {"name": "Y", "shape": [4], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": [")" + name + R"("], "outputs": ["Y"]}]})");
  auto r = run_cli("run --backend cpu --dump " + q(d / "dump") + " " + q(g));
  INFO(r.output);
  REQUIRE(r.status == 0);
  int files = 0;
  std::string long_file;
  for (const auto& e : fs::directory_iterator(d.path / "dump")) {
    ++files;
    if (e.path().filename() != "Y.npy") long_file = e.path().filename().string();
  }
  CHECK(files == 2);
  CHECK(long_file.size() <= 255);
  CHECK(long_file.starts_with(name.substr(0, 200) + "~"));
  auto a = gexec::read_npy(d / ("dump/" + long_file));
  REQUIRE(a.ok());
  CHECK(a->values == std::vector<double>{1, -2, 3, -4});
  r = run_cli("run --backend cpu --load-inputs " + q(d / "dump") + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "loaded 1 input"));
}

TEST_CASE("--load-inputs and init.file accept the same .npy dtypes", "[robust]") {
  TempDir d("dtypes");
  const std::string g = d / "g.json";
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [2, 3], "dtype": "bf16"}, {"name": "Y", "shape": [2, 3], "dtype": "bf16"}],
    "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]}]})");
  fs::create_directories(d / "in");
  fs::copy_file(source_path("tests/data/npy/mat2x3_f16.npy"), d / "in/X.npy");
  auto r = run_cli("run --backend cpu --load-inputs " + q(d / "in") + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(has(r.output, "holds float16 data; a bf16 tensor reads float32 or float64 files"));
  fs::remove(d / "in/X.npy");
  fs::copy_file(source_path("tests/data/npy/mat2x3_f64_v2.npy"), d / "in/X.npy");
  r = run_cli("run --backend cpu --load-inputs " + q(d / "in") + " " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("dry-run sizes beyond 2^62 are exact and no two live tensors share an offset", "[robust]") {
  TempDir d("bigplan");
  const std::string g = d / "g.json";
  // Three 2^62-byte inputs: the arena would pass 2^63 - 1.
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "A", "shape": [1073741824, 2147483648], "dtype": "f16"},
    {"name": "B", "shape": [1073741824, 2147483648], "dtype": "f16"},
    {"name": "C", "shape": [1073741824, 2147483648], "dtype": "f16"},
    {"name": "S", "shape": [1073741824, 2147483648], "dtype": "f16"},
    {"name": "T", "shape": [1073741824, 2147483648], "dtype": "f16"}],
    "ops": [{"op_type": "ADD", "inputs": ["A", "B"], "outputs": ["S"]}, {"op_type": "ADD", "inputs": ["S", "C"], "outputs": ["T"]}]})");
  const auto r = run_cli("run --dry-run --arch sm_90 " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "the arena would exceed 9223372036854775807 bytes"));
  CHECK(has(r.output, "  A @0 (4.0 EiB)"));
  CHECK(has(r.output, "  B @4611686018427387904 (4.0 EiB)"));
  CHECK(has(r.output, "  C @beyond 2^63"));
}

TEST_CASE("messages are bounded one-line UTF-8: huge numbers, long cycles, raw .npy headers", "[robust]") {
  TempDir d("messages");
  // A number of 10 MB, once malformed (a syntax error quoting it) and once well formed.
  const std::string digits(10 << 20, '7');
  write(d / "bad_number.json", R"({"format": "gexec.graph", "version": 1, "seed": )" + digits + "x}");
  write(d / "long_number.json", R"({"format": "gexec.graph", "version": 1, "seed": 0.)" + digits + "}");
  for (const char* f : {"bad_number.json", "long_number.json"}) {
    const auto r = run_cli("validate " + q(d / f));
    INFO(f << "\n" << r.output.substr(0, 600));
    CHECK(r.status == 2);
    check_lines(r.output);
  }
  // A cycle through 100k ops.
  std::string tensors, ops;
  constexpr int kOps = 100000;
  for (int i = 0; i < kOps; ++i) {
    tensors += std::string(i ? "," : "") + R"({"name": "t)" + std::to_string(i) + R"(", "shape": [2], "dtype": "f32"})";
    ops += std::string(i ? "," : "") + R"({"op_type": "RELU", "name": "op)" + std::to_string(i) + R"(", "inputs": ["t)" +
           std::to_string(i) + R"("], "outputs": ["t)" + std::to_string((i + 1) % kOps) + R"("]})";
  }
  write(d / "cycle.json", R"({"format": "gexec.graph", "version": 1, "tensors": [)" + tensors + R"(], "ops": [)" + ops +
                              R"(], "outputs": ["t1"]})");
  auto r = run_cli("validate " + q(d / "cycle.json"));
  INFO(r.output.substr(0, 600));
  CHECK(r.status == 2);
  CHECK(has(r.output, "ops in all)"));
  check_lines(r.output);
  // A .npy header with terminal escapes, newlines and 60 KB of text.
  std::string header = "{'descr': '\x1b[31m<f4\n" + std::string(60000, 'z') + "', }";
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += char(header.size() & 0xff);
  npy += char(header.size() >> 8);
  write(d / "w.npy", npy + header);
  write(d / "g.json", relu_graph(R"(, {"name": "W", "shape": [3], "dtype": "f32", "init": {"file": "w.npy"}})"));
  r = run_cli("validate " + q(d / "g.json"));
  INFO(gexec::printable(r.output.substr(0, 600), true));
  CHECK(r.status == 2);
  CHECK(has(r.output, "malformed .npy header \""));
  CHECK_FALSE(has(r.output, "\x1b"));
  check_lines(r.output);
}

TEST_CASE("non-finite results are named as such", "[robust]") {
  TempDir d("nonfinite");
  const std::string g = d / "g.json";
  // 70000 overflows f16 to inf: the output and the reference are both inf, which is a match.
  write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [4], "dtype": "f16", "init": {"values": [1, 70000, 2, 3]}},
    {"name": "Y", "shape": [4], "dtype": "f16"}],
    "ops": [{"op_type": "RELU", "inputs": ["X"], "outputs": ["Y"]}]})");
  auto r = run_cli("run --backend cpu " + q(g));
  INFO(r.output);
  CHECK(r.status == 0);
  // An output with inf (and one with NaN) where the reference is finite fails, and says so.
  const std::string in = d / "in", out = d / "out";
  std::filesystem::create_directories(in);
  std::filesystem::create_directories(out);
  const std::vector<float> x = {1, 2, 3, 4};
  REQUIRE(gexec::write_npy_f32(in + "/X.npy", {4}, x.data()));
  const std::vector<float> y = {1, INFINITY, std::nanf(""), 4};
  REQUIRE(gexec::write_npy_f32(out + "/Y.npy", {4}, y.data()));
  r = run_cli("check " + q(g) + " --inputs " + q(in) + " --outputs " + q(out));
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(has(r.output, "got inf (non-finite), expected 2"));
  CHECK(has(r.output, "the output holds 2 non-finite values (inf or NaN) and the reference 0"));
}

TEST_CASE("file errors give the system's reason", "[robust]") {
  TempDir d("reasons");
  const std::string g = d / "g.json";
  auto with_file = [&](const std::string& file) {
    write(g, relu_graph(R"(, {"name": "W", "shape": [3], "dtype": "f32", "init": {"file": ")" + file + R"("}})"));
    return run_cli("validate " + q(g));
  };
  fs::create_symlink("loop.npy", d.path / "loop.npy");
  fs::create_directories(d / "folder.npy");
  struct Case {
    const char* file;
    const char* message;
  } cases[] = {
      {"loop.npy", "Too many levels of symbolic links"},
      {"folder.npy", "is a folder, not a file"},
      {"", "the file path is empty"},
      {"missing.npy", "No such file or directory"},
  };
  for (const Case& c : cases) {
    const auto r = with_file(c.file);
    INFO(c.file << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, c.message));
  }
  if (geteuid() != 0) {
    fs::copy_file(source_path("tests/data/npy/vec3_f32.npy"), d / "locked.npy");
    chmod((d / "locked.npy").c_str(), 0);
    const auto r = with_file("locked.npy");
    INFO(r.output);
    CHECK(has(r.output, "Permission denied"));
  }
  const auto r = run_cli("validate " + q(d / "folder.npy"));
  CHECK(r.status == 2);
  CHECK(has(r.output, "is a folder, not a file"));
}

TEST_CASE("the check phase is linear in the number of outputs", "[robust]") {
  TempDir d("linear");
  auto check_ms = [&](int outputs) {
    std::string tensors = R"({"name": "X", "shape": [2], "dtype": "f32"})", ops;
    for (int i = 0; i < outputs; ++i) {
      tensors += R"(, {"name": "y)" + std::to_string(i) + R"(", "shape": [2], "dtype": "f32"})";
      ops += std::string(i ? "," : "") + R"({"op_type": "RELU", "inputs": ["X"], "outputs": ["y)" + std::to_string(i) + R"("]})";
    }
    const std::string g = d / ("g" + std::to_string(outputs) + ".json");
    write(g, R"({"format": "gexec.graph", "version": 1, "tensors": [)" + tensors + R"(], "ops": [)" + ops + "]}");
    const auto r = run_cli("run --backend cpu --passes none " + q(g), 600);
    REQUIRE(r.status == 0);
    const size_t at = r.output.find(", check ");
    REQUIRE(at != std::string::npos);
    return std::stod(r.output.substr(at + 8));
  };
  const double small = check_ms(5000), large = check_ms(20000);
  INFO("check: " << small << " ms at 5000 outputs, " << large << " ms at 20000");
  // Four times the outputs: about four times the time when linear, sixteen when quadratic.
  CHECK(large < 8 * std::max(small, 20.0));
}

#endif  // GEXEC_HAVE_CPU
