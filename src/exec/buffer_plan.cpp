// The buffer planner: a linear sweep over the ops with a best-fit free list of arena ranges.
#include "gexec/exec/buffer_plan.hpp"

#include <map>
#include <set>

namespace gexec {
namespace {

constexpr int64_t kHuge = int64_t(1) << 62;  // beyond any device: sizes saturate here instead of overflowing

int64_t aligned(int64_t bytes) {
  if (bytes >= kHuge) return kHuge;
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

// Ranges of the arena, merged when adjacent; grows the arena when nothing free fits. Free ranges
// are indexed by offset (to merge neighbours) and by size (best fit in log time), so that graphs
// leaving many holes stay linear-logarithmic.
class Arena {
 public:
  int64_t take(int64_t size) {
    auto best = by_size_.lower_bound({size, 0});
    if (best != by_size_.end()) {
      const auto [have, at] = *best;
      erase(at, have);
      if (have > size) insert(at + size, have - size);
      return at;
    }
    // Nothing fits: extend a free range that ends at the top, else grow from the top.
    if (!by_offset_.empty()) {
      auto last = std::prev(by_offset_.end());
      if (last->first + last->second == top_) {
        const int64_t at = last->first;
        erase(at, last->second);
        top_ = at + size;
        return at;
      }
    }
    int64_t at = top_;
    top_ = top_ >= kHuge - size ? kHuge : top_ + size;
    return at;
  }

  void give_back(int64_t at, int64_t size) {
    auto next = by_offset_.lower_bound(at);
    if (next != by_offset_.end() && at + size == next->first) {
      size += next->second;
      erase(next->first, next->second);
    }
    auto prev = by_offset_.lower_bound(at);
    if (prev != by_offset_.begin() && (--prev)->first + prev->second == at) {
      at = prev->first;
      size += prev->second;
      erase(prev->first, prev->second);
    }
    insert(at, size);
  }

  int64_t top() const { return top_; }

 private:
  void insert(int64_t at, int64_t size) {
    by_offset_[at] = size;
    by_size_.insert({size, at});
  }
  void erase(int64_t at, int64_t size) {
    by_offset_.erase(at);
    by_size_.erase({size, at});
  }

  std::map<int64_t, int64_t> by_offset_;          // offset -> size
  std::set<std::pair<int64_t, int64_t>> by_size_;  // (size, offset)
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
