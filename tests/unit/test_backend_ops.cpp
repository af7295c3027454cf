// Every kernel of the table has cases, and every case of a CPU kernel matches the reference
// through the real selector, planner and executor (tests/backend_ops.hpp). The CUDA kernels'
// cases run in gexec_gpu_tests (tests/gpu/test_backend_ops.cpp), on a machine with a GPU.
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "backend_ops.hpp"
#include "catch.hpp"
#if GEXEC_HAVE_CPU
#include "gexec/backends/cpu_device.hpp"
#endif

using namespace gexec;

TEST_CASE("backend ops: every entry of the kernel table has cases", "[backend-ops]") {
  REQUIRE_FALSE(kernel_table().empty());
  for (const KernelDef& def : kernel_table()) {
    const auto cases = test::cases_for(def);
    if (cases.empty())
      FAIL_CHECK("kernel " << def.name << " (" << op_type_name(def.op) << "): no case; add one to tests/backend_ops.hpp");
    std::set<std::string> names;
    for (const auto& c : cases) {
      CHECK(c.graph.ops.size() == 1);
      CHECK(c.graph.ops[0].type == def.op);
      INFO(c.what);
      CHECK(verify(c.graph).empty());  // a graph the format accepts
      names.insert(c.what);
    }
    CHECK(names.size() == cases.size());  // each case says what it covers
  }
}

namespace {

bool any_f8(const Graph& g) {
  for (const Tensor& t : g.tensors)
    if (is_f8(t.dtype)) return true;
  return false;
}

// The cases of `kernel` that read or write f8, and of those the ones whose name has `what`.
std::pair<int, int> f8_cases(const std::string& kernel, const std::string& what) {
  int f8 = 0, named = 0;
  for (const KernelDef& def : kernel_table())
    if (def.name == kernel)
      for (const auto& c : test::cases_for(def))
        if (any_f8(c.graph)) ++f8, named += c.what.find(what) != std::string::npos;
  return {f8, named};
}

}  // namespace

TEST_CASE("backend ops: the f8 declarations have f8 cases, as each kernel accepts them", "[backend-ops][f8]") {
  for (const char* k : {"cublaslt.fp8_gemm_bias_act", "cublaslt.fp8_matmul"}) {
    INFO(k);
    CHECK(f8_cases(k, "").first >= 30);
    CHECK(f8_cases(k, "fast accumulation").second >= 4);
    CHECK(f8_cases(k, "with amax").second >= 2);
    CHECK(f8_cases(k, "per-row A").second >= 2);
    CHECK(f8_cases(k, "trans_").second == 3);
    CHECK(f8_cases(k, "stored [N,K]").second >= 3);  // per-N scales on B as cuBLASLt reads it
    // Refused by cuBLASLt's FP8 declaration: scales along K, a colmajor C. Sizes that are not
    // multiples of 16 run padded (an amax with a bias and M padded too).
    CHECK(f8_cases(k, "scales along K").second == 0);
    CHECK(f8_cases(k, "colmajor C").second == 0);
    CHECK(f8_cases(k, "padded").second == 5);
    CHECK(f8_cases(k, "batched").second == 3);
  }
  CHECK(f8_cases("cuda.f8_cast", "").first >= 10);
  CHECK(f8_cases("cuda.f8_cast", "quantize").second >= 6);
  for (const KernelDef& def : kernel_table())
    if (def.name == "cuda.f8_cast")
      for (const auto& c : test::cases_for(def)) {
        INFO(c.what);
        CHECK(any_f8(c.graph));  // cuda.cast converts the rest
      }
#if GEXEC_HAVE_CPU
  for (const char* k : {"cpu.gemm_bias_act", "cpu.matmul"}) {
    INFO(k);
    CHECK(f8_cases(k, "").first >= 30);
    CHECK(f8_cases(k, "scales along K").second == 1);  // the CPU applies any scale
    CHECK(f8_cases(k, "colmajor C").second == 1);
    CHECK(f8_cases(k, "padded").second == 5);
    CHECK(f8_cases(k, "batched").second == 3);
  }
  CHECK(f8_cases("cpu.cast", "with amax").second >= 6);
#endif
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

TEST_CASE("backend ops: an f8 case whose reference reads A with another scale fails", "[backend-ops][cpu][f8]") {
  auto dev = open_cpu_device();
  for (const KernelDef& def : kernel_table()) {
    if (def.name != "cpu.gemm_bias_act") continue;
    for (const test::OpCase& c : test::cases_for(def)) {
      if (c.what != "f8: A f8e4m3, B f8e5m2 -> C f8e4m3 with amax") continue;
      const test::CaseResult r = test::run_case(*dev, c.graph);
      INFO(r.describe());
      CHECK(r.pass());
      REQUIRE(r.checks.size() == 2);  // C and its amax
      // The same stored bytes of A read with twice its scale: every real product is doubled.
      Graph other = c.graph;
      other.tensors[size_t(other.ops[0].inputs[0])].scale.values = {1.0};
      const test::CaseResult wrong = test::run_case(*dev, c.graph, &other);
      REQUIRE(wrong.checks.size() == 2);
      CHECK_FALSE(wrong.checks[0].pass);
      CHECK(wrong.checks[0].beyond > 100);
      CHECK_FALSE(wrong.checks[1].pass);  // the amax doubles too
      return;
    }
  }
  FAIL("no case \"f8: A f8e4m3, B f8e5m2 -> C f8e4m3 with amax\" for cpu.gemm_bias_act");
}
#endif
