// The geometry of a GROUPED_GEMM (graph-format.md): tokens sorted by group, one weight per group.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gexec/ir/graph.hpp"

namespace gexec {

// Y[r, :] = act(alpha * X[r, :] * W[g] + bias[g, :]) for the rows r that group g owns:
// offsets[g-1] <= r < offsets[g] (offsets[-1] = 0); rows at or past offsets[G-1] are 0.
// X [T, K], W [G, K, N] (or [G, N, K] with trans_b), offsets i32 [G], bias [G, N], Y [T, N];
// all rowmajor.
struct GroupedShape {
  int64_t tokens = 0, k = 0, n = 0, groups = 0;
  bool trans_b = false, has_bias = false;
  double alpha = 1.0;
  Act act = Act::none;
};

// Reads the geometry of a GROUPED_GEMM; nullopt (and *why) when its tensors do not agree.
std::optional<GroupedShape> grouped_shape(const Graph& g, const Op& op, std::string* why = nullptr);

// The first problem with the offsets (data, known only in a run), or empty: they must not
// decrease, must not be negative and must not exceed T. The caller names the op.
std::string offsets_problem(const int32_t* offsets, int64_t groups, int64_t tokens);

// Element (g, k, j) of W's logical [G, K, N] matrix in storage order.
inline int64_t grouped_w_index(const GroupedShape& s, int64_t g, int64_t k, int64_t j) {
  return s.trans_b ? (g * s.n + j) * s.k + k : (g * s.k + k) * s.n + j;
}

}  // namespace gexec
