// Every output checked in full by default: the choice of full or sampled from the reference's
// measured rate and --verify-budget, the strata that give every tile of an output a sample, a
// device engine checked against the CPU's sums, and wrong results above the old 2^33 switch
// refused with the default options.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "temp_dir.hpp"
#include "../../src/app/check.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/ir/graph_build.hpp"
#include "gexec/ir/real_value.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/reference.hpp"
#include "gexec/verify/reference_cost.hpp"
#include "process.hpp"
#include "skip.hpp"
#include "graph_builder.hpp"

using namespace gexec;
namespace fs = std::filesystem;

namespace {

using Bytes = std::map<std::string, std::vector<uint8_t>>;

using test::inputs_of;

Graph product(int64_t m, int64_t n, int64_t k, DType dt = DType::f16) {
  Graph g;
  g.name = "p";
  const TensorId a = add_tensor(g, "A", {m, k}, dt), b = add_tensor(g, "B", {k, n}, dt);
  const TensorId c = add_tensor(g, "C", {m, n}, dt);
  add_op(g, "P", OpType::MATMUL, {a, b}, c);
  g.outputs = {c};
  return g;
}

// The block (row, column of the tensor seen as a matrix) each sampled element falls in.
std::set<std::pair<int64_t, int64_t>> blocks_hit(const Tensor& t, const std::vector<int64_t>& idx, int64_t tile) {
  const TileShape ts = tile_of(t, tile);
  const int64_t cols = t.shape.back();
  std::set<std::pair<int64_t, int64_t>> hit;
  for (int64_t s : idx) {
    const int64_t l = logical_of(t, s);
    hit.insert({(l / cols) / ts.rows, (l % cols) / ts.cols});
  }
  return hit;
}

}  // namespace

TEST_CASE("strata: every tile of every output gets a sample, at any shape", "[sample][strata]") {
  std::vector<Tensor> shapes;
  auto add = [&](std::vector<int64_t> shape, Layout layout = Layout::rowmajor) {
    Tensor t;
    t.name = "T" + std::to_string(shapes.size());
    t.shape = std::move(shape);
    t.dtype = DType::f16;
    t.layout = layout;
    shapes.push_back(t);
  };
  add({256, 384});
  add({100, 77});
  add({3, 50, 40});  // batched: the batch entries' rows one after another
  add({5000});       // one row: blocks of tile^2 columns
  add({40, 64}, Layout::colmajor);
  add({7, 1000});  // fewer rows than a tile
  for (const Tensor& t : shapes)
    for (int64_t tile : {8, 16, 32}) {
      INFO(t.name << " " << t.numel() << " elements, tile " << tile);
      const TileShape ts = tile_of(t, tile);
      CHECK(ts.rows * ts.cols <= tile * tile);
      const int64_t rows = t.numel() / t.shape.back(), cols = t.shape.back();
      const int64_t tiles = ((rows + ts.rows - 1) / ts.rows) * ((cols + ts.cols - 1) / ts.cols);
      // Strata alone: one element per block, every block.
      const std::vector<int64_t> one = choose_samples(t, 1, 7, tile);
      CHECK(int64_t(one.size()) == std::min(tiles, t.numel()));
      CHECK(int64_t(one.size()) == sample_count(t, 1, tile));
      CHECK(int64_t(blocks_hit(t, one, tile).size()) == tiles);
      CHECK(std::set<int64_t>(one.begin(), one.end()).size() == one.size());
      CHECK(one == choose_samples(t, 1, 7, tile));
      if (tiles < t.numel()) CHECK(one != choose_samples(t, 1, 8, tile));
      // With more asked for: the strata, then others at random, all distinct.
      const int64_t more = std::min(t.numel(), tiles + 100);
      const std::vector<int64_t> extra = choose_samples(t, tiles + 100, 7, tile);
      CHECK(int64_t(extra.size()) == more);
      CHECK(int64_t(blocks_hit(t, extra, tile).size()) == tiles);
      CHECK(std::set<int64_t>(extra.begin(), extra.end()).size() == extra.size());
      for (int64_t s : extra) CHECK((s >= 0 && s < t.numel()));
    }
}

TEST_CASE("strata: a wrong 64x64 block anywhere holds a sampled element", "[sample][strata]") {
  Tensor t;
  t.name = "C";
  t.shape = {512, 640};
  const std::vector<int64_t> idx = choose_samples(t, 0, 3, 32);
  const std::set<int64_t> picked(idx.begin(), idx.end());
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t r0 = std::uniform_int_distribution<int64_t>(0, 512 - 64)(rng);
    const int64_t c0 = std::uniform_int_distribution<int64_t>(0, 640 - 64)(rng);
    bool found = false;
    for (int64_t r = r0; r < r0 + 64 && !found; ++r)
      for (int64_t c = c0; c < c0 + 64 && !found; ++c) found = picked.count(r * 640 + c) > 0;
    INFO("block at " << r0 << ", " << c0);
    CHECK(found);
  }
}

TEST_CASE("plan: auto is full where the measured rate puts the reference within the budget", "[check][plan]") {
  const ReferenceRates& rates = measured_reference_rates();
  INFO("rates: " << rates.product_macs_per_s << " multiply-adds/s, sampled " << rates.sampled_macs_per_s
                 << ", elements " << rates.elements_per_s << "/s");
  REQUIRE(rates.product_macs_per_s > 0);
  REQUIRE(rates.sampled_macs_per_s > 0);
  REQUIRE(rates.elements_per_s > 0);
  CHECK(&rates == &measured_reference_rates());  // measured once

  // Above the size that is full without an estimate.
  const Graph g = product(512, 512, 512);
  REQUIRE(reference_work(g) > kSmallReferenceWork);
  const double est = estimate_full_seconds(g, {}, rates);
  REQUIRE(est > 0);
  // From the rate: twice the K adds the multiply-adds of one more 512^3 at the measured rate.
  const double est2 = estimate_full_seconds(product(512, 512, 1024), {}, rates);
  CHECK(est2 - est == Approx(512.0 * 512 * 512 / rates.product_macs_per_s).epsilon(0.02));

  const CheckPlan within = plan_check(g, VerifyMode::automatic, est * 4, 4096, {}, false);
  CHECK(within.mode == VerifyMode::full);
  CHECK(within.estimate_s == est);
  CHECK(within.tile == 0);
  CHECK_FALSE(within.device);
  CHECK(test::has(within.why, "within the --verify-budget"));

  const CheckPlan over = plan_check(g, VerifyMode::automatic, est / 4, 4096, {}, false);
  CHECK(over.mode == VerifyMode::sample);
  CHECK((over.tile == 8 || over.tile == 16 || over.tile == 32));
  CHECK(over.estimate_s < est);
  CHECK(test::has(over.why, "over the --verify-budget"));
  // A budget of nothing still samples every 32x32 tile.
  CHECK(plan_check(g, VerifyMode::automatic, 0, 4096, {}, false).tile == 32);

  // A device sums the products: full whatever the budget; full and exact as asked; small graphs
  // full without measuring anything.
  CHECK(plan_check(g, VerifyMode::automatic, 0, 4096, {}, true).mode == VerifyMode::full);
  CHECK(plan_check(g, VerifyMode::automatic, 0, 4096, {}, true).device);
  CHECK(plan_check(g, VerifyMode::full, 0, 4096, {}, false).mode == VerifyMode::full);
  CHECK(plan_check(g, VerifyMode::exact, 0, 4096, {}, true).device);
  CHECK(plan_check(g, VerifyMode::none, 0, 4096, {}, true).mode == VerifyMode::none);
  const CheckPlan small = plan_check(product(64, 64, 64), VerifyMode::automatic, 0, 4096, {}, false);
  CHECK(small.mode == VerifyMode::full);
  CHECK(small.estimate_s < 0);

  // At the old switch (2^33 multiply-adds), the default budget decides by this machine's rate.
  const Graph big = product(2048, 2048, 2112);
  REQUIRE(reference_work(big) > 8589934592.0);
  const double big_est = estimate_full_seconds(big, {}, rates);
  const CheckPlan by_default = plan_check(big, VerifyMode::automatic, kDefaultVerifyBudget, 4096, {}, false);
  INFO("2048x2048x2112: estimated " << big_est << " s");
  CHECK(by_default.mode == (big_est <= kDefaultVerifyBudget ? VerifyMode::full : VerifyMode::sample));
}

