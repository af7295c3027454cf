// The CPU device itself; its kernels' cases are in the backend-ops harness (test_backend_ops.cpp).
#if GEXEC_HAVE_CPU

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "backend_ops.hpp"
#include "graph_builder.hpp"
#include "gexec/backends/cpu_device.hpp"
#include "gexec/kernels/declared.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "gexec/backends/cpu_packed_gemm.hpp"
#include "../../src/backends/cpu/thread_pool.hpp"

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
  Binding bind{{*a}, {*a}, {}};
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

// The backend's pool: every piece runs once per call, a call from inside a piece runs inline (no
// deadlock), and calls from two threads at once (the CPU ranks of a --tp run) both complete.
TEST_CASE("cpu: the thread pool", "[cpu]") {
  CHECK(cpu::pool_threads() >= 1);
  for (int64_t pieces : {0, 1, 2, 7, 64, 1000}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(pieces));
    cpu::run_pieces(pieces, [&](int64_t t) { runs[size_t(t)]++; });
    int64_t once = 0;
    for (auto& r : runs) once += r.load() == 1;
    CHECK(once == pieces);
  }
  std::atomic<int64_t> inner{0};
  cpu::run_pieces(8, [&](int64_t) { cpu::run_pieces(5, [&](int64_t) { inner++; }); });
  CHECK(inner.load() == 40);
  std::atomic<int64_t> sum{0};
  auto caller = [&] {
    for (int i = 0; i < 200; ++i) cpu::run_pieces(16, [&](int64_t t) { sum += t; });
  };
  std::thread other(caller);
  caller();
  other.join();
  CHECK(sum.load() == 2 * 200 * (15 * 16 / 2));
  // Calls further apart than the workers watch for (they sleep in between and must be woken),
  // then back to back, each piece's writes seen by the caller when the call returns.
  for (int i = 0; i < 40; ++i) {
    if (i < 10) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::vector<int64_t> seen(64, -1);
    cpu::run_pieces(64, [&](int64_t t) { seen[size_t(t)] = t + i; });
    int64_t right = 0;
    for (int64_t t = 0; t < 64; ++t) right += seen[size_t(t)] == t + i;
    CHECK(right == 64);
  }
}

// The packed product alone: every element within the f32 bound of one FMA chain of K terms (K
// roundings of at most 2^-24 of the running magnitude) of a float64 sum, over the tails of its
// 8 x 32 blocks (M and N not multiples), both storage orders of B, a leading dimension wider
// than the matrix, A read where it lies and copied (K beyond 2048); K = 0 gives zeros. A block read from the wrong panel, row or column is off by
// far more.
TEST_CASE("cpu: the packed product against float64", "[cpu]") {
  if (!cpu::PackedB::available()) {
    WARN("skipped: this CPU has no AVX-512F, and the CPU backend runs every product on OpenBLAS");
    return;
  }
  uint64_t state = 12345;
  auto uniform = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return float(int64_t(state >> 40) - (int64_t(1) << 23)) / float(1 << 23);
  };
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 33, 17}, {8, 32, 64}, {9, 31, 5},
                         {67, 100, 300}, {16, 64, 1}, {130, 70, 129}, {5, 40, 0},
                         // K in parts of 512 (partial sums kept between parts), and a thread's
                         // panels in more than one batch
                         {45, 70, 1100}, {200, 1500, 1030},
                         // K beyond 2048: A copied into row blocks rather than read where it lies
                         {19, 40, 2100}, {72, 100, 2049}})
    for (bool trans : {false, true}) {
      const int64_t ldb = (trans ? k : n) + 3, lda = k + 2;
      std::vector<float> a(size_t(m * lda)), b(size_t((trans ? n : k) * ldb)), c(size_t(m * n), -7.0f);
      for (float& v : a) v = uniform();
      for (float& v : b) v = uniform();
      auto at = [&](int64_t kk, int64_t j) { return trans ? b[size_t(j * ldb + kk)] : b[size_t(kk * ldb + j)]; };
      cpu::PackedB packed(b.data(), k, n, trans ? 1 : ldb, trans ? ldb : 1);
      packed.multiply(a.data(), lda, m, 0.5f, c.data(), n);
      int64_t beyond = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0, mag = 0;
          for (int64_t kk = 0; kk < k; ++kk) {
            sum += double(a[size_t(i * lda + kk)]) * at(kk, j);
            mag += std::fabs(double(a[size_t(i * lda + kk)]) * at(kk, j));
          }
          const double bound = 0.5 * (double(k) * std::ldexp(mag, -24) + std::ldexp(std::fabs(sum), -24));
          beyond += std::fabs(double(c[size_t(i * n + j)]) - 0.5 * sum) > bound;
        }
      INFO(m << "x" << n << "x" << k << (trans ? " B transposed" : ""));
      CHECK(beyond == 0);
    }
}

