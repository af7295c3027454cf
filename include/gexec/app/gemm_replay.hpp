// A graph's products as `gexec gemm` command lines that reproduce each alone, and the reading of
// such lines back (`gexec gemm --from FILE`): the replay format of docs/gemm.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/app/gemm_sweep.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

class Executor;

// How one product ran, beside what it computes: the cuBLASLt candidate (--algo), --pad and
// --precision. Unset: the running command's own.
struct ReplayRun {
  std::optional<int> algo;
  std::optional<std::string> pad, precision;
  bool operator==(const ReplayRun&) const = default;
};

// The product of a MATMUL or GEMM_BIAS_ACT as a point (nullopt for any other op, and for block
// scales other than gemm --scale block's, A 1 x 128 along K and B 128 x 128): shapes, dtypes,
// layouts, transposes, epilogue, scales (a per-axis scale of equal values as one value), amax,
// which operands are constant.
std::optional<GemmPoint> gemm_point_of(const Graph& g, const Op& op);

// "gexec gemm --m 64 --n 96 --k 80 --dtype f16 --out-dtype f16 ...": every option that differs
// from gemm's default, and the run's where set. One line, no quoting needed.
std::string gemm_command_line(const GemmPoint& p, const ReplayRun& run = {});

// One command per product of `g` (the graph after the passes), in op order, as (op name, line).
// With `ex` (the prepared kernels), a product whose kernel has several candidates gets the one it
// runs as --algo; `run` gives --pad and --precision where they are not the defaults.
struct ProductCommand {
  std::string op, command;
};
std::vector<ProductCommand> product_commands(const Graph& g, const Executor* ex, const ReplayRun& run);

// One line of a replay file: "gexec gemm OPTIONS" (the program named by any path ending in
// gexec), with only the options that say what the product is (the sweep's) and how it runs
// (--algo, --pad, --precision); a sweep option's list or range is allowed. bad_input naming the
// option otherwise.
struct GemmLine {
  GemmSweepText sweep;
  ReplayRun run;
};
Result<GemmLine> parse_gemm_line(std::string_view line);

// Every point of every line of a replay file, in order, each with its line's ReplayRun and
// "FILE:LINE". Blank lines and '#' comments (whole lines or after the command) are skipped.
// bad_input "FILE:LINE: what is wrong" for the first bad line; a file with no command is refused.
struct GemmJob {
  GemmPoint point;
  ReplayRun run;
  std::string where;
};
Result<std::vector<GemmJob>> read_gemm_file(const std::string& path);

}  // namespace gexec
