// Every kernel of the table has cases, and every case of a CPU kernel matches the reference
// through the real selector, planner and executor (tests/backend_ops.hpp). The CUDA kernels'
// cases run in gexec_gpu_tests (tests/gpu/test_backend_ops.cpp), on a machine with a GPU.
#include <memory>
#include <set>
#include <string>

#include "backend_ops.hpp"
#include "catch.hpp"
#if GEXEC_HAVE_CPU
#include "gexec/backends/cpu_device.hpp"
#endif

using namespace gexec;

TEST_CASE("backend ops: every entry of the kernel table has cases", "[backend-ops]") {
  REQUIRE_FALSE(kernel_table().empty());
  for (const KernelDef& def : kernel_table()) {
    INFO("kernel " << def.name << " (" << op_type_name(def.op) << "): no case; add one to tests/backend_ops.hpp");
    const auto cases = test::cases_for(def);
    CHECK_FALSE(cases.empty());
    std::set<std::string> names;
    for (const auto& c : cases) {
      CHECK(c.graph.ops.size() == 1);
      CHECK(c.graph.ops[0].type == def.op);
      names.insert(c.what);
    }
    CHECK(names.size() == cases.size());  // each case says what it covers
  }
}

TEST_CASE("backend ops: every CPU kernel, every declared case, against the reference", "[backend-ops][cpu]") {
#if GEXEC_HAVE_CPU
  auto dev = open_cpu_device();
  int run = 0;
  for (const KernelDef& def : kernel_table()) {
    if (def.backend != Backend::cpu) continue;
    for (const test::OpCase& c : test::cases_for(def)) {
      INFO(def.name << ": " << c.what);
      const test::CaseResult r = test::run_case(*dev, c.graph);
      INFO(r.describe());
      CHECK(r.kernel == def.name);
      CHECK(r.pass());
      ++run;
    }
  }
  CHECK(run >= 50);
#else
  WARN("skipped: this build has no CPU backend (no OpenBLAS)");
#endif
}

TEST_CASE("backend ops: the CUDA kernels' cases run in gexec_gpu_tests", "[backend-ops][cuda]") {
  int cuda = 0;
  for (const KernelDef& def : kernel_table()) cuda += def.backend == Backend::cuda;
  CHECK(cuda > 0);
  WARN("skipped here: " << cuda << " CUDA kernels; their cases run on a GPU in gexec_gpu_tests \"[backend-ops]\"");
}

#if GEXEC_HAVE_CPU
TEST_CASE("backend ops: a chain with f16 intermediates, and a check that can fail", "[backend-ops][cpu]") {
  test::Builder b;
  TensorId a = b.tensor("A", {2, 24, 40}, DType::f16), bb = b.tensor("B", {40, 32}, DType::f16);
  TensorId ab = b.tensor("AB", {2, 24, 32}, DType::f16), bias = b.tensor("Bias", {32}, DType::f32);
  TensorId abb = b.tensor("ABb", {2, 24, 32}, DType::f16), out = b.tensor("Out", {2, 24, 32}, DType::bf16);
  TensorId out32 = b.tensor("Out32", {2, 24, 32}, DType::f32);
  b.op(OpType::MATMUL, {a, bb}, ab);
  b.op(OpType::BIAS_ADD, {ab, bias}, abb);
  b.op(OpType::GELU, {abb}, out).attrs.approximate = GeluApprox::none;
  b.op(OpType::CAST, {out}, out32);
  b.g.outputs = {out, out32};
  auto dev = open_cpu_device();
  const test::CaseResult r = test::run_case(*dev, b.g);
  INFO(r.describe());
  CHECK(r.pass());
  CHECK(r.checks.size() == 2);

  // The same device results against the reference of a product scaled by 1.25: most elements
  // differ by far more than the tolerance.
  Graph other = b.g;
  other.ops[0].attrs.alpha = 1.25;
  const test::CaseResult wrong = test::run_case(*dev, b.g, &other);
  REQUIRE(wrong.checks.size() == 2);
  CHECK_FALSE(wrong.checks[0].pass);
  CHECK(wrong.checks[0].beyond > 100);
  CHECK_FALSE(wrong.pass());
}
#endif
