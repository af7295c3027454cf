// The decode-shape switches end to end, without a GPU: the dry-run's choice between the skinny
// GEMM and cuBLASLt with the cost model's figures, --kernel and --algo-space checked as usage,
// and `gexec run --cold-l2` rotating operand sets (on the CPU backend) and saying so.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "process.hpp"

using gexec::test::has;
using gexec::test::run_gexec;

namespace {

// One f16 GEMM + bias of M x N x K, the weight [K,N] (or [N,K] with trans_b), written to a temp file.
std::string decode_graph(int m, int n, int k, bool trans_b = false) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("gexec_decode_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                     (trans_b ? "t" : "") + "_" + std::to_string(getpid()) + ".json");
  const std::string b = trans_b ? "[" + std::to_string(n) + ", " + std::to_string(k) + "]"
                                : "[" + std::to_string(k) + ", " + std::to_string(n) + "]";
  std::ofstream(path) << R"({"format": "gexec.graph", "version": 1, "name": "decode", "tensors": [
    {"name": "A", "shape": [)" << m << ", " << k << R"(], "dtype": "f16"},
    {"name": "W", "shape": )" << b << R"(, "dtype": "f16"},
    {"name": "bias", "shape": [)" << n << R"(], "dtype": "f16"},
    {"name": "C", "shape": [)" << m << ", " << n << R"(], "dtype": "f16"}],
  "ops": [{"name": "proj", "op_type": "GEMM_BIAS_ACT", "inputs": ["A", "W", "bias"], "outputs": ["C"],
           "attrs": {"act": "none", "trans_b": )" << (trans_b ? "true" : "false") << R"(}}],
  "outputs": ["C"]})";
  return path.string();
}

// The dry-run of that graph for an H200 (sm_90), with `extra` options.
auto dry_run_sm90(int m, int n, int k, bool trans_b, const std::string& extra = "") {
  return run_gexec("run " + decode_graph(m, n, k, trans_b) + " --dry-run --arch sm_90" + extra);
}

}  // namespace

TEST_CASE("dry-run: the skinny GEMM or cuBLASLt for a decode shape as the model says, either forced, with figures",
          "[cli][skinny]") {
  // The model with its measured rates (skinny_cost.hpp): the skinny kernel at 1 x 4096 x 4096 (it
  // measured 1.13x faster on the H200, 1.15x on an H100), cuBLASLt at 32 rows (the WGMMA path
  // measured 1.01x cuBLASLt's time on an H100: within the model's margin).
  const auto one = dry_run_sm90(1, 4096, 4096, true);
  INFO(one.output);
  CHECK(one.status == 0);
  CHECK(has(one.output, "proj (GEMM_BIAS_ACT) -> cuda.skinny_gemm_bias_act"));
  CHECK(has(one.output, "cost model: skinny"));
  CHECK(has(one.output, "tensor cores (mma m16n8k16, f32 accumulation)"));  // [N,K]: the MMA path
  CHECK(has(one.output, "warps' sums in warp order"));

  const auto thirty_two = dry_run_sm90(32, 4096, 4096, true);
  INFO(thirty_two.output);
  CHECK(thirty_two.status == 0);
  CHECK(has(thirty_two.output, "-> cublaslt.gemm_bias_act"));
  CHECK(has(thirty_two.output, "rejected cuda.skinny_gemm_bias_act: cost model: skinny"));
  CHECK(has(thirty_two.output, "cuBLASLt is expected to be as fast or faster"));

  // Forced, the dry-run says how it would run: CTAs, splits and the summation order.
  const auto forced = dry_run_sm90(16, 4096, 4096, true, " --kernel proj=cuda.skinny_gemm_bias_act");
  INFO(forced.output);
  CHECK(forced.status == 0);
  CHECK(has(forced.output, "proj (GEMM_BIAS_ACT) -> cuda.skinny_gemm_bias_act"));
  CHECK(has(forced.output, "forced by --kernel; cost model: skinny"));
  const auto lt = dry_run_sm90(1, 4096, 4096, true, " --kernel proj=cublaslt.gemm_bias_act");
  INFO(lt.output);
  CHECK(lt.status == 0);
  CHECK(has(lt.output, "-> cublaslt.gemm_bias_act"));

  const auto big = dry_run_sm90(128, 4096, 4096, false);
  INFO(big.output);
  CHECK(big.status == 0);
  CHECK(has(big.output, "-> cublaslt.gemm_bias_act"));
  CHECK(has(big.output, "rejected cuda.skinny_gemm_bias_act: cost model"));

  const auto odd = dry_run_sm90(1, 4100, 4096, false);
  INFO(odd.output);
  CHECK(has(odd.output, "rejected cuda.skinny_gemm_bias_act: the weight's rows (N = 4100)"));
}

