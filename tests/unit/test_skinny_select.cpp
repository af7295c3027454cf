// The skinny GEMM's plan (what it refuses, how it fills the SMs), its cost model, and the selector
// with it: taken for decode shapes where the model says so, never where it refuses, --kernel
// forcing either kernel, and the dry-run's printed reasons. No GPU needed.
#include <string>

#include "../../src/backends/cuda/skinny_cost.hpp"
#include "../../src/backends/cuda/skinny_plan.hpp"
#include "backend_ops.hpp"
#include "catch.hpp"
#include "gexec/kernels/select.hpp"

using namespace gexec;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* kSkinny = "cuda.skinny_gemm_bias_act";
constexpr const char* kLt = "cublaslt.gemm_bias_act";
constexpr int kSm80 = 80;  // the mma.sync path's devices (an sm_90 takes WGMMA for [N,K])

test::OpCase decode(int64_t m, int64_t n, int64_t k, DType t = DType::f16, bool trans_b = false, Act act = Act::none) {
  test::detail::GemmCase c;
  c.m = m, c.n = n, c.k = k;
  c.a = c.b = c.c = c.bias = t;
  c.trans_b = trans_b;
  c.act = act;
  return test::detail::gemm_graph(OpType::GEMM_BIAS_ACT, c, "decode");
}

DeviceCaps h200() {
  DeviceCaps caps;
  caps.cc = 90;
  caps.sm_count = 132;
  return caps;
}

const OpChoice& choose(const Graph& g, const KernelOptions& o = {}) {
  static Selection keep;
  auto sel = select_kernels(g, h200(), Backend::cuda, o);
  REQUIRE(sel.ok());
  keep = std::move(*sel);
  return keep.ops[0];
}

std::string reason(const OpChoice& c, const std::string& kernel) {
  for (const Rejection& r : c.rejected)
    if (r.kernel == kernel) return r.reason;
  return {};
}

}  // namespace

TEST_CASE("skinny plan: fills 132 SMs at every decode shape, splits K in whole steps", "[skinny]") {
  for (int64_t m : {1, 7, 8, 16, 33, 64, 128})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096},
                        {4096, 14336}, {16384, 4096}})
      for (bool nk : {false, true}) {
        const test::OpCase c = decode(m, n, k, DType::f16, nk);
        const cuda::SkinnyPlan p = cuda::plan_skinny(c.graph, c.graph.ops[0], 132, kSm80);
        INFO(m << "x" << n << "x" << k << (nk ? " nk" : " kn"));
        REQUIRE(p.rejected.empty());
        // Every SM gets a CTA; the MMA path, one CTA per SM where M is large, stops a split short
        // of a second wave (at most 5% of the SMs idle).
        CHECK(p.ctas() >= (p.mma ? 126 : 132));
        CHECK(p.split_k % cuda::SkinnyGeometry::kKStep == 0);
        CHECK(p.mma == nk);  // [N,K] on tensor cores, [K,N] on FMAs
        if (!p.mma) CHECK(p.split_k <= cuda::SkinnyGeometry::kMaxStagedK);  // the FMA path stages A
        CHECK(p.splits * p.split_k >= k);
        CHECK((p.splits - 1) * p.split_k < k);  // no empty split
        CHECK(p.row_tile * p.row_tiles >= m);
        CHECK(p.row_tile * (p.row_tiles - 1) < m);
      }
}

