// FP8 block scales (graph-format.md, "FP8"): the form in a file and back, the quantizing CAST's S,
// the reference by hand, runs and checks on the CPU, and a check that refuses a product that read
// one block with the wrong scale.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <tuple>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/real_value.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "graph_builder.hpp"
#include "process.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

using namespace gexec;
using gexec::test::load_ok;

namespace {

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                              reinterpret_cast<const uint8_t*>(v.data() + v.size()));
}

// The bytes of tensor y holding `values` rounded to its dtype: what a correct kernel writes.
std::vector<uint8_t> stored_as(const Tensor& y, const std::vector<double>& values) {
  std::vector<uint8_t> b(size_t(y.bytes()));
  for (size_t i = 0; i < values.size(); ++i) store_real(b.data(), y, int64_t(i), values[i]);
  return b;
}

// X [2, 4] quantized with [1, 2] blocks; only the CAST names S, and Y is the one output.
const char* kCast = R"({"format": "gexec.graph", "version": 1, "tensors": [
    {"name": "X", "shape": [2, 4], "dtype": "f32"},
    {"name": "Y", "shape": [2, 4], "dtype": "f8e4m3", "scale": {"block": [1, 2], "tensor": "S"}},
    {"name": "S", "shape": [2, 2], "dtype": "f32"}],
  "ops": [{"op_type": "CAST", "inputs": ["X"], "outputs": ["Y"]}],
  "outputs": ["Y"]})";

}  // namespace

TEST_CASE("block scales: a CAST computes S as its second output, S is an output beside Y, and saving keeps both",
          "[f8][block]") {
  const Graph g = load_ok(kCast);
  REQUIRE(g.ops.size() == 1);
  CHECK(g.ops[0].outputs == std::vector<TensorId>{g.find_tensor("Y"), g.find_tensor("S")});
  CHECK(writes_block_scale(g, g.ops[0]));
  CHECK(g.outputs == std::vector<TensorId>{g.find_tensor("Y"), g.find_tensor("S")});
  const Tensor& y = g.tensor(g.find_tensor("Y"));
  CHECK(y.scale.block == std::array<int64_t, 2>{1, 2});
  CHECK(y.scale.tensor == g.find_tensor("S"));
  CHECK(block_scale_shape(y) == std::vector<int64_t>{2, 2});
  CHECK(load_ok(save_graph(g)) == g);
}

TEST_CASE("block scales: the reference's S is amax / 448 per block in f32, 1 for zeros; Y's codes use it",
          "[f8][block]") {
  const Graph g = load_ok(kCast);
  std::map<std::string, std::vector<uint8_t>> in;
  in["X"] = f32_bytes({1.0f, -3.0f, 0.0f, 0.0f, 448.0f, 0.5f, 1e-3f, -2e-3f});
  auto r = run_reference(g, in);
  REQUIRE(r.ok());
  const std::vector<double> s = r->at("S").value;
  REQUIRE(s.size() == 4);
  CHECK(s[0] == double(3.0f / 448.0f));
  CHECK(s[1] == 1.0);  // a block of zeros
  CHECK(s[2] == 1.0);  // 448 / 448
  CHECK(s[3] == double(2e-3f / 448.0f));
  // The largest |x| of each block maps to 448 (exact), the others to the nearest code times S.
  const std::vector<double>& y = r->at("Y").value;
  CHECK(y[1] == -3.0 * (double(3.0f / 448.0f) * 448.0 / 3.0));
  CHECK(y[2] == 0.0);
  CHECK(y[4] == 448.0);
  CHECK(y[5] == 0.5);
  CHECK(y[7] == -448.0 * double(2e-3f / 448.0f));
  for (size_t i = 0; i < 8; ++i) CHECK(std::fabs(y[i]) <= 448.0 * s[i / 2] + 1e-30);
}

