// The CUDA backend's failure paths, each provoked: a graph larger than the device, allocations
// failing part-way, a fused epilogue refused, a kernel launch failing during a run. Faults are
// injected through GEXEC_FAULT (src/backends/cuda/fault.hpp), in the real binary and in-process.
#include "catch.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/backends/cuda/fault.hpp"
#include "../example_graphs.hpp"
#include "../unit/process.hpp"
#include "../unit/memory_refusal.hpp"
#include "gexec/app/commands.hpp"

using namespace gexec;
using gexec::test::ProcessResult;
using gexec::test::run_gexec;
using gexec::test::has;
using gexec::test::source_path;

namespace {

// Sets GEXEC_FAULT for the processes started while it lives. The test process itself is steered
// through fault::configure() instead, so its own faults never depend on the environment.
class FaultEnv {
 public:
  explicit FaultEnv(const std::string& spec) { setenv("GEXEC_FAULT", spec.c_str(), 1); }
  ~FaultEnv() { unsetenv("GEXEC_FAULT"); }
  FaultEnv(const FaultEnv&) = delete;
  FaultEnv& operator=(const FaultEnv&) = delete;
};

ProcessResult run_with_fault(const std::string& spec, const std::string& args) {
  FaultEnv env(spec);
  return run_gexec(args);
}

// Turns the in-process faults off again however a test ends.
struct FaultOff {
  ~FaultOff() { (void)cuda::fault::configure(""); }
};

struct InProcess {
  Exit exit = Exit::ok;
  std::string out, err;
};

InProcess run_in_process(const std::string& graph, const std::string& passes = "default") {
  RunOptions opts;
  opts.graph_path = graph;
  opts.backend = "cuda";
  opts.verify = "none";
  opts.passes = passes;
  std::ostringstream out, err;
  InProcess r;
  r.exit = run_command(opts, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

size_t free_device_bytes() {
  size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  return free_b;
}

using test::example_graphs;

// A graph file in the temporary folder, removed with the object.
class TempGraph {
 public:
  TempGraph(const std::string& name, const std::string& json)
      : path_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()) + ".json")) {
    std::ofstream(path_) << json;
  }
  ~TempGraph() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// One f16 MATMUL C[m,n] = A[m,k] B[k,n].
std::string matmul_graph(const std::string& name, int64_t m, int64_t n, int64_t k) {
  const auto s = [](int64_t a, int64_t b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + "]"; };
  return R"({"format": "gexec.graph", "version": 1, "name": ")" + name + R"(", "tensors": [
    {"name": "A", "shape": )" + s(m, k) + R"(, "dtype": "f16"},
    {"name": "B", "shape": )" + s(k, n) + R"(, "dtype": "f16"},
    {"name": "C", "shape": )" + s(m, n) + R"(, "dtype": "f16"}],
  "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}],
  "outputs": ["C"]})";
}

}  // namespace

TEST_CASE("faults: GEXEC_FAULT is parsed strictly", "[gpu][faults]") {
  FaultOff off;
  CHECK(cuda::fault::configure("alloc:3,epilogue,launch:2").ok());
  CHECK(cuda::fault::active() == "alloc:3,epilogue,launch:2");
  CHECK(cuda::fault::refuse_epilogue());
  CHECK_FALSE(cuda::fault::break_launch());
  CHECK(cuda::fault::break_launch());
  CHECK_FALSE(cuda::fault::break_launch());
  for (const char* bad : {"alloc:0", "alloc:", "alloc:x", "alloc:2x", "launch:-1", "oom", "epilogue,nope"}) {
    INFO(bad);
    const Status s = cuda::fault::configure(bad);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Exit::bad_input);
    CHECK(has(s.error().message, "GEXEC_FAULT"));
  }
  CHECK(cuda::fault::active() == "alloc:3,epilogue,launch:2");  // a bad spec changed nothing
  CHECK(cuda::fault::configure("").ok());
  CHECK(cuda::fault::active().empty());
  CHECK_FALSE(cuda::fault::refuse_epilogue());
  CHECK_FALSE(cuda::fault::fail_allocation());

  // The binary says so and injects nothing.
  const ProcessResult r = run_with_fault("bogus", "run " + source_path("graphs/gemm_bias_relu.json"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "GEXEC_FAULT: unknown fault \"bogus\""));
  CHECK(has(r.output, "result: pass"));
}

TEST_CASE("faults: a graph larger than the device memory is refused before any allocation", "[gpu][faults]") {
  // A is 262144 x 409600 f16: 214.7 GB, more than any current GPU has.
  const TempGraph g("gexec_huge", matmul_graph("huge", 262144, 64, 409600));
  const int64_t a_bytes = int64_t(262144) * 409600 * 2;
  // alloc:1 fails the first allocation: if the arena were tried at all, the message would be
  // the injected out-of-memory instead of the refusal.
  const ProcessResult r = run_with_fault("alloc:1", "run --backend cuda '" + g.path() + "'");
  INFO(r.output);
  CHECK(has(r.output, "gexec: the graph needs "));
  CHECK(has(r.output, "bytes free (of "));
  CHECK_FALSE(has(r.output, "cudaMalloc"));
  // The bytes named are at least those of A.
  CHECK(gexec::test::check_memory_refusal(r, "device") >= a_bytes);
}

TEST_CASE("faults: every allocation failing in turn exits 3 and releases the rest", "[gpu][faults]") {
  FaultOff off;
  for (const std::string& graph : example_graphs()) {
    INFO(graph);
    REQUIRE(cuda::fault::configure("").ok());
    InProcess clean = run_in_process(graph);
    INFO(clean.err);
    REQUIRE(clean.exit == Exit::ok);
    bool failed_after_first = false;
    for (int n = 1; n <= 8; ++n) {
      INFO("alloc:" << n);
      REQUIRE(cuda::fault::configure("alloc:" + std::to_string(n)).ok());
      const InProcess r = run_in_process(graph);
      INFO(r.err);
      if (n == 1) REQUIRE(r.exit == Exit::runtime);  // the arena is always the first
      if (r.exit == Exit::ok) break;                 // fewer than n allocations: nothing failed
      REQUIRE(r.exit == Exit::runtime);
      CHECK(has(r.err, "cudaErrorMemoryAllocation"));
      CHECK(has(r.err, "cudaMalloc("));
      if (n == 1) CHECK(has(r.err, "allocating the arena"));
      if (n > 1) {
        failed_after_first = true;
        CHECK(has(r.err, "op "));  // the op whose preparation needed the memory
      }
    }
    CHECK(failed_after_first);  // every example has a GEMM, which needs the workspace
  }
}

TEST_CASE("faults: memory allocated before a failing allocation is released", "[gpu][faults]") {
  FaultOff off;
  // A 96 MiB arena, far above the noise in the free memory the driver reports.
  const TempGraph g("gexec_leak", matmul_graph("leak", 4096, 4096, 4096));
  REQUIRE(cuda::fault::configure("").ok());
  const InProcess clean = run_in_process(g.path());
  INFO(clean.err);
  REQUIRE(clean.exit == Exit::ok);
  const size_t before = free_device_bytes();
  const size_t slack = size_t(16) << 20;
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    REQUIRE(cuda::fault::configure("alloc:2").ok());  // the arena succeeds, the workspace fails
    const InProcess r = run_in_process(g.path());
    INFO(r.err);
    REQUIRE(r.exit == Exit::runtime);
    CHECK(has(r.err, "allocating the cuBLASLt workspace"));
    CHECK(free_device_bytes() + slack >= before);
  }
  // And the device is as good as before: a clean run in the same process passes.
  REQUIRE(cuda::fault::configure("").ok());
  const InProcess again = run_in_process(g.path());
  INFO(again.err);
  CHECK(again.exit == Exit::ok);
  CHECK(free_device_bytes() + slack >= before);
}

TEST_CASE("faults: an allocation failing part-way in the binary exits 3", "[gpu][faults]") {
  for (const char* spec : {"alloc:1", "alloc:2"}) {
    const ProcessResult r = run_with_fault(spec, "run --backend cuda " + source_path("graphs/mlp3.json"));
    INFO(spec << "\n" << r.output);
    CHECK(r.status == 3);
    CHECK(r.signal == 0);
    CHECK(has(r.output, "gexec: "));
    CHECK(has(r.output, "cudaErrorMemoryAllocation (out of memory)"));
    CHECK_FALSE(has(r.output, "result:"));
  }
}

TEST_CASE("faults: a refused epilogue falls back to the unfused path, says why, and passes", "[gpu][faults]") {
  {
    const ProcessResult r = run_gexec("run --backend cuda " + source_path("graphs/gemm_bias_relu.json"));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_FALSE(has(r.output, "RELU_BIAS epilogue"));  // fused when nothing interferes
  }
  const ProcessResult r = run_with_fault("epilogue", "run --backend cuda " + source_path("graphs/gemm_bias_relu.json"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "note: op "));
  CHECK(has(r.output, "RELU_BIAS epilogue"));
  CHECK(has(r.output, "result: pass"));

  // The unfused path computes every example correctly.
  for (const std::string& graph : example_graphs()) {
    const ProcessResult e = run_with_fault("epilogue", "run --backend cuda '" + graph + "'");
    INFO(graph << "\n" << e.output);
    CHECK(e.status == 0);
    CHECK(has(e.output, "result: pass"));
  }
}

TEST_CASE("faults: a CUDA error during a run exits 3 naming the op and the error", "[gpu][faults]") {
  // Without the passes the BIAS_ADD after the MATMUL is an elementwise kernel of its own, and
  // the first elementwise launch: it happens in the run, not in the set-up.
  const std::string graph = source_path("graphs/gemm_bias_relu_primitives.json");
  const ProcessResult r = run_with_fault("launch", "run --backend cuda --passes none " + graph);
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.signal == 0);
  CHECK(has(r.output, "gexec: running op "));
  CHECK(has(r.output, "BIAS_ADD"));
  CHECK(has(r.output, "cudaErrorInvalidValue"));  // what the H200 with CUDA 13.0 reports for a 0-thread block
  CHECK_FALSE(has(r.output, "result:"));

  // In-process, the error leaves nothing behind: the next run on the device passes.
  FaultOff off;
  REQUIRE(cuda::fault::configure("launch").ok());
  const InProcess bad = run_in_process(graph, "none");
  INFO(bad.err);
  CHECK(bad.exit == Exit::runtime);
  CHECK(has(bad.err, "cudaErrorInvalidValue"));
  REQUIRE(cuda::fault::configure("").ok());
  const InProcess good = run_in_process(graph, "none");
  INFO(good.err);
  CHECK(good.exit == Exit::ok);
}

// A group's generated kernel and, with GEXEC_FAULT=compile, the program interpreter it falls back
// to: both pass the full check on a chain over an odd number of elements (the scalar tail), with
// a bias vector and inputs of two dtypes, and the report says which of the two ran.
TEST_CASE("faults: a fused group runs its generated kernel, or the interpreter where compiling fails", "[gpu][faults][blocks]") {
  const std::string dir = std::filesystem::temp_directory_path() / ("gexec_group_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string graph = dir + "/chain.json", report = dir + "/report.json";
  std::ofstream(graph) << R"({"format": "gexec.graph", "version": 1, "name": "chain", "seed": 4,
 "tensors": [
  {"name": "a", "shape": [257, 1023], "dtype": "f16", "init": {"dist": "normal", "std": 2}},
  {"name": "b", "shape": [257, 1023], "dtype": "f32", "init": {"dist": "normal", "std": 2}},
  {"name": "bias", "shape": [1023], "dtype": "f16", "init": {"dist": "normal", "std": 1}},
  {"name": "t0", "shape": [257, 1023], "dtype": "f16"}, {"name": "t1", "shape": [257, 1023], "dtype": "f16"},
  {"name": "t2", "shape": [257, 1023], "dtype": "f16"}, {"name": "t3", "shape": [257, 1023], "dtype": "f32"},
  {"name": "y", "shape": [257, 1023], "dtype": "f32"}],
 "ops": [{"op_type": "ADD", "inputs": ["a", "b"], "outputs": ["t0"]},
         {"op_type": "SILU", "inputs": ["t0"], "outputs": ["t1"]},
         {"op_type": "BIAS_ADD", "inputs": ["t1", "bias"], "outputs": ["t2"]},
         {"op_type": "MUL", "inputs": ["t2", "a"], "outputs": ["t3"]},
         {"op_type": "GELU", "inputs": ["t3"], "outputs": ["y"]}],
 "outputs": ["y", "t1"]})";
  for (const char* fault : {"", "compile"}) {
    INFO("GEXEC_FAULT=" << fault);
    const ProcessResult r =
        run_with_fault(fault, "-v run '" + graph + "' --backend cuda --verify full --report '" + report + "' --force");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(has(r.output, "result: pass"));
    std::ifstream in(report);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(has(text, "cuda.fused_elementwise"));
    CHECK(has(text, *fault ? "\"program interpreter\"" : "\"generated kernel (compiled in "));
    if (*fault) CHECK(has(r.output, "was not compiled (refused (GEXEC_FAULT=compile)); it runs on the program interpreter"));
  }
  std::filesystem::remove_all(dir);
}