TEST_CASE("skinny plan on sm_90: WGMMA for [N,K], K whole, a CTA for every SM from N alone where N allows",
          "[skinny]") {
  using G = cuda::SkinnyGeometry;
  for (int64_t m : {1, 7, 16, 17, 33, 64, 65, 128})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096},
                        {4096, 14336}, {16384, 4096}, {8, 8}, {264, 1000}, {1032, 3080}}) {
      const test::OpCase c = decode(m, n, k, DType::f16, true);
      const cuda::SkinnyPlan p = cuda::plan_skinny(c.graph, c.graph.ops[0], 132, 90);
      INFO(m << "x" << n << "x" << k);
      REQUIRE(p.rejected.empty());
      CHECK(p.pdl);  // every path launched as a programmatic dependent on sm_90 (pdl.cuh)
      CHECK_FALSE(cuda::plan_skinny(c.graph, c.graph.ops[0], 132, kSm80).pdl);  // sm_80 has no griddepcontrol
      CHECK(p.wgmma == (m >= G::kWgMinM));  // below, mma.sync (measured faster there)
      if (!p.wgmma) {
        CHECK(p.mma);
        CHECK(p.row_tile == 16);
        continue;
      }
      CHECK(p.mma);
      CHECK(p.row_tiles == 1);  // the weight read once
      CHECK(p.row_tile == (m <= 64 ? 64 : 128));
      CHECK(p.splits == 1);
      CHECK(p.split_k == k);
      CHECK(p.workspace_bytes() == 0);
      CHECK((p.block_n == 32 || p.block_n == 64 || p.block_n == 128));
      CHECK(p.col_blocks * p.block_n >= n);
      CHECK((p.col_blocks - 1) * p.block_n < n);
      // The widest block with a CTA for every SM; 32 rows where none has.
      CHECK((p.col_blocks >= 132 || p.block_n == 32));
      CHECK((p.block_n == 128 || (n + 2 * p.block_n - 1) / (2 * p.block_n) < 132));
      // Its stages fit the shared memory of the CTAs an SM holds (two where there are more CTAs than SMs).
      CHECK(p.stages >= 2);
      CHECK(p.stages <= G::kWgMaxStages);
      const int per_sm = p.col_blocks > 132 ? 2 : 1;
      CHECK(p.stages * G::wg_stage_bytes(p.block_n, p.row_tile) * per_sm <= G::kWgSmemPerSm);
    }
  auto plan = [](int64_t m, int64_t n) {
    const test::OpCase c = decode(m, n, 4096, DType::f16, true);
    return cuda::plan_skinny(c.graph, c.graph.ops[0], 132, 90);
  };
  CHECK(plan(32, 4096).block_n == 32);    // 128 CTAs
  CHECK(plan(32, 11008).block_n == 64);   // 172
  CHECK(plan(32, 16384).block_n == 64);   // 256: 128 blocks of 128 would leave 4 SMs idle
  CHECK(plan(32, 32768).block_n == 128);  // 256
  CHECK(plan(128, 16384).row_tile == 128);
  // [K,N] stays on the FMA path.
  const test::OpCase kn = decode(1, 4096, 4096, DType::f16, false);
  CHECK_FALSE(cuda::plan_skinny(kn.graph, kn.graph.ops[0], 132, 90).wgmma);
}

TEST_CASE("skinny plan: refusals say why", "[skinny]") {
  auto refused = [](const test::OpCase& c) { return cuda::plan_skinny(c.graph, c.graph.ops[0], 132, kSm80).rejected; };
  CHECK(contains(refused(decode(129, 4096, 4096)), "M 129 is above 128"));
  CHECK(contains(refused(decode(4, 4100, 4096)), "N = 4100"));
  CHECK(refused(decode(4, 4096, 4100)).empty());  // [K,N]: K is free
  CHECK(contains(refused(decode(4, 4096, 4100, DType::f16, true)), "K = 4100"));
  CHECK(contains(refused(decode(4, 4096, 4096, DType::f32)), "f16 x f16 or bf16 x bf16"));
  test::detail::GemmCase mixed;
  mixed.a = DType::f16, mixed.b = DType::bf16, mixed.m = 4, mixed.n = 64, mixed.k = 64;
  const test::OpCase mc = test::detail::gemm_graph(OpType::MATMUL, mixed, "mixed");
  CHECK(contains(cuda::plan_skinny(mc.graph, mc.graph.ops[0], 132, kSm80).rejected, "bf16"));
}