TEST_CASE("--kernel forces a kernel in the dry-run; bad names and --algo-space values are usage errors",
          "[cli][skinny]") {
  const std::string g = decode_graph(128, 4096, 4096);
  const auto forced = run_gexec("run " + g + " --dry-run --kernel proj=cuda.skinny_gemm_bias_act");
  INFO(forced.output);
  CHECK(forced.status == 0);
  CHECK(has(forced.output, "-> cuda.skinny_gemm_bias_act"));
  CHECK(has(forced.output, "forced by --kernel"));
  CHECK(has(forced.output, "rejected cublaslt.gemm_bias_act: not the kernel forced by --kernel"));

  const auto bad = run_gexec("run " + g + " --dry-run --kernel proj=no.such_kernel");
  CHECK(bad.status == 2);
  CHECK(has(bad.output, "--kernel: no kernel \"no.such_kernel\""));
  CHECK(run_gexec("run " + g + " --dry-run --algo-space most").status == 2);
  // --algo-space all may give 1024 configurations after the heuristic's: --autotune-top reaches them.
  CHECK(run_gexec("run " + g + " --dry-run --autotune --algo-space all --autotune-top 2048").status == 0);
  CHECK(run_gexec("run " + g + " --dry-run --autotune-top 2049").status == 2);
  CHECK(run_gexec("gemm --m 4 --n 64 --k 64 --backend cpu --kernel no.such_kernel").status == 2);

  // What names no op is refused, not ignored: an op the graph lacks (a typo, or fused away by the
  // passes), one op forced to two kernels, and a kernel for every op that no op of the run takes.
  const auto typo = run_gexec("run " + g + " --dry-run --kernel prj=cuda.skinny_gemm_bias_act");
  CHECK(typo.status == 2);
  CHECK(has(typo.output, "--kernel prj=cuda.skinny_gemm_bias_act: the graph has no op prj after the passes (its ops: proj"));
  const auto twice =
      run_gexec("run " + g + " --dry-run --kernel proj=cuda.skinny_gemm_bias_act --kernel proj=cublaslt.gemm_bias_act");
  CHECK(twice.status == 2);
  CHECK(has(twice.output, "op proj is forced twice, to cuda.skinny_gemm_bias_act and to cublaslt.gemm_bias_act"));
  const auto elsewhere = run_gexec("run " + g + " --backend cpu --iters 1 --kernel cuda.skinny_gemm_bias_act");
  CHECK(elsewhere.status == 2);
  CHECK(has(elsewhere.output, "it runs GEMM_BIAS_ACT on the cuda backend, and no op of this cpu run is one"));
  // A kernel of another op type forced on an op by name: no kernel, and the reason is the real one.
  const auto other_type = run_gexec("run " + g + " --dry-run --kernel proj=cuda.skinny_matmul");
  CHECK(other_type.status == 3);
  CHECK(has(other_type.output, "cuda.skinny_matmul: forced by --kernel, but it runs MATMUL, not GEMM_BIAS_ACT"));

  // A forced kernel that refuses the op: no kernel for it, with the reason.
  const auto refused = run_gexec("run " + decode_graph(1, 4100, 4096) + " --dry-run --kernel cuda.skinny_gemm_bias_act");
  INFO(refused.output);
  CHECK(refused.status == 3);
  CHECK(has(refused.output, "multiple of 8"));
}

// The CPU's GEMM cannot be rebound to other buffers, so the CPU backend says it timed warm and why;
// on CUDA the same run prints "cold L2: each iteration rotates over N operand sets" (gpu_check.sh decode).
TEST_CASE("run --cold-l2 asks for rotating operand sets and says what it did", "[cli][cpu][skinny]") {
  const auto r = run_gexec("run " + decode_graph(4, 64, 64) + " --backend cpu --iters 3 --warmup 1 --cold-l2");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "cannot be rebound to other buffers: timed warm"));
  const auto warm = run_gexec("run " + decode_graph(4, 64, 64) + " --backend cpu --iters 3 --warmup 1");
  CHECK_FALSE(has(warm.output, "timed warm"));
  // A rotation that fits in the L2 (one set of a few KiB here) is not called cold: it said "cold
  // L2: one operand set exceeds the rotating size" for any set above the size asked for. And a
  // size too small to hold a byte still asks for rotation, so it says the same.
  for (const char* size : {"0.001", "1e-9"}) {
    const auto small = run_gexec("run " + decode_graph(4, 64, 64) + " --backend cpu --iters 3 --warmup 1 --rotating " + size);
    INFO(small.output);
    CHECK(small.status == 0);
    CHECK(has(small.output, "fit in an L2 of 50 MiB: timed warm"));
    CHECK(has(small.output, "\"l2\":\"warm\""));
    CHECK_FALSE(has(small.output, "cold L2"));
  }
}
