// The files the commands write, end to end: never one of the command's own inputs (check as run),
// names the file system cannot take refused before any work, links written through and left as
// links, this process's stdout written on, and `gemm --csv` grown row by row so that concurrent
// --append sweeps lose no row.
#if GEXEC_HAVE_CPU

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using gexec::test::has;
using gexec::test::ProcessResult;
using gexec::test::q;
using gexec::test::read;
using gexec::test::source_path;
using gexec::test::TempDir;

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}


// A shell command line; stderr joined unless the command redirects it itself.
ProcessResult shell(const std::string& cmd, bool join_stderr = true) {
  ProcessResult r;
  FILE* p = popen((cmd + (join_stderr ? " 2>&1" : "")).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int w = pclose(p);
  if (WIFEXITED(w)) r.status = WEXITSTATUS(w);
  if (WIFSIGNALED(w)) r.signal = WTERMSIG(w);
  return r;
}

std::string gexec_cmd() { return "timeout -s KILL 120 " + q(GEXEC_BINARY); }

ProcessResult run_cli(const std::string& args) { return shell(gexec_cmd() + " " + args); }

// A graph and its inputs and outputs dumped by a CPU run, as `gexec check` reads them.
void make_check_files(const TempDir& d) {
  fs::copy_file(source_path("graphs/gemm_bias_relu.json"), d / "g.json");
  const auto r = run_cli("run --backend cpu --dump " + q(d / "io") + " " + q(d / "g.json"));
  INFO(r.output);
  REQUIRE(r.status == 0);
}

}  // namespace

TEST_CASE("check --report never overwrites the graph or an .npy it reads, unless --force", "[cli][check][cpu]") {
  TempDir d("checkin");
  make_check_files(d);
  const std::string check = "check " + q(d / "g.json") + " --inputs " + q(d / "io") + " --outputs " + q(d / "io");
  for (const std::string& target : {d / "g.json", d / "io/A.npy", d / "io/C.npy"}) {
    const std::string before = read(target);
    const auto r = run_cli(check + " --report " + q(target));
    INFO(target << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, "gexec does not overwrite its own inputs (pass --force to allow it)"));
    CHECK_FALSE(has(r.output, "result:"));
    CHECK(read(target) == before);
  }
  // A report of a graph that does not even load never lands on it either.
  std::ofstream(d / "bad.json") << "{ not a graph";
  auto r = run_cli("check " + q(d / "bad.json") + " --inputs " + q(d / "io") + " --outputs " + q(d / "io") +
                   " --report " + q(d / "bad.json"));
  CHECK(r.status == 2);
  CHECK(read(d / "bad.json") == "{ not a graph");
  r = run_cli("run --backend cpu --report " + q(d / "bad.json") + " " + q(d / "bad.json"));
  CHECK(r.status == 2);
  CHECK(read(d / "bad.json") == "{ not a graph");
  // That early check is of the graph only: a report into the --dump folder the run makes is fine.
  r = run_cli("run --backend cpu --dump " + q(d / "new") + " --report " + q(d / "new/r.json") + " " + q(d / "g.json"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(read(d / "new/r.json"))["result"] == "pass");
  // --force: the user's choice stands (the check read the file before the report replaced it).
  r = run_cli(check + " --force --report " + q(d / "io/Bias.npy"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(read(d / "io/Bias.npy"))["result"] == "pass");
}

TEST_CASE("check --report - writes the JSON alone on stdout, as run does", "[cli][check][cpu]") {
  TempDir d("checkstdout");
  make_check_files(d);
  const auto r = shell(gexec_cmd() + " check " + q(d / "g.json") + " --inputs " + q(d / "io") + " --outputs " +
                           q(d / "io") + " --report - 2>/dev/null",
                       false);
  CHECK(r.status == 0);
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(r.output));
  CHECK(doc["command"] == "check");
  CHECK(doc["result"] == "pass");
}

