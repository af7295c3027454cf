// ONNX models through the gexec binary: malformed files refused with exit 2 (never a crash), the
// file type told by content, `run` with ONNX test data and --expect, `import` to a graph file that
// runs to the same bits, and --dim.
#include "catch.hpp"
#include "skip.hpp"

#if GEXEC_HAVE_ONNX

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "gexec/io/text.hpp"
#include "onnx_builder.hpp"
#include "process.hpp"

using gexec::test::has;
using gexec::test::run_gexec;
using gexec::test::source_path;
namespace fs = std::filesystem;

namespace {

using gexec::test::q;

struct Dir {
  fs::path path;
  explicit Dir(const std::string& tag)
      : path(fs::temp_directory_path() / ("gexec_onnx_cli_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("onnx cli: every malformed model is refused with exit 2 and its reason", "[onnx][bad]") {
  const std::string dir = source_path("tests/data/onnx/bad");
  std::ifstream tsv(dir + "/expected.tsv");
  std::vector<std::pair<std::string, std::string>> expected;  // path, fragment
  std::string args;
  for (std::string line; std::getline(tsv, line);) {
    if (line.empty()) continue;
    const std::string path = dir + "/" + line.substr(0, line.find('\t'));
    expected.emplace_back(path, line.substr(line.find('\t') + 1));
    args += " " + q(path);
  }
  // One validate for all of them (a process each costs seconds on a loaded machine): every problem
  // line starts with its file.
  const auto r = run_gexec("validate" + args);
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.status == 2);
  CHECK_FALSE(has(r.output, ": ok ("));
  for (const auto& [path, fragment] : expected) {
    INFO(path << ": " << fragment);
    bool found = false;
    std::istringstream lines(r.output);
    for (std::string l; std::getline(lines, l);) found = found || (l.rfind(path + ": ", 0) == 0 && has(l, fragment));
    CHECK(found);
  }
  std::istringstream lines(r.output);
  for (std::string l; std::getline(lines, l);) {
    CHECK(gexec::printable(l) == l);
    CHECK(l.size() <= 600);
  }
  CHECK(expected.size() >= 15);
  // Every file there is listed.
  size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(dir)) on_disk += e.path().extension() == ".onnx";
  CHECK(on_disk == expected.size());
}

TEST_CASE("onnx cli: truncations of a model at every length are refused, never crash", "[onnx][bad]") {
  Dir d("cut");
  const std::string model = slurp(source_path("tests/data/onnx/mlp.onnx"));
  REQUIRE(model.size() > 100);
  // Every 37th length: a cut in every field of the file, in one validate.
  std::string args;
  for (size_t n = 1; n < model.size(); n += 37) {
    const std::string p = d / ("cut" + std::to_string(n) + ".onnx");
    std::ofstream(p, std::ios::binary) << model.substr(0, n);
    args += " " + q(p);
  }
  const auto r = run_gexec("validate" + args);
  CHECK(r.signal == 0);
  CHECK(r.status == 2);
  CHECK_FALSE(has(r.output, "internal"));
}

TEST_CASE("onnx cli: run with ONNX test data and --expect, validate, dry-run", "[onnx][cpu]") {
#if GEXEC_HAVE_CPU
  const std::string model = source_path("tests/data/onnx/mlp.onnx");
  const std::string data = source_path("tests/data/onnx/mlp_data");
  auto r = run_gexec("run " + q(model) + " --backend cpu --load-inputs " + q(data) + " --expect " + q(data));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "graph mlp (" + model + ", ONNX opset 17, from make_onnx.py)"));
  CHECK(has(r.output, "expect: against"));
  CHECK(has(r.output, "result: pass"));
  // The batch dimension came from input_0.pb.
  CHECK(has(r.output, "x @"));

  // The test data are inputs of the run: an output onto one is refused before anything runs.
  Dir d("data");
  for (const char* f : {"input_0.pb", "output_0.pb"}) fs::copy_file(data + "/" + f, d / f);
  const std::string before = slurp(d / "input_0.pb");
  r = run_gexec("run " + q(model) + " --backend cpu --load-inputs " + q(d.path.string()) + " --report " + q(d / "input_0.pb"));
  CHECK(r.status == 2);
  CHECK(has(r.output, "is a --load-inputs file of this run"));
  r = run_gexec("run " + q(model) + " --backend cpu --load-inputs " + q(d.path.string()) + " --expect " +
                q(d.path.string()) + " --report " + q(d / "output_0.pb"));
  CHECK(r.status == 2);
  CHECK(has(r.output, "is an --expect file of this run"));
  CHECK(slurp(d / "input_0.pb") == before);

  r = run_gexec("validate " + q(model) + " --dim batch=3");
  CHECK(r.status == 0);
  CHECK(has(r.output, ": ok (10 tensors, 5 ops; ONNX opset 17, from make_onnx.py; ops 2 Add, 2 MatMul, Relu)"));
  r = run_gexec("validate " + q(model));
  CHECK(r.status == 2);
  CHECK(has(r.output, "dimension 0 \"batch\" has no size"));
  r = run_gexec("run --dry-run " + q(model) + " --dim batch=2");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "GEMM_BIAS_ACT"));
  CHECK(has(r.output, "dry run: nothing executed"));
  r = run_gexec("run --dry-run " + q(model) + " --dim batch=2 --dim batch=3");
  CHECK(r.status == 2);
  CHECK(has(r.output, "--dim \"batch\" is given twice"));
  r = run_gexec("run --dry-run " + q(model) + " --dim batch");
  CHECK(r.status == 2);
  CHECK(has(r.output, "expected NAME=VALUE"));
  r = run_gexec("run --dry-run " + q(source_path("graphs/gemm_bias_relu.json")) + " --dim batch=2");
  CHECK(r.status == 2);
  CHECK(has(r.output, "--dim applies to ONNX models"));

  // gexec check of the model: --dim as for run. The dumped files hold gexec's shapes (the batch
  // folded into the rows), so alone they do not size the dimension, and the message says --dim.
  Dir dumped("dumped");
  const std::string files = (dumped.path / "d").string();
  r = run_gexec("run " + q(model) + " --backend cpu --dim batch=2 --dump " + q(files));
  REQUIRE(r.status == 0);
  r = run_gexec("check " + q(model) + " --dim batch=2 --inputs " + q(files) + " --outputs " + q(files));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "result: pass"));
  r = run_gexec("check " + q(model) + " --inputs " + q(files) + " --outputs " + q(files));
  CHECK(r.status == 2);
  CHECK(has(r.output, "give it with --dim batch=N"));
