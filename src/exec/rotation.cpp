// Rotating operand sets: one arena carved into copies of a kernel's operands.
#include "gexec/exec/rotation.hpp"

#include <algorithm>

namespace gexec {
namespace {
constexpr int64_t kAlign = 256;  // every operand of a set starts on this, as in the arena
}  // namespace

Result<std::vector<Binding>> rotating_sets(Executor& ex, size_t k, int64_t total_bytes) {
  const Op& op = ex.op_of_kernel(k);
  const Graph& g = ex.graph();
  const auto span = [&](TensorId t) { return (g.tensor(t).bytes() + kAlign - 1) / kAlign * kAlign; };
  int64_t set_bytes = 0;
  for (TensorId t : op.inputs) set_bytes += span(t);
  for (TensorId t : op.outputs) set_bytes += span(t);
  std::vector<Binding> sets = {ex.binding_of_kernel(k)};
  const int64_t wanted = (total_bytes + set_bytes - 1) / std::max<int64_t>(set_bytes, 1);
  const int64_t extra = std::min(kMaxRotatingSets, wanted) - 1;
  if (extra <= 0) return sets;
  auto pool = ex.device().allocate_arena(extra * set_bytes);
  if (!pool) return pool.error().with("rotating operand sets (" + std::to_string(extra) + " of " +
                                      std::to_string(set_bytes) + " bytes)");
  char* next = static_cast<char*>(*pool);
  for (int64_t s = 0; s < extra; ++s) {
    Binding b;
    for (TensorId t : op.inputs) {
      // Other values than the run's, from the same distribution: a constant input as well.
      GEXEC_TRY(ex.device().fill_input(g.tensor(t), next, uint64_t(0x726f74 + s * 131 + t)));
      b.inputs.push_back(next);
      next += span(t);
    }
    for (TensorId t : op.outputs) {
      b.outputs.push_back(next);
      next += span(t);
    }
    sets.push_back(std::move(b));
  }
  return sets;
}

}  // namespace gexec
