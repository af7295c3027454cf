// FP8 on the device: the cuBLASLt FP8 product (scales, amax, fast accumulation, epilogues, the TN
// arrangement of every operand layout) and the f8 CAST, each run through gexec against the CPU
// reference; and the shared codec against CUDA's own conversions (cuda_fp8.h).
#include "catch.hpp"

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "gexec/ir/f8.hpp"
#include "unit/process.hpp"

using namespace gexec;

namespace {

// Writes a one-op FP8 graph; the product is M x N x K with the given operand forms.
std::string fp8_graph(const std::string& name, const std::string& a, const std::string& b, const std::string& c,
                      const std::string& extra_tensors, const std::string& op) {
  const std::string text = R"({"format": "gexec.graph", "version": 1, "name": ")" + name + R"(", "tensors": [)" + a +
                           ", " + b + ", " + c + extra_tensors + R"(], "ops": [)" + op + "]}";
  const auto path = std::filesystem::temp_directory_path() / (name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

void runs_on_cuda(const std::string& path, const std::string& kernel) {
  auto r = test::run_gexec("run --backend cuda '" + path + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "result: pass"));
  CHECK(test::has(r.output, kernel));
}

}  // namespace

TEST_CASE("FP8 graphs of graphs/ pass on the device with the FP8 kernels", "[fp8][gpu]") {
  for (const char* g : {"graphs/fp8_gemm_bias_relu.json", "graphs/fp8_mlp3.json", "graphs/fp8_output_amax.json",
                        "graphs/fp8_rowwise.json"}) {
    INFO(g);
    auto r = test::run_gexec("run --backend cuda '" + test::source_path(g) + "'");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(test::has(r.output, "cublaslt.fp8_"));
  }
}

TEST_CASE("FP8 products: every operand layout, transposes, fast accumulation, epilogues, outputs", "[fp8][gpu]") {
  const std::string bias = R"(, {"name": "Bias", "shape": [96], "dtype": "f32", "init": {"dist": "normal", "std": 0.5}})";
  for (const char* act : {"none", "relu", "gelu"})
    for (bool fast : {false, true})
      for (const char* out : {"bf16", "f16", "f32"})
        for (int form = 0; form < 4; ++form) {
          // form 0: A [M,K], B [K,N] (B copied transposed); 1: B trans_b [N,K] (TN as stored);
          // 2: A colmajor, B colmajor; 3: A trans_a [K,M] (A copied transposed), B constant.
          const bool ta = form == 3, tb = form == 1;
          const std::string la = form == 2 ? R"(, "layout": "colmajor")" : "";
          const std::string lb = form == 2 ? R"(, "layout": "colmajor")" : "";
          const std::string a = R"({"name": "A", "shape": )" + std::string(ta ? "[80, 64]" : "[64, 80]") +
                                R"(, "dtype": "f8e4m3", "scale": 0.03125)" + la + "}";
          const std::string b = R"({"name": "B", "shape": )" + std::string(tb ? "[96, 80]" : "[80, 96]") +
                                R"(, "dtype": "f8e4m3", "scale": 0.0078125)" + lb + (form == 3 ? R"(, "constant": true)" : "") + "}";
          const std::string c = R"({"name": "C", "shape": [64, 96], "dtype": ")" + std::string(out) + R"("})";
          const std::string op = R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"], "attrs": {"act": ")" +
                                 std::string(act) + R"(", "fast_accum": )" + (fast ? "true" : "false") +
                                 R"(, "trans_a": )" + (ta ? "true" : "false") + R"(, "trans_b": )" + (tb ? "true" : "false") + "}}";
          const std::string name = std::string("fp8_case_") + act + (fast ? "_fast_" : "_") + out + "_" + std::to_string(form);
          INFO(name);
          runs_on_cuda(fp8_graph(name, a, b, c, bias, op), "cublaslt.fp8_gemm_bias_act");
        }
}

TEST_CASE("FP8 f8 outputs with D scale and amax, e5m2 operands, per-row and per-column scales", "[fp8][gpu]") {
  const std::string a = R"({"name": "A", "shape": [128, 64], "dtype": "f8e4m3", "scale": 0.0625})";
  const std::string b = R"({"name": "B", "shape": [64, 32], "dtype": "f8e5m2", "scale": 0.001, "constant": true})";
  for (const char* out : {"f8e4m3", "f8e5m2"}) {
    const std::string c = R"({"name": "C", "shape": [128, 32], "dtype": ")" + std::string(out) + R"(", "scale": 0.25})";
    const std::string extra = R"(, {"name": "M", "shape": [1], "dtype": "f32"}, {"name": "Bias", "shape": [32], "dtype": "bf16"})";
    const std::string op = R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C", "M"], "attrs": {"act": "relu"}})";
    runs_on_cuda(fp8_graph(std::string("fp8_out_") + out, a, b, c, extra, op), "cublaslt.fp8_gemm_bias_act");
  }
  std::string rows = "[", cols = "[";
  // Appended piece by piece: "," + std::string trips GCC 12's false -Wrestrict.
  for (int i = 0; i < 128; ++i) rows.append(i ? "," : "").append(std::to_string(0.01 * (1 + i % 3)));
  for (int j = 0; j < 32; ++j) cols.append(j ? "," : "").append(std::to_string(0.002 * (1 + j % 5)));
  const std::string ar = R"({"name": "A", "shape": [128, 64], "dtype": "f8e4m3", "scale": {"axis": 0, "values": )" + rows + "]}}";
  const std::string br = R"({"name": "B", "shape": [64, 32], "dtype": "f8e4m3", "scale": {"axis": 1, "values": )" + cols + "]}}";
  const std::string cr = R"({"name": "C", "shape": [128, 32], "dtype": "bf16"})";
  runs_on_cuda(fp8_graph("fp8_rowcol", ar, br, cr, "",
                         R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"fast_accum": true}})"),
               "cublaslt.fp8_matmul");
}

// split_f8_outputs writes this product's C as f32 (it has an amax) with cuBLASLt's outer-vector
// scales, and the f8 CAST quantizes it and takes the amax from the f32 result.
TEST_CASE("FP8 per-row/column scales with an f8 C and its amax: split through f32, the amax passes", "[fp8][gpu]") {
  const std::string graph = test::source_path("tests/data/f8/rowwise_f8_amax.json");
  for (int seed = 0; seed < 4; ++seed) {
    INFO("seed " << seed);
    auto r = test::run_gexec("run --backend cuda --seed " + std::to_string(seed) + " '" + graph + "'");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(test::has(r.output, "result: pass"));
    CHECK(test::has(r.output, "cublaslt.fp8_gemm_bias_act"));
    CHECK(test::has(r.output, "cuda.f8_cast"));
  }
}

TEST_CASE("FP8 amax with a bias and M padded: the padded rows of D stay out of the amax", "[fp8][gpu]") {
  // A > 0 and B < 0 make every real product <= -16, so relu(AB + 30) <= 14 in every real row;
  // rows padded with zeros would hold relu(0 + 30) = 30 and put the amax at 30.
  const std::string a = R"({"name": "A", "shape": [4, 16], "dtype": "f8e4m3", "init": {"dist": "uniform", "low": 1, "high": 2}})";
  const std::string b = R"({"name": "B", "shape": [16, 3], "dtype": "f8e4m3", "constant": true, "init": {"dist": "uniform", "low": -2, "high": -1}})";
  const std::string c = R"({"name": "C", "shape": [4, 3], "dtype": "f8e4m3", "scale": 0.0625})";
  const std::string extra = R"(, {"name": "Bias", "shape": [3], "dtype": "bf16", "constant": true, "init": {"values": [30, 30, 30]}})"
                            R"(, {"name": "M", "shape": [1], "dtype": "f32"})";
  const std::string op = R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C", "M"], "attrs": {"act": "relu"}})";
  const std::string path = fp8_graph("fp8_amax_padded_m", a, b, c, extra, op);
  runs_on_cuda(path, "cublaslt.fp8_gemm_bias_act");
  const auto dry = test::run_gexec("run --dry-run --backend cuda '" + path + "'");
  INFO(dry.output);
  CHECK(test::has(dry.output, "padded rows repeat its last row"));
}

TEST_CASE("f8 CAST on the device: quantize with amax, dequantize, per-axis scales, colmajor", "[fp8][gpu]") {
  const std::string x = R"({"name": "X", "shape": [48, 40], "dtype": "f32", "init": {"dist": "normal", "std": 300}})";
  const std::string y = R"({"name": "Y", "shape": [48, 40], "dtype": "f8e4m3", "layout": "colmajor", "scale": {"axis": 1, "values": [)" +
                        [] {
                          std::string s;
                          for (int j = 0; j < 40; ++j) s.append(j ? "," : "").append(std::to_string(0.5 + j * 0.25));
                          return s;
                        }() + "]}}";
  const std::string z = R"({"name": "Z", "shape": [48, 40], "dtype": "bf16"})";
  const std::string ops = R"({"op_type": "CAST", "inputs": ["X"], "outputs": ["Y", "M"]}, {"op_type": "CAST", "inputs": ["Y"], "outputs": ["Z"]})";
  // The outputs are the ones no op reads: the amax M and the dequantized Z.
  const std::string path = fp8_graph("f8_cast_cuda", x, y, z, R"(, {"name": "M", "shape": [1], "dtype": "f32"})", ops);
  auto r = test::run_gexec("run --backend cuda '" + path + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "cuda.f8_cast"));
}

TEST_CASE("the f8 codec agrees with cuda_fp8.h on every code and midpoint", "[fp8][gpu]") {
  for (int fmt = 0; fmt < 2; ++fmt) {
    const f8::Format f = fmt ? f8::kE5M2 : f8::kE4M3;
    const __nv_fp8_interpretation_t interp = fmt ? __NV_E5M2 : __NV_E4M3;
    for (int c = 0; c < 256; ++c) {
      const double v = f8::decode(uint8_t(c), f);
      __half_raw h = __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(c), interp);
      const float cuda_v = float(__half(h));
      INFO("format " << fmt << " code " << c);
      if (std::isnan(v)) {
        CHECK(std::isnan(cuda_v));
        continue;
      }
      CHECK(double(cuda_v) == v);
      if (std::isinf(v) || c == 0x7F || c == 0xFF) continue;
      const double next = f8::decode(uint8_t(c + 1), f);
      if (!std::isfinite(next) || (c & 0x7F) == 0x7F) continue;
      for (double probe : {v, (v + next) / 2, std::nextafter((v + next) / 2, v), std::nextafter((v + next) / 2, next)})
        CHECK(f8::encode(probe, f) == uint8_t(__nv_cvt_double_to_fp8(probe, __NV_SATFINITE, interp)));
    }
  }
}