TEST_CASE("block scales: a product reads each K block of A and each 128x128 block of B with its own scale",
          "[f8][block]") {
  // A [1, 256] with 1x128 blocks, B [256, 1] with a 128x128 block per half of K: all ones stored,
  // so C = 128 * sa0 * sb0 + 128 * sa1 * sb1.
  const Graph g = load_ok(R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "A", "shape": [1, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "SA"}},
      {"name": "SA", "shape": [1, 2], "dtype": "f32", "init": {"values": [0.5, 4]}},
      {"name": "B", "shape": [256, 1], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "SB"}},
      {"name": "SB", "shape": [2, 1], "dtype": "f32", "init": {"values": [0.25, 2]}},
      {"name": "C", "shape": [1, 1], "dtype": "f32"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}]})");
  std::map<std::string, std::vector<uint8_t>> in;
  in["A"] = std::vector<uint8_t>(256, f8::encode(1.0, f8::kE4M3));
  in["B"] = in["A"];
  in["SA"] = f32_bytes({0.5f, 4.0f});
  in["SB"] = f32_bytes({0.25f, 2.0f});
  auto r = run_reference(g, in);
  REQUIRE(r.ok());
  CHECK(r->at("C").value == std::vector<double>{128 * 0.5 * 0.25 + 128 * 4.0 * 2.0});
}

TEST_CASE("block scales: the check refuses a product that read one block with another block's scale",
          "[f8][block]") {
  // Y = X8 W8 with X8 [64, 512] (1x128 blocks) and W8 [512, 256] (128x128 blocks), both given.
  const Graph g = load_ok(R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "X8", "shape": [64, 512], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "SX"}},
      {"name": "SX", "shape": [64, 4], "dtype": "f32", "init": {"dist": "uniform", "low": 0.01, "high": 0.02}},
      {"name": "W8", "shape": [512, 256], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "SW"}},
      {"name": "SW", "shape": [4, 2], "dtype": "f32", "init": {"dist": "uniform", "low": 0.001, "high": 0.002}},
      {"name": "Y", "shape": [64, 256], "dtype": "bf16"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["X8", "W8"], "outputs": ["Y"]}]})");
  std::map<std::string, std::vector<uint8_t>> in;
  for (const char* name : {"SX", "SW", "X8", "W8"})
    in[name] = generate_input(drawable_input(g, g.find_tensor(name), in, 5), 5);
  auto ref = run_reference(g, in);
  REQUIRE(ref.ok());
  const Tensor& y = g.tensor(g.find_tensor("Y"));
  // What a kernel writes: the reference's values rounded to bf16 (a correct kernel) ...
  const OutputCheck good = compare_output(y, stored_as(y, ref->at("Y").value).data(), ref->at("Y"), output_tolerance(y));
  INFO("correct: ratios " << good.max_ratio << " / " << good.norm_ratio);
  CHECK(good.pass);
  // ... and one that read W8's block (1, 0) with the scale of block (0, 0), or X8's block 2 of
  // row 0 with that of block 3.
  for (const auto& [s, at, from] : {std::tuple{"SW", 2, 0}, std::tuple{"SX", 2, 3}}) {
    auto wrong = in;
    auto* v = reinterpret_cast<float*>(wrong[s].data());
    REQUIRE(v[at] != v[from]);
    v[at] = v[from];
    auto mutant = run_reference(g, wrong);
    REQUIRE(mutant.ok());
    const OutputCheck bad =
        compare_output(y, stored_as(y, mutant->at("Y").value).data(), ref->at("Y"), output_tolerance(y));
    INFO(s << "[" << at << "] read as [" << from << "]: ratios " << bad.max_ratio << " / " << bad.norm_ratio);
    CHECK_FALSE(bad.pass);
  }
}

TEST_CASE("quantized in the graph: the codes of a CAST from a graph input are exact, so a product 2% off fails",
          "[f8][block][check]") {
  // X and W quantized by CASTs (block scales computed, or tensor-wise), then Y = X8 W8. A device
  // computes the reference's codes bit for bit (exact_codes.hpp), so the bound on Y is that of the
  // product alone: with one step of every code allowed for, as before, Y 10% off passed.
  for (const bool blocks : {true, false}) {
    const std::string x8 = blocks ? R"("scale": {"block": [1, 128], "tensor": "SX"})" : R"("scale": 0.02)";
    const std::string w8 = blocks ? R"("scale": {"block": [128, 128], "tensor": "SW"})" : R"("scale": 0.0005)";
    const Graph g = load_ok(R"({"format": "gexec.graph", "version": 1, "tensors": [
        {"name": "X", "shape": [64, 512], "dtype": "bf16"},
        {"name": "W", "shape": [512, 256], "dtype": "bf16", "init": {"dist": "normal", "std": 0.05}},
        {"name": "X8", "shape": [64, 512], "dtype": "f8e4m3", )" + x8 + R"(},
        {"name": "SX", "shape": [64, 4], "dtype": "f32"},
        {"name": "W8", "shape": [512, 256], "dtype": "f8e4m3", )" + w8 + R"(},
        {"name": "SW", "shape": [4, 2], "dtype": "f32"},
        {"name": "Y", "shape": [64, 256], "dtype": "bf16"}],
      "ops": [{"op_type": "CAST", "inputs": ["X"], "outputs": )" + (blocks ? R"(["X8", "SX"])" : R"(["X8"])") + R"(},
              {"op_type": "CAST", "inputs": ["W"], "outputs": )" + (blocks ? R"(["W8", "SW"])" : R"(["W8"])") + R"(},
              {"op_type": "MATMUL", "inputs": ["X8", "W8"], "outputs": ["Y"]}],
      "outputs": ["Y"]})");
    const Tensor& y = g.tensor(g.find_tensor("Y"));
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      INFO((blocks ? "block scales" : "tensor-wise scales") << ", seed " << seed);
      std::map<std::string, std::vector<uint8_t>> in;
      for (const char* name : {"X", "W"}) in[name] = generate_input(drawable_input(g, g.find_tensor(name), in, seed), seed);
      auto ref = run_reference(g, in);
      REQUIRE(ref.ok());
      const std::vector<double>& want = ref->at("Y").value;
      auto written = [&](double factor, int64_t at, double at_factor) {
        std::vector<uint8_t> b(size_t(y.bytes()));
        for (size_t i = 0; i < want.size(); ++i)
          store_real(b.data(), y, int64_t(i), want[i] * (int64_t(i) == at ? at_factor : factor));
        return compare_output(y, b.data(), ref->at("Y"), output_tolerance(y));
      };
      const OutputCheck right = written(1.0, -1, 1.0);
      INFO("correct: ratios " << right.max_ratio << " / " << right.norm_ratio);
      CHECK(right.pass);
      const OutputCheck scaled = written(1.02, -1, 1.0);
      INFO("2% off: ratios " << scaled.max_ratio << " / " << scaled.norm_ratio);
      CHECK_FALSE(scaled.pass);
      // One element 5% off (the largest, so that it is well above the output's rounding).
      const auto big = std::max_element(want.begin(), want.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
      const OutputCheck one = written(1.0, big - want.begin(), 1.05);
      INFO("one element 5% off: ratios " << one.max_ratio << " / " << one.norm_ratio);
      CHECK_FALSE(one.pass);
    }
  }
}

#if GEXEC_HAVE_CPU
TEST_CASE("block scales: both graphs run and pass the check on the CPU; --dump writes real values and S, and "
          "gexec check passes on them",
          "[f8][block][cpu][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gexec_block_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* name : {"fp8_block_gemm", "fp8_block_mlp"}) {
    const std::string graph = test::source_path(std::string("graphs/") + name + ".json");
    auto r = test::run_gexec("run --backend cpu '" + graph + "' --verify full");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(test::has(r.output, "result: pass"));
  }
  // A quantizing CAST whose Y and S are outputs: dumped, then checked from the files.
  const fs::path graph = dir / "cast.json";
  fs::create_directories(dir);
  {
    std::ofstream f(graph);
    f << R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "X", "shape": [8, 256], "dtype": "bf16", "init": {"dist": "normal", "std": 3}},
      {"name": "Y", "shape": [8, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "S"}},
      {"name": "S", "shape": [8, 2], "dtype": "f32"}],
      "ops": [{"op_type": "CAST", "inputs": ["X"], "outputs": ["Y"]}]})";
  }
  auto run = test::run_gexec("run --backend cpu '" + graph.string() + "' --dump '" + (dir / "d").string() + "'");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(test::has(run.output, "result: pass"));
  for (const char* file : {"X.npy", "Y.npy", "S.npy"}) CHECK(fs::exists(dir / "d" / file));
  auto check = test::run_gexec("check '" + graph.string() + "' --inputs '" + (dir / "d").string() + "' --outputs '" +
                               (dir / "d").string() + "'");
  INFO(check.output);
  CHECK(check.status == 0);
  fs::remove_all(dir);
}

TEST_CASE("block scales: S values that are 0 or infinite as f32, in the graph, --load-inputs or gexec check, are refused",
          "[f8][block][cpu][cli]") {
  test::TempDir dir("block_s_values");
  auto graph = [&](const std::string& s_init) {
    const std::string path = dir / "g.json";
    test::write(path, R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "A", "shape": [4, 128], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "SA"}},
      {"name": "SA", "shape": [4, 1], "dtype": "f32", "init": )" + s_init + R"(},
      {"name": "B", "shape": [128, 8], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "SB"}},
      {"name": "SB", "shape": [1, 1], "dtype": "f32", "init": {"values": [0.01]}},
      {"name": "C", "shape": [4, 8], "dtype": "f32"}],
      "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}]})");
    return path;
  };
  // Positive and finite as doubles, but 0 and infinite as the f32 that S is.
  for (const auto& [init, says] : {std::pair<std::string, std::string>{R"({"values": [1, 1, 1e-300, 1]})", "is 0 as the f32 S"},
                                   {R"({"values": [1, 1e39, 1, 1]})", "is inf as the f32 S"},
                                   {R"({"dist": "uniform", "low": 1e-60, "high": 1e-50})", "not all positive"}}) {
    auto r = test::run_gexec("validate '" + graph(init) + "'");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(test::has(r.output, says));
  }
  // Files given for S are held to the same rule, by --load-inputs and by gexec check.
  const std::string g = graph(R"({"dist": "uniform", "low": 0.01, "high": 0.02})");
  auto run = test::run_gexec("run --backend cpu '" + g + "' --dump '" + (dir / "d") + "'");
  INFO(run.output);
  REQUIRE(run.status == 0);
  for (const float bad : {0.0f, -0.01f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const std::vector<float> sa = {0.01f, bad, 0.02f, 0.01f};
    REQUIRE(write_npy_f32(dir / "d/SA.npy", {4, 1}, sa.data()).ok());
    auto li = test::run_gexec("run --backend cpu '" + g + "' --load-inputs '" + (dir / "d") + "'");
    INFO(bad << ": " << li.output);
    CHECK(li.status == 2);
    CHECK(test::has(li.output, "block scale \"SA\" value 1 is"));
    auto check = test::run_gexec("check '" + g + "' --inputs '" + (dir / "d") + "' --outputs '" + (dir / "d") + "'");
    INFO(check.output);
    CHECK(check.status == 2);
    CHECK(test::has(check.output, "block scale \"SA\" value 1 is"));
  }
}
#else
GEXEC_SKIPPED_TEST("block scales: runs on the CPU", "[f8][block][cpu]", GEXEC_NO_CPU_BACKEND)
#endif

