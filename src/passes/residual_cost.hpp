// The measured-cost hook of fuse_residual: whether adding a residual through cuBLASLt's C (beta = 1)
// is faster than the plain product followed by a separate ADD, for one product shape and dtype.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "gexec/ir/dtype.hpp"
#include "gexec/status.hpp"

namespace gexec {

// Measured times per (M, N, K, dtype), from a file of lines
//   M N K DTYPE FUSED_US UNFUSED_US      (# comments and blank lines are skipped)
// as scripts/bench_blocks.py writes them (--residual-costs).
struct ResidualCost {
  double fused_us = 0, unfused_us = 0;
};
using ResidualCosts = std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, ResidualCost>;

// bad_input naming the file (and the line) when it cannot be read or a line does not parse.
Result<ResidualCosts> load_residual_costs(const std::string& path);

// Makes `costs` the table residual_fusion_pays() consults on this thread while the guard lives
// (the pass manager holds one around its passes); null: no table.
class UseResidualCosts {
 public:
  explicit UseResidualCosts(const ResidualCosts* costs);
  ~UseResidualCosts();
  UseResidualCosts(const UseResidualCosts&) = delete;
  UseResidualCosts& operator=(const UseResidualCosts&) = delete;

 private:
  const ResidualCosts* previous_;
};

// Without a measurement fusing is assumed to pay (it saves one read and one write of C); where
// the table lists the shape, its figures decide. *why says what was decided from what.
bool residual_fusion_pays(int64_t m, int64_t n, int64_t k, DType d, std::string* why);

}  // namespace gexec