TEST_CASE("only a report goes to stdout: '-' for another output is refused before the run", "[cli][cpu]") {
  TempDir d("dashout");
  const std::string graph = gexec::test::source_path("graphs/gemm_bias_relu.json");
  for (const char* option : {"--emit-graph", "--emit-gemms", "--dump"}) {
    const auto r = shell("cd " + q(d.path.string()) + " && " + gexec_cmd() + " run " + q(graph) + " --backend cpu " +
                             option + " - 2>&1",
                         false);
    INFO(option << ": " << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, std::string(option) + ": '-' (stdout) is taken by --report alone"));
    CHECK_FALSE(has(r.output, "result:"));  // refused before anything ran
    CHECK_FALSE(fs::exists(d.path / "-"));
  }
}

TEST_CASE("a name over 255 bytes in an output path is refused before any work", "[cli][cpu]") {
  TempDir d("longname");
  const std::string lng = d / (std::string(300, 'n') + ".json");
  const std::string g = q(source_path("graphs/gemm_bias_relu.json"));
  const std::string sweep = "gemm --m 32 --n 32 --k 32 --backend cpu --iters 1 ";
  make_check_files(d);
  const std::string check = "check " + q(d / "g.json") + " --inputs " + q(d / "io") + " --outputs " + q(d / "io");
  for (const std::string& args :
       {"run --backend cpu --report " + q(lng) + " " + g, "run --backend cpu --emit-graph " + q(lng) + " " + g,
        "run --backend cpu --dump " + q(lng) + " " + g, "run --backend cpu --report " + q(lng + "/r.json") + " " + g,
        sweep + "--json " + q(lng), sweep + "--csv " + q(lng), sweep + "--export-times " + q(lng),
        check + " --report " + q(lng)}) {
    const auto r = run_cli(args);
    INFO(args.substr(0, 120) << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(has(r.output, "is 305 bytes; a file or folder name is at most 255 bytes"));
    CHECK_FALSE(has(r.output, "result:"));
    CHECK_FALSE(has(r.output, "points, "));
  }
}

TEST_CASE("outputs are written through symbolic links, which stay links", "[cli][cpu]") {
  TempDir d("links");
  fs::create_directories(d / "real");
  for (const char* name : {"r.json", "g.json", "c.csv", "p.json"}) {
    std::ofstream(d / "real/" + name) << "old";
    fs::create_symlink(fs::path("real") / name, d / name);
  }
  auto r = run_cli("run --backend cpu --report " + q(d / "r.json") + " " + q(source_path("graphs/gemm_bias_relu.json")));
  INFO(r.output);
  CHECK(r.status == 0);
  r = run_cli("gemm --m 32 --n 32 --k 32 --backend cpu --iters 1 --csv " + q(d / "c.csv") + " --json " + q(d / "p.json"));
  INFO(r.output);
  CHECK(r.status == 0);
  for (const char* name : {"r.json", "c.csv", "p.json"}) {
    INFO(name);
    CHECK(fs::is_symlink(fs::symlink_status(d / name)));
    CHECK(read(d / "real/" + name) != "old");
  }
  CHECK(lines(read(d / "real/c.csv")).size() == 2);
  CHECK(nlohmann::json::parse(read(d / "real/p.json"))["format"] == "gexec.gemm");
}

TEST_CASE("--csv on this process's stdout is written there, after the table", "[cli][gemm][cpu]") {
  TempDir d("stdout");
  // The shell opens out.txt as stdout; /dev/fd/1 is that descriptor. It must not be replaced by a
  // new file (nor fail): the table and the rows both end up in out.txt, in order.
  const auto r = shell(gexec_cmd() + " gemm --m 32,48 --n 32 --k 32 --backend cpu --iters 1 -q --csv /dev/fd/1 > " +
                       q(d / "out.txt"));
  INFO(r.output);
  CHECK(r.status == 0);
  const std::string out = read(d / "out.txt");
  INFO(out);
  const size_t table = out.find("kernel");
  const size_t row = out.find("\n32,32,32,1,f16,");
  const size_t summary = out.find("2 points, 2 passed");
  CHECK(out.rfind("m,n,k,batch,", 0) == 0);  // the CSV's header, written when the sweep starts
  CHECK(table != std::string::npos);
  CHECK(row != std::string::npos);
  CHECK(summary != std::string::npos);
  CHECK(table < row);
  CHECK(row < summary);
  CHECK(has(out, "\n48,32,32,1,f16,"));
}

TEST_CASE("a FIFO or /dev/null as an output is written in place; a socket is refused up front", "[cli][cpu]") {
  TempDir d("special");
  const std::string g = q(source_path("graphs/gemm_bias_relu.json"));
  auto r = run_cli("run --backend cpu --report /dev/null " + g);
  INFO(r.output);
  CHECK(r.status == 0);
  struct stat st {};
  REQUIRE(stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  REQUIRE(mkfifo((d / "fifo").c_str(), 0600) == 0);
  // The reader gives up after a while: a gexec that never opens the FIFO must not hang the test.
  r = shell("timeout 60 cat " + q(d / "fifo") + " > " + q(d / "got.json") + " & " + gexec_cmd() +
            " run --backend cpu --report " +
            q(d / "fifo") + " " + g + "; wait");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(read(d / "got.json"))["result"] == "pass");
  // No reader: a clear refusal, and the FIFO stays a FIFO.
  r = run_cli("run --backend cpu --report " + q(d / "fifo") + " " + g);
  CHECK(r.status == 3);
  CHECK(has(r.output, "is a FIFO that no process reads"));
  REQUIRE(stat((d / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A socket cannot take a file: said before the run.
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(s >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = d / "sock";
  REQUIRE(sock.size() < sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  r = run_cli("run --backend cpu --report " + q(sock) + " " + g);
  ::close(s);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(has(r.output, "is a socket; name a file"));
  CHECK_FALSE(has(r.output, "result:"));
}

TEST_CASE("gemm --csv --append: concurrent sweeps lose no row, and the file is appended in place", "[cli][gemm][cpu]") {
  TempDir d("append");
  const std::string csv = d / "rows.csv";
  const std::string sweep = gexec_cmd() + " gemm --m 8:40:8 --n 8,16 --k 8,16 --backend cpu --iters 1 -q --append --csv " +
                            q(csv) + " > /dev/null";
  // The first sweep makes the file; three more append to it at the same time.
  auto r = shell(sweep);
  INFO(r.output);
  REQUIRE(r.status == 0);
  struct stat before {};
  REQUIRE(stat(csv.c_str(), &before) == 0);
  r = shell(sweep + " & " + sweep + " & " + sweep + " & wait");
  INFO(r.output);
  CHECK(r.status == 0);
  const auto rows = lines(read(csv));
  REQUIRE(rows.size() == 1 + 4 * 20);
  const size_t commas = size_t(std::count(rows[0].begin(), rows[0].end(), ','));
  for (size_t i = 1; i < rows.size(); ++i) {
    INFO(rows[i]);
    CHECK(size_t(std::count(rows[i].begin(), rows[i].end(), ',')) == commas);
    CHECK(has(rows[i], ",pass,"));
  }
  struct stat after {};
  REQUIRE(stat(csv.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // grown in place, never rewritten
}

TEST_CASE("gemm --csv: an interrupted sweep leaves the header and whole rows only", "[cli][gemm][cpu]") {
  TempDir d("interrupt");
  const std::string csv = d / "rows.csv";
  // Stopped by SIGINT after 2 s (exit 124), or done before it (exit 0) on a fast machine.
  const auto r = shell("timeout -s INT 2 " + q(GEXEC_BINARY) +
                       " gemm --m 8:4000:8 --n 64 --k 64 --backend cpu --iters 1 -q --csv " + q(csv) + " > /dev/null");
  CHECK((r.status == 124 || r.status == 0));
  const std::string text = read(csv);
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\n');
  const auto rows = lines(text);
  CHECK(rows[0].rfind("m,n,k,batch,", 0) == 0);
  const size_t commas = size_t(std::count(rows[0].begin(), rows[0].end(), ','));
  for (const std::string& row : rows) CHECK(size_t(std::count(row.begin(), row.end(), ',')) == commas);
  for (const auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename() == "rows.csv");
}

#else

#include "skip.hpp"
GEXEC_SKIPPED_TEST("output files end to end on the CPU backend", "[cli][cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU
