// The buffer planner: a linear sweep over the ops with a best-fit free list of arena ranges.
#include "gexec/exec/buffer_plan.hpp"

#include <map>

namespace gexec {
namespace {

constexpr int64_t kHuge = int64_t(1) << 62;  // beyond any device: sizes saturate here instead of overflowing

int64_t aligned(int64_t bytes) {
  if (bytes >= kHuge) return kHuge;
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

// Ranges of the arena, merged when adjacent; grows the arena when nothing free fits.
class Arena {
 public:
  int64_t take(int64_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    if (best != free_.end()) {
      int64_t at = best->first, left = best->second - size;
      free_.erase(best);
      if (left) free_[at + size] = left;
      return at;
    }
    // Nothing fits: extend a free range that ends at the top, else grow from the top.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        int64_t at = last->first;
        free_.erase(last);
        top_ = at + size;
        return at;
      }
    }
    int64_t at = top_;
    top_ = top_ >= kHuge - size ? kHuge : top_ + size;
    return at;
  }

  void give_back(int64_t at, int64_t size) {
    auto it = free_.emplace(at, size).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  int64_t top() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> size
  int64_t top_ = 0;
};

}  // namespace

BufferPlan plan_buffers(const Graph& g) {
  const GraphIndex idx(g);
  const size_t n = g.tensors.size();
  BufferPlan plan;
  plan.offset.assign(n, -1);

  // An intermediate dies after its last reader; everything else lives for the whole run.
  std::vector<bool> whole_run(n, false);
  std::vector<int64_t> last_use(n, -1);
  for (size_t t = 0; t < n; ++t) {
    const OpId producer = idx.producer[t];
    const bool used = producer != kNone || !idx.consumers[t].empty() || idx.is_output[t];
    if (!used) continue;
    whole_run[t] = producer == kNone || idx.is_output[t] || g.ops[size_t(producer)].hoisted;
    last_use[t] = idx.consumers[t].empty() ? producer : idx.consumers[t].back();
  }

  Arena arena;
  for (size_t t = 0; t < n; ++t) {
    if (!whole_run[t]) continue;
    plan.offset[t] = arena.take(aligned(g.tensors[t].bytes()));
  }
  std::vector<std::vector<TensorId>> dies_after(g.ops.size());
  for (size_t t = 0; t < n; ++t)
    if (!whole_run[t] && idx.producer[t] != kNone) dies_after[size_t(last_use[t])].push_back(TensorId(t));
  for (size_t i = 0; i < g.ops.size(); ++i) {
    // Outputs are placed before this op's dead inputs are released, so they never alias.
    for (TensorId t : g.ops[i].outputs)
      if (!whole_run[size_t(t)]) plan.offset[size_t(t)] = arena.take(aligned(g.tensor(t).bytes()));
    for (TensorId t : dies_after[i]) arena.give_back(plan.offset[size_t(t)], aligned(g.tensor(t).bytes()));
  }
  for (size_t t = 0; t < n; ++t)
    if (plan.offset[t] >= 0) {
      const int64_t a = aligned(g.tensors[t].bytes());
      plan.total_bytes = plan.total_bytes >= kHuge - a ? kHuge : plan.total_bytes + a;
    }
  plan.arena_bytes = arena.top();
  return plan;
}

}  // namespace gexec
