// The measured-cost hook of fuse_residual: whether adding a residual through cuBLASLt's C (beta = 1)
// is faster than the plain product followed by a separate ADD, for one product shape and dtype.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "gexec/ir/dtype.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/status.hpp"

namespace gexec {

// Measured times per (M, N, K, dtype), from a file of lines
//   M N K DTYPE FUSED_US UNFUSED_US      (# comments and blank lines are skipped)
// as scripts/bench_blocks.py writes them (--residual-costs).
struct ResidualCost {
  double fused_us = 0, unfused_us = 0;
};
struct ResidualCosts {
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, ResidualCost> by_shape;
};

// bad_input naming the file (and the line) when it cannot be read or a line does not parse.
Result<ResidualCosts> load_residual_costs(const std::string& path);

// Without a measurement (`costs` null, or the shape not in it) fusing is assumed to pay (it saves
// one read and one write of C); where the table lists the shape, its figures decide. *why says
// what was decided from what.
bool residual_fusion_pays(const ResidualCosts* costs, int64_t m, int64_t n, int64_t k, DType d, std::string* why);

}  // namespace gexec
