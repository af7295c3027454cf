// Rotating operand sets: one arena carved into copies of a kernel's operands.
#include "gexec/exec/rotation.hpp"

#include <algorithm>

#include "gexec/ir/block_scale.hpp"

namespace gexec {
namespace {
constexpr int64_t kAlign = 256;  // every operand of a set starts on this, as in the arena

int64_t span(const Graph& g, TensorId t) { return (g.tensor(t).bytes() + kAlign - 1) / kAlign * kAlign; }
}  // namespace

RotationShape rotation_shape(const Executor& ex, size_t k, int64_t total_bytes) {
  const Op& op = ex.op_of_kernel(k);
  const Graph& g = ex.graph();
  RotationShape s;
  for (TensorId t : op.inputs) s.set_bytes += span(g, t);
  for (TensorId t : op.outputs) s.set_bytes += span(g, t);
  const int64_t wanted = (total_bytes + s.set_bytes - 1) / std::max<int64_t>(s.set_bytes, 1);
  s.extra = std::max<int64_t>(0, std::min(kMaxRotatingSets, wanted) - 1);
  return s;
}

Result<std::vector<Binding>> carve_rotating_sets(Executor& ex, size_t k, const RotationShape& shape, char* pool) {
  const Op& op = ex.op_of_kernel(k);
  const Graph& g = ex.graph();
  std::vector<Binding> sets = {ex.binding_of_kernel(k)};
  char* next = pool;
  for (int64_t s = 0; s < shape.extra; ++s) {
    Binding b;
    b.scales = sets[0].scales;  // block scales' S shared with the run's (the operands stored with them)
    for (TensorId t : op.inputs) {
      // Other values than the run's, from the same distribution: a constant input as well.
      Tensor drawn = g.tensor(t);
      if (drawn.scale.is_block()) {
        auto scale = ex.read(drawn.scale.tensor);
        if (!scale) return scale.error();
        drawn = with_block_values(drawn, reinterpret_cast<const float*>(scale->data()));
      }
      GEXEC_TRY(ex.device().fill_input(drawn, next, uint64_t(0x726f74 + s * 131 + t)));
      b.inputs.push_back(next);
      next += span(g, t);
    }
    for (TensorId t : op.outputs) {
      b.outputs.push_back(next);
      next += span(g, t);
    }
    sets.push_back(std::move(b));
  }
  return sets;
}

Result<std::vector<Binding>> rotating_sets(Executor& ex, size_t k, int64_t total_bytes) {
  const RotationShape shape = rotation_shape(ex, k, total_bytes);
  if (shape.extra == 0) return std::vector<Binding>{ex.binding_of_kernel(k)};
  auto pool = ex.device().allocate_arena(shape.pool_bytes());
  if (!pool) return pool.error().with("rotating operand sets (" + std::to_string(shape.extra) + " of " +
                                      std::to_string(shape.set_bytes) + " bytes)");
  return carve_rotating_sets(ex, k, shape, static_cast<char*>(*pool));
}

}  // namespace gexec
