// The CPU device itself; its kernels' cases are in the backend-ops harness (test_backend_ops.cpp).
#if GEXEC_HAVE_CPU

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "backend_ops.hpp"
#include "graph_builder.hpp"
#include "gexec/backends/cpu_device.hpp"
#include "gexec/kernels/declared.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"

using namespace gexec;

namespace {

using test::Builder;

const KernelDef& cpu_def(OpType type) {
  static const std::vector<KernelDef> defs = cpu_kernel_defs();
  for (const KernelDef& d : defs)
    if (d.op == type) return d;
  FAIL("no CPU kernel for " << op_type_name(type));
  return defs.front();
}

}  // namespace

TEST_CASE("cpu: the device", "[cpu]") {
  auto dev = open_cpu_device();
  CHECK(dev->backend() == Backend::cpu);
  CHECK(dev->caps().name.find("OpenBLAS") != std::string::npos);
  CHECK(dev->caps().cc == 0);
  CHECK(dev->caps().detected);
  auto a = dev->allocate_arena(1000);
  REQUIRE(a.ok());
  CHECK(reinterpret_cast<uintptr_t>(*a) % 256 == 0);
  REQUIRE(dev->poison(*a, 8).ok());
  CHECK(std::isnan(load_as_float(*a, DType::f16, 0)));
  CHECK(std::isnan(load_as_float(*a, DType::bf16, 1)));
  CHECK(std::isnan(load_as_float(*a, DType::f32, 1)));
  auto huge = dev->allocate_arena(int64_t(1) << 62);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().code == Exit::runtime);

  Builder b;
  TensorId x = b.tensor("X", {4}), y = b.tensor("Y", {4});
  b.op(OpType::RELU, {x}, y);
  Binding bind{{*a}, {*a}};
  CHECK_FALSE(dev->make_kernel(cpu_def(OpType::GELU), b.g, b.g.ops[0], bind, {}).ok());  // wrong op type
  CHECK(dev->make_kernel(cpu_def(OpType::RELU), b.g, b.g.ops[0], bind, {}).ok());
  // products, CAST, FUSED_ELEMENTWISE, GROUPED_GEMM, an elementwise kernel per op and the three collectives
  CHECK(cpu_kernel_defs().size() == 20);
}

// The dtype, layout, transpose and batching sweeps of every CPU kernel, and a chain with a check
// that can fail, are cases of the backend-ops harness (test_backend_ops.cpp). Here: a product
// large enough for OpenBLAS's threads and the threaded epilogue, through the same harness.
TEST_CASE("cpu: a product large enough for threads", "[cpu]") {
  Builder b;
  TensorId a = b.tensor("A", {256, 320}), bb = b.tensor("B", {320, 288}), bias = b.tensor("Bias", {288});
  TensorId c = b.tensor("C", {256, 288});
  b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias}, c).attrs.act = Act::gelu;
  b.g.outputs = {c};
  auto dev = open_cpu_device();
  const test::CaseResult r = test::run_case(*dev, b.g);
  INFO(r.describe());
  CHECK(r.kernel == "cpu.gemm_bias_act");
  CHECK(r.pass());
}

#else

#include "skip.hpp"

GEXEC_SKIPPED_TEST("cpu: every op of the CPU backend against the reference", "[cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU
