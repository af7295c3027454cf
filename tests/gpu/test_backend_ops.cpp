// Every CUDA kernel of the table, every case its declaration allows, through the real selector,
// planner and executor on the GPU, against the reference (tests/backend_ops.hpp), the FP8
// kernels' f8 cases (scales, fast accumulation, amax, TN arrangement, padding) included.
#include <string>

#include "backend_ops.hpp"
#include "catch.hpp"
#include "../../src/backends/cuda/fault.hpp"
#include "gexec/backends/cuda_device.hpp"

using namespace gexec;

TEST_CASE("backend ops: every CUDA kernel, every declared case, against the reference", "[gpu][backend-ops]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  int run = 0, kernels = 0, fp8 = 0;
  for (const KernelDef& def : kernel_table()) {
    if (def.backend != Backend::cuda) continue;
    ++kernels;
    const auto cases = test::cases_for(def);
    if (cases.empty()) FAIL_CHECK(def.name << ": no case; add one to tests/backend_ops.hpp");
    for (const test::OpCase& c : cases) {
      INFO(def.name << ": " << c.what);
      const test::CaseResult r = test::run_case(**dev, c.graph, nullptr, def.name);
      INFO(r.describe());
      CHECK(r.kernel == def.name);
      CHECK(r.pass());
      ++run;
      fp8 += def.impl == KernelImpl::cublaslt_fp8_gemm || def.impl == KernelImpl::cuda_f8_cast;
    }
  }
  CHECK(kernels > 0);
  CHECK(run >= 50);
  CHECK(fp8 >= 80);  // the FP8 product's and the f8 CAST's cases (the GPU needs compute capability 8.9)
}

// SUB, DIV, SIGMOID, TANH, ERF, POW and scalar operands on edge values (saturation, division by
// values near and at 0, negative bases with fractional exponents): the elementwise kernels, and
// a group of them through the generated kernel and (GEXEC_FAULT=compile) the interpreter; then
// the check refusing wrong results computed on the GPU (sharpness).
TEST_CASE("backend ops: the new elementwise ops on edge values, generated kernel and interpreter", "[gpu][backend-ops][ops]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  struct FaultOff {
    ~FaultOff() { (void)cuda::fault::configure(""); }
  } off;
  for (const char* fault : {"", "compile"}) {
    INFO("GEXEC_FAULT=" << fault);
    REQUIRE(cuda::fault::configure(fault).ok());
    for (const test::OpCase& c : test::edge_value_cases()) {
      INFO(c.what);
      REQUIRE_FALSE(c.graph.ops.empty());
      const test::CaseResult r = test::run_case(**dev, c.graph);
      INFO(r.describe());
      CHECK(r.pass());
    }
  }
  REQUIRE(cuda::fault::configure("").ok());
  for (const test::WrongCase& p : test::wrong_kernel_cases()) {
    INFO(p.what);
    const test::CaseResult right = test::run_case(**dev, p.right, nullptr, p.cuda_kernel);
    INFO(right.describe());
    CHECK(right.pass());
    const test::CaseResult wrong = test::run_case(**dev, p.wrong, &p.right, p.cuda_kernel);
    INFO(wrong.describe());
    CHECK(wrong.error.empty());
    CHECK_FALSE(wrong.pass());
  }
}
