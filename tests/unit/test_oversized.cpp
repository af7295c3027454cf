// A graph larger than the machine is refused with exit 3 before anything is allocated, and the
// CUDA backend's fault injection (GEXEC_FAULT) has no effect on the CPU backend.
#if GEXEC_HAVE_CPU

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "gexec/backends/cpu_device.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::run_gexec;
using gexec::test::has;
using gexec::test::source_path;

TEST_CASE("oversized: the CPU device refuses an arena beyond the physical memory", "[faults][cpu]") {
  auto dev = open_cpu_device();
  const int64_t total = dev->caps().total_bytes;
  REQUIRE(total > 0);
  auto r = dev->allocate_arena(total + (int64_t(1) << 30));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Exit::runtime);
  CHECK(has(r.error().message, "the graph needs " + std::to_string(total + (int64_t(1) << 30)) + " bytes"));
  CHECK(has(r.error().message, "bytes free (of " + std::to_string(total) + ")"));
  // A small one still works after the refusal.
  CHECK(dev->allocate_arena(4096).ok());
}

TEST_CASE("oversized: a graph larger than the machine exits 3 before allocating", "[faults][cpu]") {
  // A is 2^20 x 2^21 f16: 4 TiB. Were it allocated, overcommit could let it through (and ASan
  // would abort on the size), so a clean exit 3 shows it was refused first.
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gexec_oversized_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({"format": "gexec.graph", "version": 1, "name": "oversized", "tensors": [
    {"name": "A", "shape": [1048576, 2097152], "dtype": "f16"},
    {"name": "B", "shape": [2097152, 16], "dtype": "f16"},
    {"name": "C", "shape": [1048576, 16], "dtype": "f16"}],
  "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}],
  "outputs": ["C"]})";
  const auto r = run_gexec("run --backend cpu '" + path.string() + "'");
  std::error_code ec;
  std::filesystem::remove(path, ec);
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.signal == 0);
  CHECK(has(r.output, "gexec: the graph needs "));
  CHECK(has(r.output, "bytes of host memory"));
  CHECK(has(r.output, "bytes free"));
  CHECK_FALSE(has(r.output, "result:"));
  const size_t at = r.output.find("the graph needs ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoll(r.output.substr(at + 16)) >= int64_t(1) << 42);  // at least A's 4 TiB
}

TEST_CASE("oversized: GEXEC_FAULT does not touch the CPU backend", "[faults][cpu]") {
  setenv("GEXEC_FAULT", "alloc:1,epilogue,launch", 1);
  const auto r = run_gexec("run --backend cpu " + source_path("graphs/gemm_bias_relu.json"));
  unsetenv("GEXEC_FAULT");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "result: pass"));
  CHECK_FALSE(has(r.output, "note: op "));  // no kernel reports an unfused epilogue
}

#else

#include "skip.hpp"

GEXEC_SKIPPED_TEST("oversized: the CPU backend refuses graphs larger than the machine", "[faults][cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU
