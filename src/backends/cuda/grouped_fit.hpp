// Which shapes the grouped GEMM's WGMMA kernel (grouped_gemm_sm90.cu) takes, as one rule that the
// GROUPED_GEMM kernels' declaration (grouped_caps.cpp) and the one-group GEMM's
// (one_group_caps.cpp) read; the plan (grouped_gemm.cu) takes its constants, and the kernel's own
// check (grouped_sm90_unfit) must take the same shapes: tests/unit/test_grouped_gemm.cpp compares
// the plan with this rule over a sweep of shapes. Pure C++ (no CUDA headers): the kernel table is
// compiled into the core.
#pragma once

#include <cstdint>
#include <string>

#include "gexec/ir/dtype.hpp"

namespace gexec::cuda {

// Its tiles are 128 rows: groups of fewer rows than this on average waste most of them, and the
// mma.sync kernel's shorter tiles run them faster (f8 operands excepted: WGMMA is their only kernel).
constexpr int64_t kWgmmaMinAvgRows = 64;
constexpr int kWgmmaBytesK = 128;  // a k step: one 128-byte swizzle row (64 16-bit values, 128 f8)
constexpr int64_t kWgmmaBlockN = 128;  // N is tiled by 128 (or 256 where N allows)

// K's values in a k step of operands of type `in`.
inline int64_t wgmma_step_k(DType in) { return kWgmmaBytesK / int64_t(dtype_size(in)); }

// A Hopper (cc 9.0), W [G,N,K] (trans_b: TMA reads W's rows along K), K a whole number of k steps,
// N a whole number of 128-column tiles. The kernel's own check (grouped_sm90_unfit) adds the
// int32 limits of TMA's coordinates.
inline bool grouped_wgmma_fits(int cc, bool trans_b, int64_t k, int64_t n, DType in) {
  return cc == 90 && trans_b && k > 0 && k % wgmma_step_k(in) == 0 && n > 0 && n % kWgmmaBlockN == 0;
}

// The rule in words for a product of one group (M rows), as the verdicts print it, written from
// the constants above so that the text cannot drift from the rule.
inline std::string one_group_wgmma_rule_text(DType in) {
  return "sm_90, M >= " + std::to_string(kWgmmaMinAvgRows) + ", K % " + std::to_string(wgmma_step_k(in)) +
         " == 0, N % " + std::to_string(kWgmmaBlockN) + " == 0";
}

}  // namespace gexec::cuda