namespace {

// A stand-in device: the CPU's sums, changed as a test asks.
class FakeDevice final : public ProductEngine {
 public:
  double value_factor = 1, var_factor = 1;
  std::string refuse;
  int calls = 0;
  std::string name() const override { return "a test device"; }
  std::string prepare(const ProductKind&, int64_t) override { return refuse; }
  Result<ProductSums> sums(const ProductJob& job, const EngineProgress& progress) override {
    ++calls;
    auto r = cpu_product_engine().sums(job, progress);
    if (!r) return r;
    for (double& v : r->value) v *= value_factor;
    for (double& v : r->var) v *= var_factor;
    return r;
  }
};

Bytes outputs_of(const Graph& g, const Bytes& in) {
  auto ref = run_reference(g, in);
  REQUIRE(ref);
  Bytes out;
  for (TensorId id : g.outputs) {
    const Tensor& t = g.tensor(id);
    std::vector<uint8_t> bytes(size_t(t.bytes()));
    for (int64_t i = 0; i < t.numel(); ++i) store_real(bytes.data(), t, i, ref->at(t.name).value[size_t(i)]);
    out[t.name] = std::move(bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("cross-check: a device's sums are checked against the CPU's, product by product", "[check][cross-check]") {
  auto loaded = load_graph_file(test::source_path("graphs/mlp3.json"));
  REQUIRE(loaded);
  const Graph& g = *loaded;
  const Bytes in = inputs_of(g, 3);
  const Bytes out = outputs_of(g, in);
  FakeDevice device;
  CheckSettings settings;
  settings.device = &device;

  SECTION("sums that agree: the outputs pass, and say the device computed them") {
    std::vector<std::string> notes;
    auto checks = check_outputs(g, in, out, settings, &notes);
    REQUIRE(checks);
    CHECK(device.calls == 3);
    CHECK(notes.empty());
    for (const OutputCheck& c : *checks) {
      CHECK(c.pass);
      CHECK(c.reference == ReferenceSite::device);
      CHECK(c.cross_checked > 0);
      CHECK(c.cross_checked <= 3 * kCrossCheckSamples);
      CHECK(test::has(c.checked_by, "a test device"));
      CHECK(test::has(c.checked_by, "cross-checked"));
    }
  }
  SECTION("values off by a relative 1e-12, beyond float64 rounding: a runtime error naming it") {
    device.value_factor = 1 + 1e-12;
    auto checks = check_outputs(g, in, out, settings);
    REQUIRE_FALSE(checks);
    INFO(checks.error().message);
    CHECK(checks.error().code == Exit::runtime);
    CHECK(test::has(checks.error().message, "disagrees with the CPU reference, op "));
    CHECK(test::has(checks.error().message, "value "));
    CHECK(test::has(checks.error().message, "float64 rounding allows"));
  }
  SECTION("a carried variance off: named as such") {
    device.var_factor = 1.5;
    auto checks = check_outputs(g, in, out, settings);
    REQUIRE_FALSE(checks);
    INFO(checks.error().message);
    CHECK(test::has(checks.error().message, "carried variance"));
  }
  SECTION("a device that cannot take a product: the CPU sums it, and a note says why") {
    device.refuse = "it needs 9 GiB of device memory, 1 GiB free";
    std::vector<std::string> notes;
    auto checks = check_outputs(g, in, out, settings, &notes);
    REQUIRE(checks);
    CHECK(device.calls == 0);
    REQUIRE(notes.size() == 3);
    CHECK(test::has(notes[0], "was summed on the CPU: it needs 9 GiB"));
    for (const OutputCheck& c : *checks) {
      CHECK(c.pass);
      CHECK(c.reference == ReferenceSite::cpu);
      CHECK(c.checked_by == "the full CPU reference");
    }
  }
}

TEST_CASE("cross-check: a one-product graph's check streams from the device, cross-checked as well",
          "[check][cross-check][stream]") {
  const Graph g = product(300, 256, 96);
  REQUIRE(streamable(g));
  const Bytes in = inputs_of(g, 5);
  const Bytes out = outputs_of(g, in);
  FakeDevice device;
  CheckSettings settings;
  settings.device = &device;

  SECTION("sums that agree: the CPU's check, bit for bit, said to come from the device") {
    std::vector<std::string> notes;
    auto checks = check_outputs(g, in, out, settings, &notes);
    REQUIRE(checks);
    REQUIRE(checks->size() == 1);
    CHECK(device.calls == 1);
    CHECK(notes.empty());
    const OutputCheck& c = checks->front();
    CHECK(c.pass);
    CHECK(c.reference == ReferenceSite::device);
    CHECK(c.cross_checked == kCrossCheckSamples);
    auto on_cpu = check_outputs(g, in, out, CheckSettings{});
    REQUIRE(on_cpu);
    CHECK(on_cpu->front().norm_ratio == c.norm_ratio);
    CHECK(on_cpu->front().max_ratio == c.max_ratio);
    CHECK(on_cpu->front().worst == c.worst);
  }
  SECTION("values off by a relative 1e-12: a runtime error naming the element") {
    device.value_factor = 1 + 1e-12;
    auto checks = check_outputs(g, in, out, settings);
    REQUIRE_FALSE(checks);
    INFO(checks.error().message);
    CHECK(checks.error().code == Exit::runtime);
    CHECK(test::has(checks.error().message, "disagrees with the CPU reference, op P: value "));
  }
  SECTION("a device that cannot take it: the CPU streams it, and a note says why") {
    device.refuse = "panels of 300 rows of C need more device memory than is free (12 rows fit)";
    std::vector<std::string> notes;
    auto checks = check_outputs(g, in, out, settings, &notes);
    REQUIRE(checks);
    CHECK(device.calls == 0);
    REQUIRE(notes.size() == 1);
    CHECK(test::has(notes[0], "was summed on the CPU: panels of 300 rows"));
    CHECK(checks->front().pass);
    CHECK(checks->front().reference == ReferenceSite::cpu);
  }
}

TEST_CASE("cross-check: float64 sums in another order agree within the slack", "[check][cross-check]") {
  // A product summed backwards (another order, as a device's blocked sums are) agrees with the
  // CPU's at every element, and the slack is tight: 1e-12 of the magnitude is beyond it.
  const Graph g = product(16, 24, 4096, DType::f32);
  const Bytes in = inputs_of(g, 9);
  ProductJob job;
  job.op = "P";
  job.kind.shape = *gemm_shape(g, g.ops[0]);
  job.a = {&g.tensor(0), &in.at("A"), nullptr, nullptr};
  job.b = {&g.tensor(1), &in.at("B"), nullptr, nullptr};
  double worst = 0;
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 24; ++j) {
      const ElementSums fwd = element_sums(job, 0, i, j);
      double back = 0;
      for (int64_t k = 4095; k >= 0; --k) back += job.a.at(i * 4096 + k) * job.b.at(k * 24 + j);
      const double slack = sum_order_slack(4096, fwd.scale);
      worst = std::max(worst, std::fabs(back - fwd.value) / slack);
      CHECK(std::fabs(back - fwd.value) <= slack);
      CHECK(1e-12 * fwd.scale > slack);
    }
  INFO("largest difference / slack " << worst);
  CHECK(worst < 1);
}

TEST_CASE("bound: alpha and beta reach kernels as f32; a coefficient f32 cannot hold adds its error", "[bound]") {
  CHECK(bound::coefficient_var(1.0, 5.0) == 0);
  CHECK(bound::coefficient_var(0.5, 5.0) == 0);
  CHECK(bound::coefficient_var(0.0, 5.0) == 0);
  // 0.1 in f32 is off by 1.5e-9 relative: within the accumulation term, but carried.
  CHECK(bound::coefficient_var(0.1, 1.0) > 0);
  CHECK(std::sqrt(bound::coefficient_var(0.1, 1.0)) < 0x1p-24);
  // -1e-40 is an f32 subnormal: only 17 bits, 5.3e-6 relative.
  const double e = std::sqrt(bound::coefficient_var(-1e-40, 1.0));
  CHECK(e > 5e-6);
  CHECK(e < 6e-6);
}

#if GEXEC_HAVE_CPU

namespace {

// A folder of the process's own, removed when the tests end.
fs::path scratch(const std::string& name) {
  static const gexec::test::TempDir root("full");
  fs::path p = root.path / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string write_graph(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / (name + ".json");
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("section 4: a subnormal alpha on an f32 product passes (its f32 rounding is in the bound)", "[check][cpu]") {
  const fs::path dir = scratch("alpha");
  const std::string g = write_graph(dir, "subalpha", R"({"format": "gexec.graph", "version": 1, "name": "subalpha",
    "tensors": [{"name": "A", "shape": [64, 128], "dtype": "f32"}, {"name": "B", "shape": [128, 48], "dtype": "f32"},
                {"name": "C", "shape": [64, 48], "dtype": "f32"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"alpha": -1e-40}}],
    "outputs": ["C"]})");
  for (const char* seed : {"0", "1", "2"}) {
    const auto r = test::run_gexec("run --backend cpu --seed " + std::string(seed) + " '" + g + "'");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(test::has(r.output, "result: pass"));
  }
}

TEST_CASE("section 4: RELU of -inf is 0 and passes; a non-finite output's bound is never -nan", "[check][cpu]") {
  const fs::path dir = scratch("inf");
  // 70000 overflows f16: CAST gives -inf and inf, RELU 0 and inf.
  const std::string relu = write_graph(dir, "relu", R"({"format": "gexec.graph", "version": 1, "name": "relu",
    "tensors": [{"name": "X", "shape": [4], "dtype": "f32", "init": {"values": [1, -70000, 2, 3]}},
                {"name": "Y", "shape": [4], "dtype": "f16"}, {"name": "Z", "shape": [4], "dtype": "f16"}],
    "ops": [{"op_type": "CAST", "inputs": ["X"], "outputs": ["Y"]}, {"op_type": "RELU", "inputs": ["Y"], "outputs": ["Z"]}],
    "outputs": ["Z"]})");
  auto r = test::run_gexec("run --backend cpu '" + relu + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "0/4  pass"));

  const std::string over = write_graph(dir, "over", R"({"format": "gexec.graph", "version": 1, "name": "over",
    "tensors": [{"name": "X", "shape": [4], "dtype": "f32", "init": {"values": [1, 70000, 2, 3]}},
                {"name": "Y", "shape": [4], "dtype": "f16"}],
    "ops": [{"op_type": "CAST", "inputs": ["X"], "outputs": ["Y"]}], "outputs": ["Y"]})");
  // The graph as written overflows: inf is the right answer, and matches the reference's inf
  // (README, "The check"), with no -nan printed for its bound.
  r = test::run_gexec("run --backend cpu '" + over + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "0/4  pass"));
  CHECK_FALSE(test::has(r.output, "nan"));
}