#else
  SUCCEED("skipped: " GEXEC_NO_CPU_BACKEND);
#endif
}

TEST_CASE("onnx cli: the file type is the content's, not the extension's", "[onnx]") {
  Dir d("sniff");
  fs::copy_file(source_path("tests/data/onnx/mlp.onnx"), d / "model.json");
  fs::copy_file(source_path("graphs/gemm_bias_relu.json"), d / "graph.onnx");
  auto r = run_gexec("validate " + q(d / "model.json") + " " + q(d / "graph.onnx") + " --dim batch=1");
  INFO(r.output);
  // --dim is for the ONNX model; the JSON graph under .onnx is refused for it, as a JSON graph.
  CHECK(has(r.output, d / "model.json" + ": ok (10 tensors, 5 ops; ONNX opset 17"));
  CHECK(has(r.output, "--dim applies to ONNX models; " + d / "graph.onnx" + " is a gexec graph (JSON)"));
  r = run_gexec("validate " + q(d / "graph.onnx"));
  CHECK(r.status == 0);
  CHECK(has(r.output, d / "graph.onnx" + ": ok (4 tensors, 1 ops)"));
}

TEST_CASE("onnx cli: import writes a graph and .npy weights that run to the same bits", "[onnx][cpu]") {
#if GEXEC_HAVE_CPU
  Dir d("import");
  const std::string model = source_path("tests/data/onnx/mlp.onnx");
  auto r = run_gexec("import " + q(model) + " -o " + q(d / "mlp.json") + " --weights " + q(d / "w") + " --dim batch=2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(has(r.output, "and 4 weight files in"));
  CHECK(fs::exists(d / "w/W1.npy"));
  const std::string text = slurp(d / "mlp.json");
  CHECK(has(text, "\"init\":{\"file\":\"w/W1.npy\"}"));
  // MatMul's weights are stored K-contiguous; their files hold the logical arrays all the same
  // (the run below would differ otherwise).
  CHECK(has(text, "\"layout\":\"colmajor\""));
  // Seed-drawn inputs (the same names, so the same values) and the same kernels: the same bits.
  r = run_gexec("run " + q(d / "mlp.json") + " --backend cpu --dump " + q(d / "a"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  r = run_gexec("run " + q(model) + " --dim batch=2 --backend cpu --dump " + q(d / "b"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  for (const char* f : {"x.npy", "y.npy"}) {
    INFO(f);
    REQUIRE(fs::exists(d / (std::string("a/") + f)));
    CHECK(slurp(d / (std::string("a/") + f)) == slurp(d / (std::string("b/") + f)));
  }
  // The graph file beside its weights by default; an existing weight file that is the model is refused.
  r = run_gexec("import " + q(model) + " -o " + q(d / "g2.json") + " --dim batch=2");
  CHECK(r.status == 0);
  CHECK(fs::exists(d / "W2.npy"));
  r = run_gexec("import " + q(source_path("graphs/gemm_bias_relu.json")) + " -o " + q(d / "g3.json"));
  CHECK(r.status == 2);
  CHECK(has(r.output, "is a gexec graph already"));
  fs::create_directories(d / "m");
  fs::copy_file(model, d / "m/W1.npy");
  r = run_gexec("import " + q(d / "m/W1.npy") + " -o " + q(d / "m/g4.json") + " --dim batch=2");
  CHECK(r.status == 2);
  CHECK(has(r.output, "gexec does not overwrite its own inputs"));
#else
  SUCCEED("skipped: " GEXEC_NO_CPU_BACKEND);
#endif
}

#else
GEXEC_SKIPPED_TEST("onnx cli: ONNX models through the binary", "[onnx]", "this build has no ONNX input (see the configure summary)")
#endif