namespace {

// ||y - exact|| / ||exact|| for the reference of X [rows, 1024] quantized to e4m3 with the given
// blocks (S computed on the fly), dequantized to f32 and multiplied by W: the quantization's error
// alone (f32 sums in double).
double quantized_rel_fro(const std::vector<float>& x, const std::vector<float>& w, int64_t rows,
                         std::array<int64_t, 2> block) {
  const std::string blocks = "[" + std::to_string(block[0]) + ", " + std::to_string(block[1]) + "]";
  const std::string s_shape = "[" + std::to_string((rows + block[0] - 1) / block[0]) + ", " +
                              std::to_string((1024 + block[1] - 1) / block[1]) + "]";
  const std::string r = std::to_string(rows);
  const Graph g = load_ok(R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "X", "shape": [)" + r + R"(, 1024], "dtype": "f32"},
      {"name": "W", "shape": [1024, 64], "dtype": "f32"},
      {"name": "X8", "shape": [)" + r + R"(, 1024], "dtype": "f8e4m3", "scale": {"block": )" + blocks + R"(, "tensor": "S"}},
      {"name": "S", "shape": )" + s_shape + R"(, "dtype": "f32"},
      {"name": "XQ", "shape": [)" + r + R"(, 1024], "dtype": "f32"},
      {"name": "Y", "shape": [)" + r + R"(, 64], "dtype": "f32"},
      {"name": "EXACT", "shape": [)" + r + R"(, 64], "dtype": "f32"}],
    "ops": [{"op_type": "CAST", "inputs": ["X"], "outputs": ["X8", "S"]},
            {"op_type": "CAST", "inputs": ["X8"], "outputs": ["XQ"]},
            {"op_type": "MATMUL", "inputs": ["XQ", "W"], "outputs": ["Y"]},
            {"op_type": "MATMUL", "inputs": ["X", "W"], "outputs": ["EXACT"]}],
    "outputs": ["Y", "EXACT"]})");
  std::map<std::string, std::vector<uint8_t>> in;
  in["X"] = f32_bytes(x);
  in["W"] = f32_bytes(w);
  auto ref = run_reference(g, in);
  REQUIRE(ref.ok());
  const std::vector<double>&y = ref->at("Y").value, &e = ref->at("EXACT").value;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < y.size(); ++i) diff += (y[i] - e[i]) * (y[i] - e[i]), norm += e[i] * e[i];
  return std::sqrt(diff / norm);
}

}  // namespace

// The point of block scaling: one scale for the tensor sends the many small values of activations
// with outliers towards e4m3's subnormals, where 1 x 128 blocks without an outlier keep their own
// scale. Measured on the reference (the kernels' numerics, which the check holds them to); the
// figures are printed (docs/performance.md quotes them).
TEST_CASE("block scales: 1x128 blocks quantize activations with outliers more accurately than one scale per "
          "tensor or per row", "[f8][block]") {
  const int64_t rows = 64;
  struct {
    std::mt19937_64 gen{11};
    double normal() { return std::normal_distribution<double>()(gen); }
    double uniform() { return std::uniform_real_distribution<double>()(gen); }
  } rng;
  std::vector<float> w(1024 * 64);
  for (float& v : w) v = float(rng.normal() * 0.03);
  struct Case {
    std::string what;
    std::vector<float> x;
  };
  std::vector<Case> cases;
  for (const double factor : {100.0, 1000.0}) {
    std::vector<float> x(size_t(rows * 1024));
    for (float& v : x) v = float(rng.normal() * (rng.uniform() < 0.001 ? factor : 1.0));
    cases.push_back({"0.1% of the values at " + std::to_string(int(factor)) + "x", x});
  }
  {
    std::vector<float> x(size_t(rows * 1024));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(rng.normal() * (i % 1024 == 700 ? 100.0 : 1.0));
    cases.push_back({"one channel of 1024 at 100x", x});
  }
  for (const Case& c : cases) {
    const double tensor = quantized_rel_fro(c.x, w, rows, {rows, 1024});
    const double row = quantized_rel_fro(c.x, w, rows, {1, 1024});
    const double block = quantized_rel_fro(c.x, w, rows, {1, 128});
    WARN(c.what << ": rel_fro of e4m3 against the unquantized product: tensor-wise " << tensor << ", row-wise " << row
                << ", 1x128 blocks " << block << " (" << tensor / block << "x better than tensor-wise)");
    CHECK(block < tensor);
    CHECK(block <= row);
  }
}

