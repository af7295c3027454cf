// The buffer plan: one arena, an offset per tensor, intermediates' space reused once dead.
#pragma once

#include <cstdint>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/kernels/kernel_def.hpp"

namespace gexec {

struct BufferPlan {
  std::vector<int64_t> offset;  // per tensor; -1 for a tensor no op reads or writes
  int64_t arena_bytes = 0;      // the peak: the arena's size
  int64_t total_bytes = 0;      // what one buffer per tensor would need, for comparison
  // Whether the arena fits in 2^63 - 1 bytes. When it does not, arena_bytes, total_bytes and
  // the offsets beyond that are clamped to it (no device has that much memory anyway).
  bool fits = true;
};

// Graph inputs, hoisted results and outputs live for the whole run; an intermediate lives from
// the op that writes it to its last reader, and never shares bytes with a tensor live at the
// same time (an op's output never aliases its inputs).
BufferPlan plan_buffers(const Graph& g);

}  // namespace gexec
