// The skinny GEMM (src/backends/cuda/skinny_gemm.cu) on the GPU, forced by --kernel's option,
// against the reference: M from 1 to 128 (odd ones too), both weight layouts, f16 and bf16, every
// output dtype and epilogue, shapes whose K split leaves a short last part, outputs poisoned before
// the checked run (Executor::run_checked); refusals where N or K break the 16-byte loads; and a
// wrong kernel (the skinny-drop-split fault: the last K split left out) failing the check.
#include <string>

#include "../../src/backends/cuda/fault.hpp"
#include "backend_ops.hpp"
#include "catch.hpp"
#include "gexec/backends/cuda_device.hpp"

using namespace gexec;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* kSkinny = "cuda.skinny_gemm_bias_act";

test::OpCase skinny_case(int64_t m, int64_t n, int64_t k, DType ab, DType c, bool nk, Act act, bool residual,
                         DType bias = DType::f32) {
  test::detail::GemmCase g;
  g.m = m, g.n = n, g.k = k;
  g.a = g.b = ab;
  g.c = c;
  g.bias = bias;
  g.trans_b = nk;
  g.act = act;
  g.residual = residual;
  g.r = DType::bf16;
  g.beta = residual ? 0.5 : 1.0;
  g.alpha = 0.75;
  const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
                           std::string(dtype_name(ab)) + "->" + std::string(dtype_name(c)) + (nk ? " [N,K]" : " [K,N]") +
                           " act " + std::string(act_name(act)) + (residual ? " residual" : "");
  return test::detail::gemm_graph(OpType::GEMM_BIAS_ACT, g, what);
}

}  // namespace

TEST_CASE("skinny GEMM: many shapes, both layouts, every dtype and epilogue, against the reference",
          "[gpu][skinny]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  int run = 0;
  const int64_t ms[] = {1, 2, 3, 5, 8, 9, 16, 17, 31, 64, 100, 127, 128};
  // (N, K): small, K not a multiple of the 256-wide split step, several splits with a short last one.
  const std::pair<int64_t, int64_t> nks[] = {{8, 8}, {40, 264}, {264, 1000}, {1032, 3080}, {4096, 4096}};
  const DType abs[] = {DType::f16, DType::bf16};
  const DType outs[] = {DType::f16, DType::bf16, DType::f32};
  const Act acts[] = {Act::none, Act::relu, Act::gelu};
  for (int64_t m : ms)
    for (auto [n, k] : nks)
      for (bool nk : {false, true}) {
        // The dtypes and epilogues rotate with the shape, so that each meets every M and layout.
        const int i = run;
        const test::OpCase c = skinny_case(m, n, k, abs[i % 2], outs[i % 3], nk, acts[i % 3], i % 4 == 0,
                                           i % 5 == 0 ? DType::f16 : DType::f32);
        INFO(c.what);
        const test::CaseResult r = test::run_case(**dev, c.graph, nullptr, kSkinny);
        INFO(r.describe());
        CHECK(r.kernel == kSkinny);
        CHECK(r.pass());
        ++run;
      }
  CHECK(run == 13 * 5 * 2);
}

TEST_CASE("skinny GEMM: N or K that break its 16-byte loads are refused, not run", "[gpu][skinny]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  const test::CaseResult kn = test::run_case(**dev, skinny_case(4, 44, 64, DType::f16, DType::f16, false, Act::none, false).graph,
                                             nullptr, kSkinny);
  CHECK(contains(kn.error, "multiple of 8"));
  const test::CaseResult nk = test::run_case(**dev, skinny_case(4, 64, 44, DType::f16, DType::f16, true, Act::none, false).graph,
                                             nullptr, kSkinny);
  CHECK(contains(nk.error, "multiple of 8"));
  // [K,N] takes any K: 44 runs.
  const test::CaseResult ok = test::run_case(**dev, skinny_case(4, 64, 44, DType::f16, DType::f16, false, Act::none, false).graph,
                                             nullptr, kSkinny);
  CHECK(ok.pass());
}

TEST_CASE("skinny GEMM: a kernel that drops a K split fails the check", "[gpu][skinny]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  for (bool nk : {false, true}) {
    // 4096 x 4096 at M = 1: many splits, the last one of 256 K or more.
    const test::OpCase c = skinny_case(1, 4096, 4096, DType::f16, DType::f32, nk, Act::none, false);
    REQUIRE(cuda::fault::configure("skinny-drop-split").ok());
    const test::CaseResult wrong = test::run_case(**dev, c.graph, nullptr, kSkinny);
    REQUIRE(cuda::fault::configure("").ok());
    INFO(wrong.describe());
    CHECK(wrong.error.empty());
    CHECK_FALSE(wrong.pass());
    const test::CaseResult right = test::run_case(**dev, c.graph, nullptr, kSkinny);
    CHECK(right.pass());
  }
}
