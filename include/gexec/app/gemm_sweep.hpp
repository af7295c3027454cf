// `gexec gemm`: the sweep's points from the command line's lists and ranges, and the one-op
// GEMM + epilogue graph each point runs (built in memory, never written to a file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// One point of a sweep: C = act(alpha * op(A) op(B) + bias), batched when batch > 1.
struct GemmPoint {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DType dtype = DType::f16;      // A and B
  DType out_dtype = DType::f16;  // C
  std::optional<DType> bias;     // none: no bias
  Act act = Act::none;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0;
};

// The sweep as typed: each field a value, a comma-separated list, and for the sizes also a range
// start:end:step (end included when the steps land on it).
// Instead of --m --n --k: --shapes MxNxK,... (each shape as given) or --cube SIZES (M = N = K).
struct GemmSweepText {
  std::string m, n, k, batch = "1";
  std::string shapes, cube;
  std::string dtype = "f16";
  std::string out_dtype;  // empty: the input dtype
  std::string bias = "none";
  std::string act = "none";
  std::string trans = "nn";
  double alpha = 1.0;
};

// Upper bounds that keep a typo (a range with a step of 1) from becoming a day of work.
constexpr int64_t kMaxSweepPoints = 100000;
constexpr int64_t kMaxDim = int64_t(1) << 31;

// "64", "64,128" or "1024:8192:1024" -> the sizes, in order; bad_input naming `option` and the
// offending part otherwise (zero, negative, not a number, an empty range, a zero step).
Result<std::vector<int64_t>> parse_sizes(std::string_view text, std::string_view option);

// The cartesian product in the order (m, n, k), batch, dtype, bias, act, trans (the last varies
// fastest); bad_input for an unknown dtype, bias, activation or transpose, too many points, or
// shapes given both by --m/--n/--k and by --shapes or --cube (or by neither).
Result<std::vector<GemmPoint>> expand_sweep(const GemmSweepText& text);

// The point's graph: A [batch,]M x K (K x M when transposed), B [batch,]K x N (N x K), Bias [N]
// constant, C [batch,]M x N; inputs drawn from the normal distribution; one GEMM_BIAS_ACT op.
Graph gemm_graph(const GemmPoint& p);

// "nn", "nt", "tn" or "tt".
std::string trans_name(const GemmPoint& p);
// "none" or the bias dtype.
std::string bias_name(const GemmPoint& p);

}  // namespace gexec
