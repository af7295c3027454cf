// The kernels generated for FUSED_ELEMENTWISE groups (src/backends/cuda/fused_source.hpp): every
// step type, in every dtype, from full tensors and bias vectors, gives source that NVRTC
// compiles for the H200 (sm_90) and for the oldest architecture gexec's CUDA backend runs FP8 on
// (sm_89) — without a device, so that CI compiles what the GPU would. Whether the compiled
// kernels compute the right values is the GPU tests' part (tests/gpu, the backend-ops cases).
#include <string>
#include <vector>

#include "catch.hpp"
#include "unit/skip.hpp"

#ifdef GEXEC_HAVE_CUDA
#include "../../src/backends/cuda/fused_source.hpp"
#include "../../src/backends/cuda/nvrtc_kernel.hpp"

using namespace gexec;
using namespace gexec::cuda;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("fused source: every step type and dtype compiles with NVRTC", "[blocks][nvrtc]") {
  for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
    INFO("dtype " << dtype_name(dt));
    // Values: 0 x, 1 y, 2 bias (a vector); then one step of each type.
    Attrs a;
    a.steps = {{OpType::ADD, {0, 1}, dt},          {OpType::MUL, {3, 0}, dt},  {OpType::BIAS_ADD, {4, 2}, dt},
               {OpType::RELU, {5}, dt},            {OpType::GELU, {6}, dt},    {OpType::SILU, {7}, dt},
               {OpType::CAST, {8}, DType::f32},    {OpType::GELU, {9}, DType::f32, GeluApprox::none},
               {OpType::GELU, {6}, dt, GeluApprox::none}};
    a.results = {10, 8, 11};
    const std::vector<FusedOperand> in = {{dt, false}, {DType::f32, false}, {DType::bf16, true}};
    const std::string src = fused_source(a, in, {DType::f32, dt, dt});
    CHECK(has(src, kFusedEntry));
    // 16-bit steps take the fast intrinsics, f32 steps the full-precision functions; 16-bit
    // steps round their elements in pairs (one packed conversion), f32 steps not at all.
    const bool narrow = dt != DType::f32;
    CHECK(has(src, std::string("v8[j] = ") + (narrow ? "silu_fast(v7[j]);" : "silu(v7[j]);")));
    CHECK(has(src, std::string("v7[j] = ") + (narrow ? "gelu_tanh_fast(v6[j]);" : "gelu_tanh(v6[j]);")));
    CHECK(has(src, "v10[j] = gelu_erf(v9[j]); v10[j + 1] = gelu_erf(v9[j + 1]);\n"));
    CHECK(has(src, std::string("v11[j] = ") + (narrow ? "gelu_erf_fast(v6[j]);" : "gelu_erf(v6[j]);")));
    CHECK(has(src, "v5[j] = v4[j] + v2[j]; v5[j + 1] = v4[j + 1] + v2[j + 1];"));
    CHECK(has(src, "r2_" + std::string(dtype_name(dt)) + "(v8[j], v8[j + 1]);") == narrow);
    CHECK_FALSE(has(src, "r2_f32"));
    for (int sm : {90, 89}) {
      auto cubin = nvrtc_compile(src, sm / 10, sm % 10);
      INFO("sm_" << sm << ": " << (cubin ? std::string() : cubin.error().message) << "\n" << src);
      REQUIRE(cubin);
      CHECK(cubin->size() > 1000);
    }
  }
}

TEST_CASE("fused source: an NVRTC failure is an error that carries the compiler's log", "[blocks][nvrtc]") {
  auto bad = nvrtc_compile("extern \"C\" __global__ void k() { undeclared_name(); }", 9, 0);
  REQUIRE_FALSE(bad);
  CHECK(has(bad.error().message, "undeclared_name"));
}
#else
GEXEC_SKIPPED_TEST("fused source: every step type and dtype compiles with NVRTC", "[blocks][nvrtc]",
                   "this build has no CUDA backend (no nvcc found, or configured with -DGEXEC_CUDA=OFF)")
#endif
