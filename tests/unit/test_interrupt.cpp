// Ctrl-C and progress, end to end: a sweep interrupted after its first row exits 130 with every
// row it finished in the CSV and the JSON; the progress line shows on a terminal only.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "catch.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using gexec::test::has;
using gexec::test::run_gexec;

extern char** environ;

namespace {

// A folder of the process's own, removed when the tests end.
std::string temp_dir(const std::string& what) {
  static const gexec::test::TempDir root("intr");
  const auto dir = root.path / what;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

using gexec::test::lines;
using gexec::test::read;

// Starts the binary with `args` (no shell), its output into `log`; SIGINT at its default in the
// child whatever the test runner set (a background job ignores SIGINT).
pid_t spawn_gexec(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all{GEXEC_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  if (posix_spawn(&pid, GEXEC_BINARY, &files, &attr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// Waits for the child, at most `seconds`; its exit status, or -1 (killed or still running: killed now).
int wait_exit(pid_t pid, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int w = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &w, WNOHANG) == pid) return WIFEXITED(w) ? WEXITSTATUS(w) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &w, 0);
  return -1;
}

}  // namespace

TEST_CASE("interrupt: Ctrl-C during a sweep keeps every finished row and exits 130", "[cli][interrupt]") {
  const std::string dir = temp_dir("sweep");
  const std::string csv = dir + "/rows.csv", json = dir + "/rows.json", log = dir + "/log.txt";
  // 60 points of half a second each (--duration, whatever the machine's speed): long enough to be
  // interrupted after the first.
  const pid_t pid = spawn_gexec({"gemm", "--m", "64:3840:64", "--n", "64", "--k", "64", "--dtype", "f32", "--backend",
                                 "cpu", "--iters", "20", "--duration", "0.5", "--warmup", "0", "--csv", csv, "--json",
                                 json},
                                log);
  REQUIRE(pid > 0);
  // The first row: the header and one line.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines(read(csv)).size() < 2 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(lines(read(csv)).size() >= 2);
  REQUIRE(kill(pid, SIGINT) == 0);
  const int status = wait_exit(pid, 60);
  INFO(read(log));
  CHECK(status == 130);
  CHECK(has(read(log), "gexec: interrupted (Ctrl-C) after "));
  // Every row complete: as many fields as the header, a result in each.
  const auto rows = lines(read(csv));
  REQUIRE(rows.size() >= 2);
  CHECK(rows.size() < 61);  // stopped: not every point ran
  const auto fields = [](const std::string& l) { return std::count(l.begin(), l.end(), ',') + 1; };
  for (const std::string& r : rows) CHECK(fields(r) == fields(rows[0]));
  // The JSON is whole and holds the same points.
  const auto doc = nlohmann::json::parse(read(json));
  CHECK(doc["result"] == "interrupted");
  CHECK(doc["points"].size() == rows.size() - 1);
  for (const auto& p : doc["points"]) CHECK(p["result"] == "pass");
  // No temporary file left beside the outputs.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    CHECK(e.path().filename().string().find("gexec-tmp") == std::string::npos);
}

TEST_CASE("interrupt: Ctrl-C during run's timing stops it with exit 130 and a report saying so", "[cli][interrupt]") {
  const std::string dir = temp_dir("run");
  const std::string report = dir + "/r.json", log = dir + "/log.txt";
  const pid_t pid = spawn_gexec({"run", gexec::test::source_path("graphs/mlp3.json"), "--backend", "cpu", "--iters",
                                 "1000000", "--report", report},
                                log);
  REQUIRE(pid > 0);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!has(read(log), "beyond") && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the timing
  REQUIRE(kill(pid, SIGINT) == 0);
  const int status = wait_exit(pid, 60);
  INFO(read(log));
  CHECK(status == 130);
  CHECK(has(read(log), "gexec: timing: interrupted (Ctrl-C)"));
  const auto doc = nlohmann::json::parse(read(report));
  CHECK(doc["result"] == "error");
  CHECK(has(doc["error"].dump(), "interrupted (Ctrl-C)"));
}

TEST_CASE("progress: drawn on a terminal, not when piped or under -q", "[cli][progress]") {
  if (access("/usr/bin/script", X_OK) != 0) {
    WARN("skipped: no /usr/bin/script to give gexec a terminal");
    return;
  }
  // About 1.5 s of points: the line appears after 1 s. (--duration on the CPU backend once crashed.)
  const std::string sweep = "gemm --m 64 --n 64 --k 64,80,96 --dtype f32 --backend cpu --duration 0.5 --iters 20";
  const std::string cmd = std::string(GEXEC_BINARY) + " " + sweep;
  gexec::test::ProcessResult on_tty;
  {
    const std::string line = "/usr/bin/script -qec '" + cmd + "' /dev/null 2>&1";
    FILE* p = popen(line.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) on_tty.output.append(buf, n);
    on_tty.status = WEXITSTATUS(pclose(p));
  }
  INFO(on_tty.output);
  CHECK(on_tty.status == 0);
  CHECK(has(on_tty.output, "\rgemm ["));
  CHECK(has(on_tty.output, "/3 "));
  CHECK(has(on_tty.output, " left"));
  auto piped = run_gexec(sweep);
  CHECK(piped.status == 0);
  CHECK_FALSE(has(piped.output, "gemm ["));
  auto quiet_tty = std::string("/usr/bin/script -qec '") + cmd + " -q' /dev/null 2>&1";
  FILE* p = popen(quiet_tty.c_str(), "r");
  REQUIRE(p);
  std::string quiet;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) quiet.append(buf, n);
  pclose(p);
  CHECK_FALSE(has(quiet, "gemm ["));
}
