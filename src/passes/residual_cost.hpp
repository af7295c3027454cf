// The measured-cost hook of fuse_residual: whether adding a residual through cuBLASLt's C (beta = 1)
// is faster than the plain product followed by a separate ADD, for one product shape and dtype.
#pragma once

#include <cstdint>
#include <string>

#include "gexec/ir/dtype.hpp"

namespace gexec {

// Without measurements fusing is assumed to pay (it saves one read and one write of C). Where the
// file named by $GEXEC_RESIDUAL_COSTS lists the shape, its figures decide. Lines:
//   M N K DTYPE FUSED_US UNFUSED_US      (# comments and blank lines are skipped)
// as scripts/bench_blocks.py writes them (--residual-costs). *why says what was decided from what.
bool residual_fusion_pays(int64_t m, int64_t n, int64_t k, DType d, std::string* why);

}  // namespace gexec