TEST_CASE("block scales on CUDA, planned without a device: cuBLASLt's layouts of S in the dry-run, and the refusals",
          "[block][cli]") {
  // fp8_block_mlp: x8 (1x128, S computed in every run) times the constant w1 (128x128, S constant).
  const std::string mlp = test::source_path("graphs/fp8_block_mlp.json");
  auto r = test::run_gexec("run --dry-run --arch sm_90 '" + mlp + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "cublaslt.fp8_gemm_bias_act"));
  CHECK(test::has(r.output, "cuda.f8_cast"));
  // [L = 512/128 = 4][M = 128] rows-major; [ceil(1024/128) = 8][L rounded up to 4 = 4] K-major.
  CHECK(test::has(r.output, "A's S (1x128, VEC128_32F) M-major [4,128], copied in every run; B's S (128x128, "
                            "BLK128x128_32F) K-major [8,4], copied once, before the runs"));
  auto ada = test::run_gexec("run --dry-run --arch sm_89 '" + mlp + "'");
  CHECK(ada.status == 3);
  CHECK(test::has(ada.output, "used on sm_90 only"));

  const std::string dir = std::filesystem::temp_directory_path().string();
  auto write = [&](const std::string& name, const std::string& a_block, const std::string& b_block, bool fast) {
    const std::string path = dir + "/" + name + "_" + std::to_string(getpid()) + ".json";
    std::ofstream(path) << R"({"format": "gexec.graph", "version": 1, "tensors": [
        {"name": "A", "shape": [128, 256], "dtype": "f8e4m3", "scale": {"block": )" + a_block + R"(, "tensor": "SA"}},
        {"name": "SA", "shape": )" + (a_block == "[1, 128]" ? "[128, 2]" : "[1, 2]") + R"(, "dtype": "f32", "init": {"dist": "ones"}},
        {"name": "B", "shape": [256, 128], "dtype": "f8e4m3", "scale": {"block": )" + b_block + R"(, "tensor": "SB"}},
        {"name": "SB", "shape": )" + (b_block == "[128, 1]" ? "[2, 128]" : "[2, 1]") + R"(, "dtype": "f32", "init": {"dist": "ones"}},
        {"name": "C", "shape": [128, 128], "dtype": "bf16"}],
      "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"fast_accum": )" +
                             (fast ? "true" : "false") + "}}]}";
    return path;
  };
  const std::string both_2d = write("block_2d_2d", "[128, 128]", "[128, 128]", false);
  auto r2 = test::run_gexec("run --dry-run --arch sm_90 '" + both_2d + "'");
  CHECK(r2.status == 3);
  CHECK(test::has(r2.output, "cuBLASLt has no kernel with 128x128 blocks on both operands"));
  CHECK(test::run_gexec("run --dry-run --backend cpu '" + both_2d + "'").status == 0);
  const std::string fast = write("block_fast", "[1, 128]", "[128, 128]", true);
  auto r3 = test::run_gexec("run --dry-run --arch sm_90 '" + fast + "'");
  CHECK(r3.status == 3);
  CHECK(test::has(r3.output, "cuBLASLt has no block-scaled kernel with fast accumulation"));
  // 1x128 on both (B's along K: [128, 1]) is cuBLASLt's VEC128 x VEC128.
  const std::string vec = write("block_vec_vec", "[1, 128]", "[128, 1]", false);
  auto r4 = test::run_gexec("run --dry-run --arch sm_90 '" + vec + "'");
  INFO(r4.output);
  CHECK(r4.status == 0);
  CHECK(test::has(r4.output, "B's S (1x128, VEC128_32F) N-major [2,128]"));
  for (const std::string& p : {both_2d, fast, vec}) std::filesystem::remove(p);
}

namespace {

// GROUPED_GEMM with X [2, 256] (1x128 blocks) against two experts' W [2, 256, 1] (128x128 blocks:
// S [2, 2, 1], one matrix per expert), a row each; S values and a second op's attrs as given.
std::string grouped_blocks(const std::string& w_block = "[128, 128]", const std::string& sw_shape = "[2, 2, 1]") {
  return R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "X", "shape": [2, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "SX"}},
      {"name": "SX", "shape": [2, 2], "dtype": "f32", "init": {"values": [0.5, 4, 2, 0.125]}},
      {"name": "W", "shape": [2, 256, 1], "dtype": "f8e4m3", "scale": {"block": )" + w_block + R"(, "tensor": "SW"}},
      {"name": "SW", "shape": )" + sw_shape + R"(, "dtype": "f32", "init": {"values": [0.25, 2, 8, 0.0625]}},
      {"name": "offsets", "shape": [2], "dtype": "i32", "init": {"values": [1, 2]}},
      {"name": "Y", "shape": [2, 1], "dtype": "f32"}],
    "ops": [{"op_type": "GROUPED_GEMM", "inputs": ["X", "W", "offsets"], "outputs": ["Y"]}]})";
}

}  // namespace

