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

namespace {

// A graph file with its own tensors, ops and outputs (JSON fragments).
std::string block_graph(const std::string& name, const std::string& tensors, const std::string& ops,
                        const std::string& outputs) {
  const std::string text = R"({"format": "gexec.graph", "version": 1, "name": ")" + name + R"(", "tensors": [)" +
                           tensors + R"(], "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
  const auto path = std::filesystem::temp_directory_path() / (name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

std::string shape(int64_t r, int64_t c) { return "[" + std::to_string(r) + ", " + std::to_string(c) + "]"; }
int64_t up(int64_t n, int64_t b) { return (n + b - 1) / b; }

// An f8 operand with a block scale and its S, both graph inputs (S drawn positive).
std::string block_operand(const std::string& name, int64_t r, int64_t c, int64_t br, int64_t bc) {
  return R"({"name": ")" + name + R"(", "shape": )" + shape(r, c) + R"(, "dtype": "f8e4m3", "scale": {"block": )" +
         shape(br, bc) + R"(, "tensor": "S)" + name + R"("}}, {"name": "S)" + name + R"(", "shape": )" +
         shape(up(r, br), up(c, bc)) + R"(, "dtype": "f32", "init": {"dist": "uniform", "low": 0.001, "high": 0.01}})";
}

}  // namespace

TEST_CASE("block-scaled FP8 graphs of graphs/ pass on the device: the quantizing CAST and cuBLASLt's block modes",
          "[fp8][gpu][block]") {
  for (const char* g : {"graphs/fp8_block_gemm.json", "graphs/fp8_block_mlp.json"})
    for (int seed = 0; seed < 3; ++seed) {
      INFO(g << " seed " << seed);
      auto r = test::run_gexec("run --backend cuda --seed " + std::to_string(seed) + " '" + test::source_path(g) + "'");
      INFO(r.output);
      CHECK(r.status == 0);
      CHECK(test::has(r.output, "result: pass"));
      CHECK(test::has(r.output, "cublaslt.fp8_"));
      CHECK(test::has(r.output, "cuda.f8_cast"));
    }
}

TEST_CASE("block-scaled FP8 products: 1x128 and 128x128 on either operand, every layout, padded sizes, epilogues",
          "[fp8][gpu][block]") {
  struct Size {
    int64_t m, n, k;
  };
  // The second is padded to multiples of 16 (M 72 -> 80, N 136 -> 144, K 200 -> 208: two K blocks).
  for (const Size z : {Size{256, 384, 512}, Size{72, 136, 200}})
    for (int form = 0; form < 4; ++form)
      for (const char* out : {"bf16", "f32"}) {
        // 0: A [M,K] 1x128, B [K,N] 128x128; 1: B trans_b [N,K] 128x128; 2: A trans_a [K,M] 128x1,
        // B trans_b [N,K] 1x128 (1D on both); 3: A [M,K] 128x128, B trans_b [N,K] 1x128.
        const bool ta = form == 2, tb = form != 0;
        const std::string a = ta ? block_operand("A", z.k, z.m, 128, 1)
                                 : block_operand("A", z.m, z.k, form == 3 ? 128 : 1, 128);
        const std::string b = tb ? block_operand("B", z.n, z.k, form >= 2 ? 1 : 128, 128)
                                 : block_operand("B", z.k, z.n, 128, 128);
        const std::string tensors = a + ", " + b + R"(, {"name": "Bias", "shape": [)" + std::to_string(z.n) +
                                    R"(], "dtype": "bf16"}, {"name": "C", "shape": )" + shape(z.m, z.n) +
                                    R"(, "dtype": ")" + out + R"("})";
        const std::string op = R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"], "attrs": {"act": ")" +
                               std::string(form % 2 ? "gelu" : "relu") + R"(", "trans_a": )" + (ta ? "true" : "false") +
                               R"(, "trans_b": )" + (tb ? "true" : "false") + "}}";
        const std::string name = "fp8_block_" + std::to_string(z.m) + "_" + std::to_string(form) + "_" + out;
        INFO(name);
        const std::string path = block_graph(name, tensors, op, R"("C")");
        auto r = test::run_gexec("run --backend cuda '" + path + "'");
        INFO(r.output);
        CHECK(r.status == 0);
        CHECK(test::has(r.output, "result: pass"));
        CHECK(test::has(r.output, "cublaslt.fp8_gemm_bias_act"));
        auto dry = test::run_gexec("run --dry-run --backend cuda '" + path + "'");
        CHECK(test::has(dry.output, form == 3 ? "A's S (128x128, BLK128x128_32F)" : "A's S (1x128, VEC128_32F)"));
      }
}

TEST_CASE("block-scaled FP8: 128x128 blocks on both operands, and fast accumulation, are refused on CUDA with the reason",
          "[fp8][gpu][block]") {
  const std::string tensors = block_operand("A", 128, 256, 128, 128) + ", " + block_operand("B", 256, 128, 128, 128) +
                              R"(, {"name": "C", "shape": [128, 128], "dtype": "bf16"})";
  const std::string path =
      block_graph("fp8_block_2d_2d", tensors, R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]})", R"("C")");
  auto r = test::run_gexec("run --backend cuda '" + path + "'");
  INFO(r.output);
  CHECK(r.status == 3);  // no kernel for the op on the backend asked for, as for --kernel
  CHECK(test::has(r.output, "cuBLASLt has no kernel with 128x128 blocks on both operands"));
  auto cpu = test::run_gexec("run --backend cpu '" + path + "'");
  CHECK(cpu.status == 0);
  const std::string fast_tensors = block_operand("A", 128, 256, 1, 128) + ", " + block_operand("B", 256, 128, 128, 128) +
                                   R"(, {"name": "C", "shape": [128, 128], "dtype": "bf16"})";
  const std::string fast = block_graph(
      "fp8_block_fast", fast_tensors,
      R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"fast_accum": true}})", R"("C")");
  auto f = test::run_gexec("run --backend cuda '" + fast + "'");
  INFO(f.output);
  CHECK(f.status == 3);
  CHECK(test::has(f.output, "cuBLASLt has no block-scaled kernel with fast accumulation"));
}

TEST_CASE("the quantizing CAST on the device: S and the codes equal the reference's, bit for bit, for every dtype and block",
          "[fp8][gpu][block]") {
  struct Case {
    const char* dtype;
    int64_t rows, cols, br, bc;
    const char* layout;
    const char* code = "f8e4m3";
  };
  // Rows of 1 x (8..256) blocks over a row-major input take the one-pass kernel: 16 bf16 or f16
  // values a thread where the row's length is a multiple of 16, else 8 (f32, a 1 x 8 block, 264,
  // 2056 or 4104 columns); rows longer than a CTA's columns take several CTAs, and more rows than
  // 16 CTAs per SM have CTAs that step over rows (2500 x 128). The others (an odd block, a
  // colmajor output, 128 x 128) take the kernel of a CTA per block. bf16 and f16 values, of few significant bits,
  // put some quotients on f8 midpoints, where the one-pass kernel leaves its fast path.
  for (const Case c : {Case{"bf16", 96, 384, 1, 128, "rowmajor"}, Case{"f16", 64, 264, 1, 128, "rowmajor"},
                       Case{"f32", 40, 256, 1, 32, "rowmajor"}, Case{"bf16", 33, 96, 1, 8, "rowmajor"},
                       Case{"bf16", 5, 4104, 1, 64, "rowmajor", "f8e5m2"}, Case{"f16", 3, 2056, 1, 256, "rowmajor"},
                       Case{"f16", 7, 4096, 1, 256, "rowmajor"}, Case{"bf16", 9, 2048, 1, 64, "rowmajor", "f8e5m2"},
                       Case{"f32", 6, 4104, 1, 8, "rowmajor", "f8e5m2"}, Case{"bf16", 2500, 128, 1, 128, "rowmajor"},
                       Case{"bf16", 300, 260, 128, 128, "rowmajor"}, Case{"f32", 30, 50, 3, 7, "rowmajor"},
                       Case{"bf16", 64, 256, 1, 128, "colmajor", "f8e5m2"}})
    for (const char* init : {R"({"dist": "normal", "std": 300})", R"({"dist": "normal", "std": 0.001})", R"({"dist": "zeros"})",
                             R"({"dist": "uniform", "low": -3, "high": 3})"}) {
      const std::string name = std::string("f8_quantize_") + c.dtype + "_" + std::to_string(c.br) + "x" +
                               std::to_string(c.bc) + "_" + c.layout + "_" + c.code;
      INFO(name << " " << init);
      const std::string tensors =
          R"({"name": "X", "shape": )" + shape(c.rows, c.cols) + R"(, "dtype": ")" + c.dtype + R"(", "init": )" + init +
          R"(}, {"name": "Y", "shape": )" + shape(c.rows, c.cols) + R"(, "dtype": ")" + c.code + R"(", "layout": ")" + c.layout +
          R"(", "scale": {"block": )" + shape(c.br, c.bc) + R"(, "tensor": "S"}}, {"name": "S", "shape": )" +
          shape(up(c.rows, c.br), up(c.cols, c.bc)) + R"(, "dtype": "f32"}, {"name": "Z", "shape": )" +
          shape(c.rows, c.cols) + R"(, "dtype": "f32"})";
      const std::string ops = R"({"name": "quantize", "op_type": "CAST", "inputs": ["X"], "outputs": ["Y", "S"]},)"
                              R"( {"name": "dequantize", "op_type": "CAST", "inputs": ["Y"], "outputs": ["Z"]})";
      const std::string path = block_graph(name, tensors, ops, R"("Y", "S", "Z")");
      auto r = test::run_gexec("run --backend cuda --atol 0 --rtol 0 '" + path + "'");
      INFO(r.output);
      CHECK(r.status == 0);
      CHECK(test::has(r.output, "result: pass"));
      CHECK(test::has(r.output, "cuda.f8_cast"));
    }
}

TEST_CASE("the quantizing CAST on the device rounds f8 midpoints to even and saturates as the reference does",
          "[fp8][gpu][block]") {
  // Block 0 has amax 448, so S = 1 and the quotients are the values themselves: the midpoints
  // 17, 19, 9, 4.5, 0.5 + 2^-5 and 464 (past 448) round to even or saturate. Block 1's S is 300 /
  // 448, inexact, so its quotients are near but off midpoints.
  std::string values;
  const double first[] = {448, 17, 19, 9, 4.5, 0.53125, -17, -464, 1e-6, -0.0};
  for (int i = 0; i < 256; ++i) {
    const double v = i < 10 ? first[i] : i < 128 ? (i % 7) * 0.75 : i == 128 ? 300 : 300.0 / 448 * (17 + (i % 11) * 2);
    values.append(i ? ", " : "").append(std::to_string(v));
  }
  const std::string tensors =
      R"({"name": "X", "shape": [1, 256], "dtype": "f32", "init": {"values": [)" + values +
      R"(]}}, {"name": "Y", "shape": [1, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "S"}},)"
      R"( {"name": "S", "shape": [1, 2], "dtype": "f32"})";
  const std::string path = block_graph("f8_quantize_midpoints", tensors,
                                       R"({"op_type": "CAST", "inputs": ["X"], "outputs": ["Y", "S"]})", R"("Y", "S")");
  auto r = test::run_gexec("run --backend cuda --atol 0 --rtol 0 '" + path + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "result: pass"));
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