TEST_CASE("skinny cost model: with the rates measured on the H200, skinny only where it measured faster",
          "[skinny]") {
  auto cost = [](int64_t m, int64_t n, int64_t k, bool nk, const cuda::SkinnyRates& r = {}, Act act = Act::none) {
    const test::OpCase c = decode(m, n, k, DType::f16, nk, act);
    const cuda::SkinnyPlan p = cuda::plan_skinny(c.graph, c.graph.ops[0], 132, kSm80);
    REQUIRE(p.rejected.empty());
    REQUIRE(p.mma == nk);
    return cuda::skinny_cost(p, 132, r);
  };
  // Measured with gexec gemm --cold-l2 (f16, H200, 2026-12-03), [N,K] on tensor cores against
  // cuBLASLt: 11.70 / 13.27 us at M = 1 and 12.60 / 14.25 at M = 8 (N = K = 4096): taken. 13.35 /
  // 14.24 at M = 16 then, 14.81 / 17.42 on an H100 launched as a programmatic dependent: taken.
  // 17.81 / 14.68 at M = 32, 49.37 / 13.00 at M = 64, 27.62 / 25.95 at 1 x 11008 x 4096, 38.10 /
  // 35.47 at 1 x 16384 x 4096: cuBLASLt.
  CHECK(cost(1, 4096, 4096, true).skinny_wins());
  CHECK(cost(8, 4096, 4096, true).skinny_wins());
  CHECK(cost(16, 4096, 4096, true).skinny_wins());
  CHECK_FALSE(cost(32, 4096, 4096, true).skinny_wins());
  CHECK_FALSE(cost(64, 4096, 4096, true).skinny_wins());
  CHECK_FALSE(cost(128, 4096, 4096, true).skinny_wins());
  CHECK_FALSE(cost(1, 11008, 4096, true).skinny_wins());
  CHECK_FALSE(cost(1, 16384, 4096, true).skinny_wins());
  // With a SiLU, cuBLASLt's product needs a kernel after it: measured (H100, cold weights) at 1 x
  // 11008 x 4096 the skinny kernel took 34.9 us against cuBLASLt's 41.5 (37.0 with the bias
  // alone), at 128 rows 185.4 against 44.4; at 32 x 4096 x 4096 with the bias alone (H200)
  // cuBLASLt was 3 us faster than the skinny kernel, which the tail does not make up.
  auto silu = [&](int64_t m, int64_t n) { return cost(m, n, 4096, true, {}, Act::silu); };
  CHECK(silu(1, 11008).skinny_wins());
  CHECK(silu(1, 4096).skinny_wins());
  CHECK_FALSE(silu(128, 11008).skinny_wins());
  CHECK_FALSE(silu(32, 4096).skinny_wins());
  CHECK_FALSE(silu(64, 4096).skinny_wins());
  CHECK(silu(1, 11008).cublaslt_us > cost(1, 11008, 4096, true).cublaslt_us + 3.9);
  // The FMA path ([K,N]) took 13.3, 75.6 and 541 us at M = 1, 16 and 128: never taken.
  for (int64_t m : {1, 16, 128}) CHECK_FALSE(cost(m, 4096, 4096, false).skinny_wins());
  CHECK_FALSE(cost(1, 11008, 4096, false).skinny_wins());
  // The model follows its rates: the FMA path streaming at 0.85 of the copy bandwidth would win at
  // M = 1, never at M = 128 (4.3 GFLOP of FMAs: arithmetic-bound); the MMA path with a shorter
  // latency per pass of loads would win at M = 32, where 8 passes of 2.2 us and the activations
  // read again from L2 bound it now.
  cuda::SkinnyRates faster;
  faster.skinny_bw_fraction = 0.85;
  CHECK(cost(1, 4096, 4096, false, faster).skinny_wins());
  CHECK_FALSE(cost(128, 4096, 4096, false, faster).skinny_wins());
  faster.mma_pass_us = 0.5;
  faster.mma_l2_gbps = 1e6;
  CHECK(cost(32, 4096, 4096, true, faster).skinny_wins());
  // The Hopper path (sm_90, M >= 17), measured on an H100 against cuBLASLt in the same run (cold
  // weights, launched as a programmatic dependent): 15.52 / 15.37 us at 32 x 4096 x 4096, 15.68 /
  // 15.60 at 64, 19.16 / 16.01 at 128, 34.66 / 36.33 at 32 x 11008 x 4096 (0.95x, at the model's
  // margin): never taken by the model; far faster than mma.sync at 128 rows (the weight read once,
  // not twice).
  auto cost90 = [](int64_t m, int64_t n, const cuda::SkinnyRates& r = {}) {
    const test::OpCase c = decode(m, n, 4096, DType::f16, true);
    const cuda::SkinnyPlan p = cuda::plan_skinny(c.graph, c.graph.ops[0], 132, 90);
    REQUIRE(p.wgmma);
    return cuda::skinny_cost(p, 132, r);
  };
  for (int64_t m : {32, 64, 128}) CHECK_FALSE(cost90(m, 4096).skinny_wins());
  CHECK_FALSE(cost90(32, 11008).skinny_wins());
  CHECK(cost90(128, 4096).skinny_us * 2 < cost(128, 4096, 4096, true).skinny_us);
  // Its terms: without the fixed cost, and at the copy bandwidth, 32 rows against 4096 x 4096
  // would be taken; A's rows past M cost nothing (not read), its real rows their
  // reads from L2.
  cuda::SkinnyRates ideal;
  ideal.wg_fixed_us = 0;
  ideal.wg_bw_fraction = 1;
  CHECK(cost90(32, 4096, ideal).skinny_wins());
  CHECK(cost90(17, 4096).skinny_us < cost90(63, 4096).skinny_us);
  CHECK(cost90(63, 4096).skinny_us < cost90(64, 4096).skinny_us + 1e-9);
  // The tensor cores take M = 128 far faster than the FMAs (as measured: 93 against 541 us).
  CHECK(cost(128, 4096, 4096, true).skinny_us * 3 < cost(128, 4096, 4096, false).skinny_us);
  const cuda::SkinnyRates rates;
  for (bool nk : {true, false}) {
    const cuda::SkinnyCost c = cost(1, 4096, 4096, nk);
    CHECK(c.floor_us == Approx(8.25).epsilon(0.01));  // 32 MiB at 4069 GB/s, the measured floor
    // at best its measured share of the bandwidth
    CHECK(c.skinny_us >= (nk ? rates.mma_fixed_us + c.floor_us / rates.mma_bw_fraction : c.floor_us / rates.skinny_bw_fraction));
    CHECK(c.cublaslt_us > c.floor_us);
  }
}

TEST_CASE("selection: the kernel the model says, with both figures; --autotune and a tuning cache leave it",
          "[skinny]") {
  for (int64_t m : {32, 128}) {
    const test::OpCase c = decode(m, 4096, 4096, DType::f16, true);
    const OpChoice& ch = choose(c.graph);
    REQUIRE(ch.kernel);
    CHECK(ch.kernel->name == kLt);
    CHECK(contains(reason(ch, kSkinny), "cost model: skinny"));
    CHECK(contains(reason(ch, kSkinny), "cuBLASLt is expected to be as fast or faster"));
  }
  {  // M = 1: the skinny kernel, its figures in the notes
    const test::OpCase c = decode(1, 4096, 4096, DType::f16, true);
    const OpChoice& ch = choose(c.graph);
    REQUIRE(ch.kernel);
    CHECK(ch.kernel->name == kSkinny);
    REQUIRE_FALSE(ch.notes.empty());
    CHECK(contains(ch.notes.front(), "cost model: skinny"));
  }
  {  // --autotune and --tuning-cache build both families (gemm_alternatives.cpp); the primary stays the model's
    KernelOptions o;
    o.tune_alternatives = true;
    for (int64_t m : {1, 32}) {
      const test::OpCase c = decode(m, 4096, 4096, DType::f16, true);
      const OpChoice& ch = choose(c.graph, o);
      REQUIRE(ch.kernel);
      CHECK(ch.kernel->name == (m == 1 ? kSkinny : kLt));
    }
  }
  {  // refused whatever the model says: N not a multiple of 8
    const test::OpCase c = decode(1, 4100, 4096);
    const OpChoice& ch = choose(c.graph);
    REQUIRE(ch.kernel);
    CHECK(ch.kernel->name == kLt);
    CHECK(contains(reason(ch, kSkinny), "multiple of 8"));
  }
}

TEST_CASE("--kernel forces a kernel: the skinny one past its cost model, cuBLASLt past the skinny one", "[skinny]") {
  KernelOptions o;
  REQUIRE(parse_forced_kernel(std::string("*=") + kSkinny, o.forced).ok());
  const test::OpCase big = decode(128, 4096, 4096);
  const OpChoice& ch = choose(big.graph, o);
  REQUIRE(ch.kernel);
  CHECK(ch.kernel->name == kSkinny);
  CHECK(contains(ch.notes.front(), "forced by --kernel"));

  KernelOptions lt;
  const test::OpCase small = decode(1, 4096, 4096);
  REQUIRE(parse_forced_kernel(small.graph.ops[0].name + "=" + kLt, lt.forced).ok());
  const OpChoice& ch2 = choose(small.graph, lt);
  REQUIRE(ch2.kernel);
  CHECK(ch2.kernel->name == kLt);
  CHECK(contains(reason(ch2, kSkinny), "not the kernel forced by --kernel"));

  // Forcing a kernel that refuses the op leaves it without one, and the error says why.
  const test::OpCase odd = decode(1, 4100, 4096);
  auto sel = select_kernels(odd.graph, h200(), Backend::cuda, o);
  REQUIRE_FALSE(sel.ok());
  CHECK(contains(sel.error().message, "multiple of 8"));

  std::map<std::string, std::string> f;
  CHECK_FALSE(parse_forced_kernel("x=no.such_kernel", f).ok());
  CHECK_FALSE(parse_forced_kernel("=cuda.skinny_matmul", f).ok());
  CHECK(parse_forced_kernel("cuda.skinny_matmul", f).ok());
  CHECK(f.at("*") == "cuda.skinny_matmul");
}
