// Rotating operand sets for cold-L2 timing: copies of one kernel's operands, drawn like the
// graph's inputs, that together exceed the L2 cache, so that each launch reads from memory.
#pragma once

#include <cstdint>
#include <vector>

#include "gexec/exec/executor.hpp"

namespace gexec {

// Twice the largest L2 cache of the devices in view (H200: 60 MB): a set has left the cache
// before its next turn.
constexpr int64_t kDefaultRotateBytes = int64_t(128) << 20;
// At most this many sets: tiny problems (bound by launch latency, not memory) would otherwise
// need thousands of launches an iteration.
constexpr int64_t kMaxRotatingSets = 256;

// The sets kernel k of `ex` rotates over, at least `total_bytes` together (at most
// kMaxRotatingSets): the first is the kernel's own binding, the others are carved from one new
// arena of the device and filled from the inputs' distributions. One set when a single one
// already fills `total_bytes`. An error when the device has no memory for them.
Result<std::vector<Binding>> rotating_sets(Executor& ex, size_t k, int64_t total_bytes);

}  // namespace gexec
