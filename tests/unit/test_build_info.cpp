// What the binary says it is (gexec --version, build_info) matches how it was built, and the
// fatbin's architectures decide which devices the selector offers CUDA kernels for.
#include <string>

#include "catch.hpp"
#include "gexec/build_info.hpp"
#include "process.hpp"

using namespace gexec;
using gexec::test::has;
using gexec::test::run_gexec;
using gexec::test::source_path;

TEST_CASE("build_info: version, commit and backends as configured", "[version]") {
  const BuildInfo& b = build_info();
  CHECK(b.version == GEXEC_VERSION);
  CHECK(!b.commit.empty());
  CHECK(!b.build_type.empty());
#if GEXEC_HAVE_CPU
  CHECK(b.cpu);
#else
  CHECK_FALSE(b.cpu);
#endif
  CHECK(b.cuda == !b.cuda_compiler.empty());
  CHECK(b.cuda == !b.cuda_architectures.empty());
}

TEST_CASE("gexec --version: one line per fact, the backends that build_info says", "[version][cli]") {
  auto r = run_gexec("--version");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const BuildInfo& b = build_info();
  CHECK(r.output.rfind("gexec " + b.version + "\n", 0) == 0);
  CHECK(has(r.output, "\ncommit: " + b.commit));
  CHECK(has(r.output, "\nbuild: " + b.build_type + ", "));
  const std::string backends = b.cuda && b.cpu ? "cuda cpu" : b.cuda ? "cuda" : b.cpu ? "cpu" : "none";
  CHECK(has(r.output, "\nbackends: " + backends + "\n"));
  if (b.cuda) {
    CHECK(has(r.output, "\ncuda architectures: " + b.cuda_architectures + " (" + describe_fatbin() + ")\n"));
    // Read at run time; with no driver or no GPU they say so instead of failing.
    CHECK(has(r.output, "\ncuda runtime: "));
    CHECK(has(r.output, "\ncuda driver: "));
    CHECK(has(r.output, "\ncublaslt: "));
    CHECK(has(r.output, "\ncuda devices: "));
  }
  CHECK(has(r.output, "\nopenblas: OpenBLAS ") == b.cpu);
}

TEST_CASE("fatbin: SASS runs on its major version, PTX on newer devices", "[version][fatbin]") {
  const BuildInfo& b = build_info();
  if (!b.cuda) {
    std::string why;
    CHECK_FALSE(fatbin_runs_on(90, &why));
    CHECK(has(why, "no CUDA backend"));
    return;
  }
  for (const FatbinArch& a : fatbin_archs()) {
    CHECK(fatbin_runs_on(a.cc));                  // every architecture it carries
    if (a.ptx) CHECK(fatbin_runs_on(a.cc + 30));  // PTX JIT-compiles for newer devices
  }
  if (b.cuda_architectures == "80-real 90-real 90-virtual") {  // the default
    CHECK(describe_fatbin() == "sm_80 sm_90 compute_90");
    for (int cc : {80, 86, 87, 89, 90, 100, 103, 120}) CHECK(fatbin_runs_on(cc));
    std::string why;
    CHECK_FALSE(fatbin_runs_on(75, &why));
    CHECK(has(why, "this binary's CUDA code (sm_80 sm_90 compute_90) does not run on sm_75"));
  }
}

TEST_CASE("fatbin: the dry-run never offers a CUDA kernel the binary cannot launch", "[version][fatbin][cli]") {
  const BuildInfo& b = build_info();
  if (!b.cuda || b.cuda_architectures != "80-real 90-real 90-virtual") {
    WARN("skipped: the default architectures are not this build's (" << b.cuda_architectures << ")");
    return;
  }
  // The elementwise kernels declare sm_70, but this binary carries no code for sm_75.
  const std::string graph = "'" + source_path("graphs/gemm_bias_relu_primitives.json") + "'";
  auto old = run_gexec("run --dry-run --arch sm_75 --passes none " + graph);
  INFO(old.output);
  CHECK(old.status == 3);
  CHECK(has(old.output, "cuda.bias_add: this binary's CUDA code (sm_80 sm_90 compute_90) does not run on sm_75"));
  for (const char* arch : {"sm_86", "sm_90", "sm_120"}) {
    auto ok = run_gexec(std::string("run --dry-run --arch ") + arch + " --passes none " + graph);
    INFO(ok.output);
    CHECK(ok.status == 0);
    CHECK(has(ok.output, "-> cuda.bias_add"));
  }
  auto table = run_gexec("kernels");
  CHECK(has(table.output, "CUDA code in this binary: sm_80 sm_90 compute_90"));
  CHECK(has(table.output, "cuda.relu  RELU on cuda, priority 10, sm_80+"));
  CHECK_FALSE(has(table.output, "sm_70+"));
}
