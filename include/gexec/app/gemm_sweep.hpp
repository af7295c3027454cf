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

// One point of a sweep: C = act(alpha * op(A) op(B) + beta * R + bias), batched when batch > 1:
// every product a graph can hold (gemm_replay.hpp writes any graph's product as one).
struct GemmPoint {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DType dtype = DType::f16;      // A
  DType dtype_b = DType::f16;    // B (the same as A's unless --dtype-b)
  DType out_dtype = DType::f16;  // C
  std::optional<DType> bias;     // none: no bias
  Act act = Act::none;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0;
  bool fast_accum = false;       // f8 points only: the product's fast_accum attribute
  bool matmul = false;           // --op matmul: a MATMUL op (no bias, act or residual) instead of GEMM_BIAS_ACT
  bool shared_b = false;         // batched with B rank 2, shared by every batch entry
  Layout layout_a = Layout::rowmajor, layout_b = Layout::rowmajor, layout_c = Layout::rowmajor;
  std::optional<DType> residual;  // R, added times beta inside the activation
  double beta = 1.0;
  bool amax = false;              // an f32 [1] amax output after an f8 C
  Scale scale_a, scale_b, scale_c;  // f8 tensors' scales (default 1)
  // --scale block: A and B block-scaled as the DeepSeek-V3 recipe (A 1x128 along K, B 128x128),
  // their S graph inputs (tensors SA, SB) drawn uniform in [1/128, 1/64].
  bool block_scales = false;
  bool constant_a = false, constant_b = false, constant_bias = true;  // weights: fixed before the runs
  // --groups: a GROUPED_GEMM of `groups` experts over m = T tokens, routed as `routing` says
  // (routing.hpp): X [T, K], W [G, K, N] ([G, N, K] with trans_b), bias [G, N]; 0: a plain product.
  int64_t groups = 0;
  std::string routing;
  std::vector<int32_t> ends;  // the offsets the routing gives
  bool operator==(const GemmPoint&) const = default;
};

// The sweep as typed: each field a value, a comma-separated list, and for the sizes also a range
// start:end:step (end included when the steps land on it).
// Instead of --m --n --k: --shapes MxNxK,... (each shape as given) or --cube SIZES (M = N = K).
struct GemmSweepText {
  std::string m, n, k, batch = "1";
  std::string shapes, cube;
  std::string dtype = "f16";
  std::string out_dtype;  // empty: the input dtype (bf16 for f8 inputs)
  std::string bias = "none";
  std::string act = "none";
  std::string trans = "nn";
  double alpha = 1.0;
  bool fast_accum = false;  // --fast-accum: FP8 fast accumulation on the f8 points
  // One value each (not lists): what a graph's product needs beyond the sweep's usual axes.
  std::string dtype_b;      // B's dtype; empty: --dtype's
  std::string op = "gemm_bias_act";  // or "matmul"
  bool shared_b = false;    // --shared-b: batched A and C, B rank 2
  std::string layout = "rrr";        // A, B, C: r (rowmajor) or c (colmajor, rank 2 only)
  std::string residual = "none";     // none, f16, bf16 or f32
  std::optional<double> beta;        // only with a residual
  bool amax = false;                 // --amax: an amax output (f8 C)
  std::string scale_a, scale_b, scale_c;  // "X", "row:X/Y/..." or "col:X/Y/..."; empty: 1
  std::string scale = "tensor";      // f8 operands: tensor (--scale-a/-b), row (A per row, B per column) or block
  std::string constant = "bias";     // the operands that are weights: none or a list of a, b, bias (default bias)
  // Grouped products: --groups G (a list) with --tokens T (a list, instead of --m) and --routing.
  std::string groups, tokens, routing = "uniform";
  bool operator==(const GemmSweepText&) const = default;
};

// Upper bounds that keep a typo (a range with a step of 1) from becoming a day of work.
constexpr int64_t kMaxSweepPoints = 100000;
constexpr int64_t kMaxDim = int64_t(1) << 31;

// "64", "64,128" or "1024:8192:1024" -> the sizes, in order; bad_input naming `option` and the
// offending part otherwise (zero, negative, not a number, an empty range, a zero step).
Result<std::vector<int64_t>> parse_sizes(std::string_view text, std::string_view option);

// The cartesian product in the order (m, n, k), batch, dtype, bias, act, trans (the last varies
// fastest); bad_input for an unknown dtype, bias, activation or transpose, too many points, or
// shapes given both by --m/--n/--k and by --shapes or --cube (or by neither). f8e4m3 inputs are
// an FP8 product (A and B both f8e4m3, scale 1, C bf16 unless --out-dtype says otherwise);
// f8e5m2 x f8e5m2, an f8 bias, an f8 output from non-f8 inputs and --fast-accum without an f8
// dtype are refused as the graph format refuses them.
Result<std::vector<GemmPoint>> expand_sweep(const GemmSweepText& text);

// The point's graph: A [batch,]M x K (K x M when transposed), B [batch,]K x N (N x K), Bias [N]
// constant, C [batch,]M x N; inputs drawn from the normal distribution; one GEMM_BIAS_ACT op.
Graph gemm_graph(const GemmPoint& p);

// "nn", "nt", "tn" or "tt".
std::string trans_name(const GemmPoint& p);
// A's dtype, or "AxB" when B's differs ("f8e4m3xf8e5m2"): the dtype column.
std::string ab_name(const GemmPoint& p);
// "0.5", "row:0.5/0.25" (one per row), "col:2" (every column 2): the form --scale-a reads.
std::string scale_text(const Scale& s);
Result<Scale> parse_scale(std::string_view text, std::string_view option);
// "none" or the bias dtype.
std::string bias_name(const GemmPoint& p);

}  // namespace gexec