TEST_CASE("section 4: an option's upper bound 1e300 is printed as 1e300 and not as 301 digits", "[cli][cpu]") {
  const auto r = test::run_gexec("run " + test::source_path("graphs/gemm_bias_relu.json") + " --backend cpu --atol 1e301");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(test::has(r.output, "--atol: expected a finite number from 0 to 1e300, got \"1e301\""));
  CHECK(r.output.size() < 200);
}

namespace {

#if defined(__SANITIZE_ADDRESS__)
#define GEXEC_FULL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GEXEC_FULL_ASAN 1
#endif
#endif

struct Checked {
  int exit = -1;
  nlohmann::json report;
  std::string text;
};

Checked check(const std::string& graph, const fs::path& inputs, const fs::path& outputs, const std::string& verify) {
  CheckOptions o;
  o.graph_path = graph;
  o.inputs_dir = inputs.string();
  o.outputs_dir = outputs.string();
  if (!verify.empty()) o.verify = verify;  // else the default
  o.backend = "cpu";
  o.report_path = (outputs / "report.json").string();
  std::ostringstream out, err;
  Checked c;
  c.exit = int(check_command(o, out, err));
  c.text = out.str() + err.str();
  std::ifstream f(o.report_path);
  c.report = nlohmann::json::parse(f, nullptr, false);
  return c;
}

void write_c(const fs::path& dir, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  fs::create_directories(dir);
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = float_to_f16(float(values[i]));
  REQUIRE(write_npy_f16((dir / "C.npy").string(), shape, bits.data()));
}

}  // namespace