TEST_CASE("block scales on GROUPED_GEMM: each expert's W has its own S matrix; X's K blocks their own scales",
          "[f8][block][grouped]") {
  const Graph g = load_ok(grouped_blocks());
  std::map<std::string, std::vector<uint8_t>> in;
  in["X"] = std::vector<uint8_t>(512, f8::encode(1.0, f8::kE4M3));
  in["W"] = in["X"];
  in["SX"] = f32_bytes({0.5f, 4.0f, 2.0f, 0.125f});
  in["SW"] = f32_bytes({0.25f, 2.0f, 8.0f, 0.0625f});
  in["offsets"] = {1, 0, 0, 0, 2, 0, 0, 0};
  auto r = run_reference(g, in);
  REQUIRE(r.ok());
  // Row 0 (expert 0): 128 (0.5 x 0.25 + 4 x 2); row 1 (expert 1): 128 (2 x 8 + 0.125 x 0.0625).
  CHECK(r->at("Y").value == std::vector<double>{128 * (0.5 * 0.25 + 4.0 * 2.0), 128 * (2.0 * 8.0 + 0.125 * 0.0625)});
  // The CPU backend computes the same and passes the check; a kernel that read expert 1 with
  // expert 0's S would not (below).
  test::TempDir dir("grouped_blocks");
  const std::string path = dir / "g.json";
  test::write(path, grouped_blocks());
  auto run = test::run_gexec("run --backend cpu '" + path + "'");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(test::has(run.output, "result: pass"));
}

TEST_CASE("block scales on GROUPED_GEMM: the check refuses an expert read with another expert's S", "[f8][block][grouped]") {
  // Y = X8 W8 over 3 experts: X8 [96, 256] (1x128), W8 [3, 256, 128] (128x128 blocks, S [3, 2, 1]).
  const Graph g = load_ok(R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "X8", "shape": [96, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "SX"}},
      {"name": "SX", "shape": [96, 2], "dtype": "f32", "init": {"dist": "uniform", "low": 0.01, "high": 0.02}},
      {"name": "W8", "shape": [3, 256, 128], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "SW"}},
      {"name": "SW", "shape": [3, 2, 1], "dtype": "f32", "init": {"dist": "uniform", "low": 0.001, "high": 0.002}},
      {"name": "offsets", "shape": [3], "dtype": "i32", "init": {"values": [30, 60, 96]}},
      {"name": "Y", "shape": [96, 128], "dtype": "bf16"}],
    "ops": [{"op_type": "GROUPED_GEMM", "inputs": ["X8", "W8", "offsets"], "outputs": ["Y"]}]})");
  std::map<std::string, std::vector<uint8_t>> in;
  for (const char* name : {"SX", "SW", "X8", "W8", "offsets"})
    in[name] = generate_input(drawable_input(g, g.find_tensor(name), in, 7), 7);
  auto ref = run_reference(g, in);
  REQUIRE(ref.ok());
  const Tensor& y = g.tensor(g.find_tensor("Y"));
  CHECK(compare_output(y, stored_as(y, ref->at("Y").value).data(), ref->at("Y"), output_tolerance(y)).pass);
  // Expert 2's second K block read with expert 0's scale for it: SW[2, 1, 0] = SW[0, 1, 0].
  auto wrong = in;
  auto* sw = reinterpret_cast<float*>(wrong["SW"].data());
  REQUIRE(sw[5] != sw[1]);
  sw[5] = sw[1];
  auto mutant = run_reference(g, wrong);
  REQUIRE(mutant.ok());
  const OutputCheck bad = compare_output(y, stored_as(y, mutant->at("Y").value).data(), ref->at("Y"), output_tolerance(y));
  INFO("ratios " << bad.max_ratio << " / " << bad.norm_ratio);
  CHECK_FALSE(bad.pass);
}