// Through the kernel: a constant B is packed in the first run and used from the panels in the
// second (run_case runs twice); the rest of the product (alpha, bias, activation, the residual,
// rounding, f16 operands converted once, batches against a shared B), which the packed product
// applies to each block as it completes it, checked by the reference.
TEST_CASE("cpu: products against a constant B, packed once", "[cpu]") {
  if (!cpu::PackedB::available()) {
    WARN("skipped: this CPU has no AVX-512F, and the CPU backend runs every product on OpenBLAS");
    return;
  }
  auto dev = open_cpu_device();
  struct Case {
    int64_t batch, m, n, k;
    bool trans_b, colmajor_b, gemm;
    DType dt;
    bool residual = false;
    Act act = Act::gelu;
  };
  const std::vector<Case> cases = {
      {1, 64, 96, 256, true, false, true, DType::f32}, {1, 9, 33, 40, false, false, false, DType::f32},
      {1, 13, 70, 33, false, true, true, DType::f32},  {3, 5, 40, 24, false, false, true, DType::f32},
      {1, 20, 48, 64, true, false, true, DType::f16},  {2, 8, 32, 16, true, false, false, DType::bf16},
      {1, 150, 70, 700, false, true, true, DType::f32},  // K in two parts
      {1, 37, 100, 600, true, false, true, DType::f32, true, Act::silu},
      {2, 12, 40, 2100, true, false, true, DType::bf16, true, Act::relu}};  // A copied (K beyond 2048)
  for (const Case& cs : cases) {
    test::Builder b;
    using Shape = std::vector<int64_t>;
    const Shape a_shape = cs.batch > 1 ? Shape{cs.batch, cs.m, cs.k} : Shape{cs.m, cs.k};
    const Shape c_shape = cs.batch > 1 ? Shape{cs.batch, cs.m, cs.n} : Shape{cs.m, cs.n};
    TensorId a = b.tensor("A", a_shape, cs.dt);
    TensorId w = cs.trans_b ? b.tensor("W", {cs.n, cs.k}, cs.dt)
                            : b.tensor("W", {cs.k, cs.n}, cs.dt, cs.colmajor_b ? Layout::colmajor : Layout::rowmajor);
    b.g.tensors[size_t(w)].constant = true;
    TensorId c = b.tensor("C", c_shape, cs.dt);
    if (cs.gemm) {
      TensorId bias = b.tensor("Bias", {cs.n}, DType::f32);
      b.g.tensors[size_t(bias)].constant = true;
      std::vector<TensorId> in{a, w, bias};
      if (cs.residual) in.push_back(b.tensor("R", c_shape, cs.dt));
      Op& op = b.op(OpType::GEMM_BIAS_ACT, in, c);
      op.attrs.act = cs.act, op.attrs.trans_b = cs.trans_b, op.attrs.alpha = 0.75;
      op.attrs.residual = cs.residual, op.attrs.beta = cs.residual ? -0.5 : 1.0;
    } else {
      b.op(OpType::MATMUL, {a, w}, c).attrs.trans_b = cs.trans_b;
    }
    b.g.outputs = {c};
    const test::CaseResult r = test::run_case(*dev, b.g);
    INFO(cs.batch << "x" << cs.m << "x" << cs.n << "x" << cs.k << " " << dtype_name(cs.dt) << r.describe());
    CHECK(r.pass());
  }
}

#else

#include "skip.hpp"

GEXEC_SKIPPED_TEST("cpu: every op of the CPU backend against the reference", "[cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU
