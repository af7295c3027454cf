// GROUPED_GEMM: the format's rules (i32 offsets, shapes, what other ops may not read), the CPU
// backend against the reference over the shared cases (sound), and the check catching a row
// routed to the wrong group (sharp); bad offsets, which are data, fail a run with exit 3.
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/ir/rounding.hpp"
#include "gexec/kernels/precision.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "grouped_case.hpp"
#include "process.hpp"
#include "simulated_fp8.hpp"
#include "temp_dir.hpp"

#if GEXEC_HAVE_CPU
#include "backend_ops.hpp"
#include "gexec/backends/cpu_device.hpp"
#endif
#ifdef GEXEC_HAVE_CUDA
#include "../../src/backends/cuda/grouped_fit.hpp"
#include "../../src/backends/cuda/grouped_gemm.hpp"
#endif
#include "unit/skip.hpp"

using namespace gexec;
using test::has;

namespace {

// A graph file of one GROUPED_GEMM with `offsets` and the attrs given as JSON text.
std::string grouped_json(const std::string& offsets, const std::string& attrs = "{}", const std::string& w_shape = "[3, 16, 8]",
                         const std::string& off_dtype = "i32") {
  return R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [10, 16], "dtype": "f16"},
    {"name": "W", "shape": )" + w_shape + R"(, "dtype": "f16"},
    {"name": "offsets", "shape": [3], "dtype": ")" + off_dtype + R"(", "init": {"values": )" + offsets + R"(}},
    {"name": "Y", "shape": [10, 8], "dtype": "f32"}],
  "ops": [{"op_type": "GROUPED_GEMM", "name": "experts", "inputs": ["X", "W", "offsets"], "outputs": ["Y"], "attrs": )" +
         attrs + "}]}";
}

}  // namespace

TEST_CASE("grouped gemm: the format's rules", "[grouped]") {
  test::TempDir dir("grouped_rules");
  auto check = [&](const std::string& text, int status, const std::string& says) {
    const std::string path = dir / "g.json";
    test::write(path, text);
    auto r = test::run_gexec("validate '" + path + "'");
    INFO(text << "\n" << r.output);
    CHECK(r.status == status);
    CHECK(has(r.output, says));
  };
  check(grouped_json("[2, 2, 9]", R"({"act": "silu", "alpha": 0.5})"), 0, ": ok (");
  check(grouped_json("[2, 2, 9]", R"({"act": "swish"})"), 2, "expected one of none, relu, gelu, gelu_erf, silu");
  check(grouped_json("[2, 2, 9]", R"({"trans_a": true})"), 2, "unknown key");
  check(grouped_json("[2, 2, 9]", "{}", "[3, 8, 16]"), 2, "(W is [G, K, N]; [G, N, K] needs trans_b)");
  check(grouped_json("[2, 2, 9]", R"({"trans_b": true})", "[3, 8, 16]"), 0, ": ok (");
  check(grouped_json("[2, 2, 9]", "{}", "[2, 16, 8]"), 2, "must be [2] (one per group of W)");
  check(grouped_json("[2, 2, 9]", "{}", "[3, 16, 8]", "f32"), 2, "offsets \"offsets\" must be i32");
  check(grouped_json("[2, 2.5, 9]"), 2, "an i32 value is an integer");
  check(grouped_json("[2, \"nan\", 9]"), 2, "an i32 value is an integer");
  check(grouped_json("[2, 2, 3000000000]"), 2, "an i32 value is an integer");
  // i32 is no arithmetic op's operand.
  check(R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "a", "shape": [4], "dtype": "i32", "init": {"values": [1, 2, 3, 4]}}, {"name": "b", "shape": [4], "dtype": "f32"}],
    "ops": [{"op_type": "RELU", "inputs": ["a"], "outputs": ["b"]}]})", 2, "i32 is allowed only as GROUPED_GEMM's offsets");
  // The dry-run plans it on CUDA (any machine) with the grouped kernel.
  const std::string path = dir / "ok.json";
  test::write(path, grouped_json("[2, 2, 9]", R"({"act": "relu"})"));
  auto dry = test::run_gexec("run --dry-run --arch sm_90 '" + path + "'");
  INFO(dry.output);
  CHECK(dry.status == 0);
  CHECK(has(dry.output, "cuda.grouped_gemm"));
}

#if GEXEC_HAVE_CPU

namespace {

// A .npy file of int64 values (numpy's default integer), written by hand: gexec writes only int32.
void write_i64_npy(const std::string& path, const std::vector<int64_t>& v) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += char(header.size() & 0xFF), bytes += char(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
  test::write(path, bytes);
}

}  // namespace

TEST_CASE("grouped gemm: offsets files: gexec check reads them as --dump writes them; a value beyond i32 is refused",
          "[grouped][cpu][cli]") {
  test::TempDir dir("grouped_files");
  const std::string graph = dir / "g.json";
  test::write(graph, grouped_json("[0, 4, 7]"));
  auto run = test::run_gexec("run --backend cpu '" + graph + "' --dump '" + (dir / "d") + "'");
  INFO(run.output);
  REQUIRE(run.status == 0);
  auto check = test::run_gexec("check '" + graph + "' --inputs '" + (dir / "d") + "' --outputs '" + (dir / "d") + "'");
  INFO(check.output);
  CHECK(check.status == 0);
  CHECK(has(check.output, "result: pass"));
  // int64 data is read as it is where i32 holds it, and refused (not clamped) where it does not.
  std::filesystem::create_directories(dir / "li");
  write_i64_npy(dir / "li/offsets.npy", {0, 4, 7});
  auto in_range = test::run_gexec("run --backend cpu '" + graph + "' --load-inputs '" + (dir / "li") + "'");
  INFO(in_range.output);
  CHECK(in_range.status == 0);
  write_i64_npy(dir / "li/offsets.npy", {int64_t(1) << 40, 4, 7});
  auto beyond = test::run_gexec("run --backend cpu '" + graph + "' --load-inputs '" + (dir / "li") + "'");
  INFO(beyond.output);
  CHECK(beyond.status == 2);
  CHECK(has(beyond.output, "element 0 is 1099511627776; an i32 value is an integer from"));
  // A float file for the offsets is refused by check as by --load-inputs.
  const std::vector<float> f = {0, 4, 7};
  REQUIRE(write_npy_f32(dir / "d/offsets.npy", {3}, f.data()).ok());
  auto floats = test::run_gexec("check '" + graph + "' --inputs '" + (dir / "d") + "' --outputs '" + (dir / "d") + "'");
  INFO(floats.output);
  CHECK(floats.status == 2);
  CHECK(has(floats.output, "an i32 tensor reads int32 or int64"));
}

// The shared cases pass on the CPU in the backend-ops harness (test_backend_ops.cpp); here the
// check's sharpness on them.
TEST_CASE("grouped gemm: the check fails a row routed to the wrong group, and unowned rows not zero", "[grouped][cpu]") {
  auto dev = open_cpu_device();
  test::GroupedCase c;
  const test::CaseResult right = test::run_case(*dev, test::grouped_graph(c));
  INFO(right.describe());
  CHECK(right.kernel == "cpu.grouped_gemm");
  CHECK(right.pass());
  // The reference routes the last row of group 2 to group 3 instead; that row must fail.
  const Graph g = test::grouped_graph(c);
  const test::CaseResult wrong = test::run_case(*dev, g, nullptr, {}, test::with_offsets({7, 7, 29, 37}));
  INFO(wrong.describe());
  CHECK(wrong.error.empty());
  CHECK_FALSE(wrong.pass());
  // So must a reference that owns the tail: rows past the last offset are the kernel's zeros.
  CHECK_FALSE(test::run_case(*dev, g, nullptr, {}, test::with_offsets({7, 7, 30, 40})).pass());
  // And the right offsets through the same edit pass (the edit itself changes nothing else).
  CHECK(test::run_case(*dev, g, nullptr, {}, test::with_offsets({7, 7, 30, 37})).pass());
}

TEST_CASE("grouped gemm: offsets that decrease or exceed T fail the run with exit 3 on the CPU", "[grouped][cpu]") {
  test::TempDir dir("grouped_offsets");
  for (const auto& [offsets, says] : {std::pair<std::string, std::string>{"[2, 1, 9]", "offsets[1] = 1 is below offsets[0] = 2"},
                                      {"[2, 2, 11]", "offsets[2] = 11 exceeds the 10 tokens of X"},
                                      {"[-1, 2, 9]", "offsets[0] = -1 is below 0"}}) {
    const std::string path = dir / "bad.json";
    test::write(path, grouped_json(offsets));
    auto r = test::run_gexec("run --backend cpu '" + path + "'");
    INFO(r.output);
    CHECK(r.status == 3);
    CHECK(has(r.output, "op experts: " + says));
  }
  // Valid offsets with an unowned tail and an empty group pass.
  const std::string ok = dir / "ok.json";
  test::write(ok, grouped_json("[0, 4, 7]", R"({"act": "gelu"})"));
  auto r = test::run_gexec("run --backend cpu '" + ok + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "result: pass"));
}

#else

#include "skip.hpp"
GEXEC_SKIPPED_TEST("grouped gemm: the CPU backend", "[grouped][cpu]", GEXEC_NO_CPU_BACKEND)

#endif

// The blocked accumulator of the FP8 grouped kernel (Precision::accumulate_block): each element's
// bound holds the squared magnitudes of its blocks of K, in both W layouts. A simulated kernel
// that sums blocks of 128 K terms with a 14-bit accumulator and adds them in f32 passes under
// the FP8 declaration and fails the f32 one; a product 1.6% too large fails under either.
TEST_CASE("grouped gemm: the FP8 block model bounds each group's products by their blocks", "[grouped][fp8]") {
  for (bool tb : {false, true}) {
    test::GroupedCase c;
    c.tokens = 48, c.k = 1024, c.n = 24, c.trans_b = tb, c.bias = false, c.out = DType::f32;
    c.ends = {10, 10, 33, 45};  // an empty group, unowned rows 45..47
    const Graph g = test::grouped_graph(c);
    std::map<std::string, std::vector<uint8_t>> in;
    for (const char* name : {"X", "W"}) {
      Tensor t = g.tensor(g.find_tensor(name));
      Init init;
      init.std = 0.5;
      t.init = init;
      in[name] = generate_input(t, name[0] == 'X' ? 5 : 6);
    }
    in["offsets"] = generate_input(g.tensor(g.find_tensor("offsets")), 0);
    auto val = [&](const char* name, int64_t i) { return double(load_as_float(in.at(name).data(), DType::f16, i)); };
    auto simulate = [&](double scale) {
      std::vector<uint8_t> out(size_t(c.tokens * c.n) * 4, 0);
      for (int64_t grp = 0, r0 = 0; grp < int64_t(c.ends.size()); r0 = int64_t(c.ends[size_t(grp)]), ++grp)
        for (int64_t r = r0; r < int64_t(c.ends[size_t(grp)]); ++r)
          for (int64_t j = 0; j < c.n; ++j) {
            const float total = test::blocked_fp8_sum(c.k, kFp8PromotionBlock, [&](int64_t k) {
              const int64_t w = tb ? (grp * c.n + j) * c.k + k : (grp * c.k + k) * c.n + j;
              return val("X", r * c.k + k) * val("W", w);
            });
            const float f = float(double(total) * scale);
            std::memcpy(out.data() + 4 * size_t(r * c.n + j), &f, 4);
          }
      return out;
    };
    auto check_with = [&](const std::vector<uint8_t>& got, const Precision& p) {
      auto ref = run_reference(g, in, {}, p);
      REQUIRE(ref.ok());
      return compare_output(g.tensor(g.find_tensor("Y")), got.data(), ref->at("Y"), default_tolerance(DType::f32));
    };
    INFO((tb ? "W [G, N, K]" : "W [G, K, N]"));
    const Precision fp8 = fp8_tensor_core_precision(false);
    const auto right = simulate(1.0), wrong = simulate(1.0 + 0x1p-6);
    const OutputCheck declared = check_with(right, fp8);
    INFO("declared: norm ratio " << declared.norm_ratio << ", element ratio " << declared.max_ratio);
    CHECK(declared.pass);
    CHECK_FALSE(check_with(right, Precision{}).pass);
    CHECK_FALSE(check_with(wrong, fp8).pass);
  }
}

// The rule the declarations read for the WGMMA kernel (grouped_fit.hpp: the GROUPED_GEMM and
// one-group GEMM dry-run verdicts) and the plan that launches it (plan_grouped_gemm, whose WGMMA
// kernel checks the shape again: grouped_sm90_unfit) take the same shapes, on any device figures.
#ifdef GEXEC_HAVE_CUDA
TEST_CASE("grouped gemm: the declarations' WGMMA rule is the plan's", "[grouped]") {
  int wgmma = 0, mma = 0;
  for (DType in : {DType::f16, DType::bf16, DType::f8e4m3})
    for (int cc : {80, 90})
      for (bool trans_b : {false, true})
        for (int64_t k : {64, 96, 128, 4096, 4104})
          for (int64_t n : {120, 128, 256, 2048, 2056})
            for (auto [groups, tokens] : {std::pair{1, 64}, {1, 63}, {8, 512}, {8, 511}, {8, 4096}, {64, 512}}) {
              cuda::GroupedGemmPlan p;
              p.tokens = tokens, p.k = k, p.n = n, p.groups = groups, p.trans_b = trans_b, p.cc = cc;
              p.in = p.in_w = in;
              p.out = DType::bf16;
              const bool rule = cuda::grouped_wgmma_fits(cc, trans_b, k, n, in) &&
                                (is_f8(in) || tokens / groups >= cuda::kWgmmaMinAvgRows);
              const cuda::GroupedGemmPlan q = cuda::plan_grouped_gemm(p);
              INFO(dtype_name(in) << " cc " << cc << " trans_b " << trans_b << " K " << k << " N " << n << " G " << groups
                                  << " T " << tokens << ": " << q.rejected);
              if (is_f8(in) && !rule) {  // f8 operands run on WGMMA only: refused elsewhere
                CHECK_FALSE(q.rejected.empty());
                continue;
              }
              REQUIRE(q.rejected.empty());
              CHECK(q.wgmma == rule);
              ++(q.wgmma ? wgmma : mma);
            }
  CHECK(wgmma > 50);
  CHECK(mma > 50);
}
#else
GEXEC_SKIPPED_TEST("grouped gemm: the declarations' WGMMA rule is the plan's", "[grouped]",
                   "this build has no CUDA backend (no nvcc found, or configured with -DGEXEC_CUDA=OFF)")
#endif