TEST_CASE("block scales on GROUPED_GEMM: the format's rules, and CUDA's kernel takes them where FP8 WGMMA does, else says why",
          "[f8][block][grouped][cli]") {
  test::TempDir dir("grouped_block_rules");
  auto refused = [&](const std::string& text, const std::string& says) {
    const std::string path = dir / "g.json";
    test::write(path, text);
    auto r = test::run_gexec("validate '" + path + "'");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(test::has(r.output, says));
  };
  refused(grouped_blocks("[1, 128]", "[2, 256, 1]"), "W takes [128,128]");
  refused(grouped_blocks("[128, 128]", "[2, 1]"), "block scale tensor \"SW\" must be f32 [2,2,1]");
  std::string x_only = grouped_blocks();
  x_only.replace(x_only.find(R"(, "scale": {"block": [128, 128], "tensor": "SW"})"),
                 std::string(R"(, "scale": {"block": [128, 128], "tensor": "SW"})").size(), "");
  refused(x_only, "block scaling needs both operands block-scaled");
  // A CAST neither computes nor reads rank-3 block scales.
  refused(R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "W", "shape": [2, 256, 128], "dtype": "bf16"},
      {"name": "W8", "shape": [2, 256, 128], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "S"}},
      {"name": "S", "shape": [2, 2, 1], "dtype": "f32"}],
    "ops": [{"op_type": "CAST", "inputs": ["W"], "outputs": ["W8"]}]})",
          "a CAST quantizes to and dequantizes from block scales at rank 2");
  const std::string path = dir / "cuda.json";
  test::write(path, grouped_blocks());
  auto cuda = test::run_gexec("run --dry-run --arch sm_90 --backend cuda '" + path + "'");
  INFO(cuda.output);
  CHECK(cuda.status != 0);
  CHECK(test::has(cuda.output, "block-scaled f8 X and W run on the FP8 WGMMA kernel only: an sm_90 device, W [G, N, K] "
                               "(trans_b), K and N multiples of 128"));
  // W [G, N, K] with K and N multiples of 128: the FP8 WGMMA kernel takes the blocks on an sm_90.
  const std::string fits = dir / "fits.json";
  test::write(fits, R"({"format": "gexec.graph", "version": 1, "tensors": [
      {"name": "X", "shape": [300, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "SX"}},
      {"name": "SX", "shape": [300, 2], "dtype": "f32", "init": {"dist": "uniform", "low": 0.5, "high": 2}},
      {"name": "W", "shape": [2, 128, 256], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "SW"}},
      {"name": "SW", "shape": [2, 1, 2], "dtype": "f32", "init": {"dist": "uniform", "low": 0.01, "high": 0.02}},
      {"name": "offsets", "shape": [2], "dtype": "i32", "init": {"values": [100, 290]}},
      {"name": "Y", "shape": [300, 128], "dtype": "bf16"}],
    "ops": [{"op_type": "GROUPED_GEMM", "name": "experts", "inputs": ["X", "W", "offsets"], "outputs": ["Y"],
             "attrs": {"trans_b": true}}]})");
  for (const char* arch : {"sm_90", "sm_80"}) {
    auto r = test::run_gexec(std::string("run --dry-run --arch ") + arch + " --backend cuda '" + fits + "'");
    INFO(arch << "\n" << r.output);
    if (std::string(arch) == "sm_90") {
      CHECK(r.status == 0);
      CHECK(test::has(r.output, "experts (GROUPED_GEMM) -> cuda.grouped_gemm"));
      CHECK(test::has(r.output, "block-scaled f8 X and W on FP8 WGMMA (sm_90a)"));
    } else {
      CHECK(r.status != 0);
      CHECK(test::has(r.output, "block-scaled f8 X and W run on the FP8 WGMMA kernel only"));
    }
  }
}
