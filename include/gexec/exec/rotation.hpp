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
// The largest L2 cache of the devices in view (H200: 50 MB, design.md). A timing is called cold
// only where the bytes it rotates over (or its one set) exceed it.
constexpr int64_t kL2Bytes = int64_t(50) << 20;
// At most this many sets: tiny problems (bound by launch latency, not memory) would otherwise
// need thousands of launches an iteration.
constexpr int64_t kMaxRotatingSets = 256;

// How kernel k of `ex` rotates over at least `total_bytes` (at most kMaxRotatingSets sets): the
// bytes of one set (each operand aligned as in the arena) and the sets beyond the kernel's own
// (0 when a single one already fills `total_bytes`).
struct RotationShape {
  int64_t set_bytes = 0;
  int64_t extra = 0;
  int64_t pool_bytes() const { return extra * set_bytes; }
};
RotationShape rotation_shape(const Executor& ex, size_t k, int64_t total_bytes);

// The sets of `shape`: the kernel's own binding first, then `shape.extra` carved from `pool`
// (at least shape.pool_bytes()) and filled from the inputs' distributions.
Result<std::vector<Binding>> carve_rotating_sets(Executor& ex, size_t k, const RotationShape& shape, char* pool);

// The sets kernel k of `ex` rotates over, at least `total_bytes` together: rotation_shape's
// sets, carved from one new arena of the device. An error when the device has no memory for them.
Result<std::vector<Binding>> rotating_sets(Executor& ex, size_t k, int64_t total_bytes);

}  // namespace gexec