TEST_CASE("default check: a stale tile and one element off by 1% are refused above the old 2^33 switch",
          "[check][cpu][fullcheck]") {
  // 2048 x 2048 x 2112: 8.9e9 multiply-adds, above the 2^33 where --verify auto used to sample
  // 4096 elements. GEXEC_FULLCHECK_SIZE=S runs S x S x (S + 64) instead; ASan builds run 1024.
#ifdef GEXEC_FULL_ASAN
  int64_t size = 1024;
#else
  int64_t size = 2048;
#endif
  if (const char* s = std::getenv("GEXEC_FULLCHECK_SIZE"); s && std::atoll(s) >= 64) size = std::atoll(s);
  const int64_t m = size, n = size, k = size + 64;
  const fs::path dir = scratch("default");
  std::ostringstream text;
  text << R"({"format": "gexec.graph", "version": 1, "name": "big", "tensors": [)"
       << R"({"name": "A", "shape": [)" << m << "," << k << R"(], "dtype": "f16", "init": {"dist": "normal", "std": 0.5}},)"
       << R"({"name": "B", "shape": [)" << k << "," << n << R"(], "dtype": "f16", "init": {"dist": "normal", "std": 0.5}},)"
       << R"({"name": "C", "shape": [)" << m << "," << n << R"(], "dtype": "f16"}],)"
       << R"("ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}], "outputs": ["C"]})";
  const std::string graph = write_graph(dir, "big", text.str());

  // The CPU backend's correct product, unchecked (the check below is the subject), dumped.
  RunOptions run;
  run.graph_path = graph;
  run.backend = "cpu";
  run.verify = "none";
  run.dump_dir = (dir / "run").string();
  std::ostringstream out, err;
  REQUIRE(run_command(run, out, err) == Exit::ok);
  auto npy = read_npy((dir / "run" / "C.npy").string());
  REQUIRE(npy);
  const std::vector<double>& c0 = npy->values;

  auto loaded = load_graph_file(graph);
  REQUIRE(loaded);
  const CheckPlan plan = plan_check(*loaded, VerifyMode::automatic, kDefaultVerifyBudget, 4096, {}, false);
  INFO("--verify auto on this machine: " << verify_mode_name(plan.mode) << " (" << plan.why << ")");

  // A 64 x 64 tile at a place no kernel tile starts, holding the values of another tile.
  std::vector<double> stale = c0;
  const int64_t r0 = m / 3 + 5, q0 = n / 2 + 3;
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 64; ++c) stale[size_t((r0 + r) * n + q0 + c)] = c0[size_t((r + 64) * n + c + 128)];
  write_c(dir / "stale", {m, n}, stale);
  // One element, of a typical magnitude, off by 1% of the output's rms.
  double ss = 0;
  for (double v : c0) ss += v * v;
  const double rms = std::sqrt(ss / double(c0.size()));
  std::vector<double> one = c0;
  size_t at = size_t(m / 2 * n + n / 3);
  while (std::fabs(one[at]) > rms) ++at;
  one[at] = c0[at] + 0.01 * rms;
  write_c(dir / "one", {m, n}, one);

  // `gexec run`'s default, --verify auto: full where this machine's rate allows it.
  const Checked s = check(graph, dir / "run", dir / "stale", "auto");
  INFO(s.text);
  CHECK(s.exit == 1);  // by the full reference, or by the strata
  const Checked o = check(graph, dir / "run", dir / "one", plan.mode == VerifyMode::full ? "auto" : "");
  INFO(o.text);
  CHECK(o.exit == 1);
  REQUIRE(o.report.is_object());
  CHECK(o.report["check"]["mode"] == "full");
  CHECK(o.report["check"]["outputs"][0]["checked_by"] == "the full CPU reference");
  CHECK(o.report["check"]["outputs"][0]["beyond"] == 1);
  if (plan.mode == VerifyMode::full) CHECK(o.report["check"]["requested"] == "auto");
  else WARN("this machine's rate sampled at the default budget; the element was refused by gexec check's default (full)");
  fs::remove_all(dir);
}

TEST_CASE("default check: gexec check's default is the full reference", "[check][cpu]") {
  const fs::path dir = scratch("check_default");
  RunOptions run;
  run.graph_path = test::source_path("graphs/gemm_bias_relu.json");
  run.backend = "cpu";
  run.dump_dir = (dir / "run").string();
  std::ostringstream out, err;
  REQUIRE(run_command(run, out, err) == Exit::ok);
  const Checked c = check(run.graph_path, dir / "run", dir / "run", "");
  INFO(c.text);
  CHECK(c.exit == 0);
  REQUIRE(c.report.is_object());
  CHECK(c.report["check"]["requested"] == "full");
  CHECK(c.report["check"]["mode"] == "full");
  CHECK(c.report["check"]["reference"] == "cpu");
  CHECK(test::has(c.text, "checked all 6144 elements against the full CPU reference"));
  fs::remove_all(dir);
}

#else
GEXEC_SKIPPED_TEST("default check: wrong results above the old switch are refused", "[check][cpu]", GEXEC_NO_CPU_BACKEND)
#endif

