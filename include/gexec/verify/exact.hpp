// --verify exact: inputs of small integers for which every product, sum and stored result of
// the graph is exact, so that a correct kernel matches the reference bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// The largest R (at most kExactMaxRange) such that inputs drawn from the integers -R..R keep
// every value of the graph exact: each tensor's values are multiples of a power of two q, and
// at most 2^p q in magnitude for its dtype's p-bit significand (f16 11, bf16 8, f32 24; f32
// operands of a product 11, for TF32); each product's partial sums at most 2^24 q (the f32
// accumulator), bounded by K max|a| max|b|. bad_input with the reason where no R >= 1 fits
// (K too large for the dtype, a GELU, an alpha that is not a power of two, an f8 tensor).
constexpr int64_t kExactMaxRange = 16;
Result<int64_t> exact_range(const Graph& g);

// The stored bytes of every graph input: integers uniform in -range..range, from the seed.
std::map<std::string, std::vector<uint8_t>> exact_inputs(const Graph& g, int64_t range, uint64_t seed);

}  // namespace gexec
