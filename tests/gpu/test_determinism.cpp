// Determinism on the device: the same graph and seed give bit-identical inputs and outputs in two
// runs in one process and in two processes (compared through --dump's .npy files).
#include "catch.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../example_graphs.hpp"
#include "../unit/process.hpp"
#include "gexec/app/commands.hpp"

using namespace gexec;
using gexec::test::run_gexec;
using gexec::test::source_path;

namespace fs = std::filesystem;

namespace {

// A fresh folder in the temporary folder, removed with the object.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("gexec_det_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// File name -> bytes of every .npy file in a folder.
std::map<std::string, std::string> npy_files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".npy") continue;
    std::ifstream in(e.path(), std::ios::binary);
    files[e.path().filename().string()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

Exit run_in_process(const std::string& graph, const std::string& dump, uint64_t seed, std::string* log) {
  RunOptions opts;
  opts.graph_path = graph;
  opts.backend = "cuda";
  opts.seed = seed;
  opts.dump_dir = dump;
  std::ostringstream out, err;
  const Exit e = run_command(opts, out, err);
  *log = out.str() + err.str();
  return e;
}

void require_same(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, bytes] : a) {
    INFO(name);
    const auto it = b.find(name);
    REQUIRE(it != b.end());
    CHECK(bytes.size() == it->second.size());
    // Compared as a flag, so that a failure names the file rather than printing binary bytes.
    const bool identical = bytes == it->second;
    CHECK(identical);
  }
}

}  // namespace

TEST_CASE("determinism: every example graph, twice in one process and in two processes", "[gpu][determinism]") {
  const std::vector<std::string> graphs = test::example_graphs();
  for (const std::string& graph : graphs) {
    for (const uint64_t seed : {uint64_t(0), uint64_t(12345)}) {
      INFO(graph << " seed " << seed);
      const TempDir d1("a"), d2("b"), d3("c"), d4("d");
      std::string log;
      REQUIRE(run_in_process(graph, d1.path(), seed, &log) == Exit::ok);
      INFO(log);
      REQUIRE(run_in_process(graph, d2.path(), seed, &log) == Exit::ok);
      for (const TempDir* d : {&d3, &d4}) {
        const auto r = run_gexec("run --backend cuda --seed " + std::to_string(seed) + " --dump '" + d->path() +
                                 "' '" + graph + "'");
        INFO(r.output);
        REQUIRE(r.status == 0);
      }
      const auto first = npy_files(d1.path());
      // Every input and every output is dumped: at least one of each.
      REQUIRE(first.size() >= 2);
      require_same(first, npy_files(d2.path()));
      require_same(first, npy_files(d3.path()));
      require_same(first, npy_files(d4.path()));
    }
  }
}

TEST_CASE("determinism: a different seed gives different inputs", "[gpu][determinism]") {
  // Guards the test above against comparing something that does not depend on the run at all.
  const std::string graph = source_path("graphs/gemm_bias_relu.json");
  const TempDir d1("s0"), d2("s1");
  std::string log;
  REQUIRE(run_in_process(graph, d1.path(), 1, &log) == Exit::ok);
  REQUIRE(run_in_process(graph, d2.path(), 2, &log) == Exit::ok);
  const auto a = npy_files(d1.path()), b = npy_files(d2.path());
  REQUIRE(a.size() == b.size());
  REQUIRE(a.count("A.npy") == 1);
  CHECK(a.at("A.npy") != b.at("A.npy"));
}
