// Token routing for grouped products (`gexec gemm --groups`): how many of T tokens each of G
// experts receives, as cumulative ends (GROUPED_GEMM's offsets).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

// spec: "uniform" (T / G each, the remainder to the first experts), "zipf:S" (expert g's share
// proportional to 1 / (g + 1)^S, S > 0, rounded by largest remainder so that the counts sum to T),
// or "file:F" (a JSON array of G non-negative counts summing to T). bad_input naming --routing
// otherwise. scripts/bench_moe.py routes the same way.
Result<std::vector<int32_t>> routing_ends(std::string_view spec, int64_t groups, int64_t tokens);

}  // namespace gexec
