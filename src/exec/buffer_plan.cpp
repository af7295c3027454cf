// The buffer planner: a linear sweep over the ops with a best-fit free list of arena ranges.
#include "gexec/exec/buffer_plan.hpp"

#include <limits>
#include <map>
#include <set>

namespace gexec {
namespace {

// Offsets are summed in 128 bits: tensors of up to 2^63 - 1 bytes each cannot overflow them,
// so a graph too large for any machine still gets exact (distinct) figures.
__extension__ typedef __int128 Wide;
constexpr Wide kMax64 = std::numeric_limits<int64_t>::max();

Wide aligned(int64_t bytes) { return (Wide(bytes) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

int64_t clamp64(Wide v) { return v > kMax64 ? std::numeric_limits<int64_t>::max() : int64_t(v); }

// Ranges of the arena, merged when adjacent; grows the arena when nothing free fits. Free ranges
// are indexed by offset (to merge neighbours) and by size (best fit in log time), so that graphs
// leaving many holes stay linear-logarithmic.
class Arena {
 public:
  Wide take(Wide size) {
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
        const Wide at = last->first;
        erase(at, last->second);
        top_ = at + size;
        return at;
      }
    }
    const Wide at = top_;
    top_ += size;
    return at;
  }

  void give_back(Wide at, Wide size) {
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

  Wide top() const { return top_; }

 private:
  void insert(Wide at, Wide size) {
    by_offset_[at] = size;
    by_size_.insert({size, at});
  }
  void erase(Wide at, Wide size) {
    by_offset_.erase(at);
    by_size_.erase({size, at});
  }

  std::map<Wide, Wide> by_offset_;          // offset -> size
  std::set<std::pair<Wide, Wide>> by_size_;  // (size, offset)
  Wide top_ = 0;
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
  // A collective may run on a communication stream beside the ops after it (docs/distributed.md):
  // its operands share their bytes with no other tensor, so that no later op writes over them
  // while it still reads or writes them.
  for (const Op& op : g.ops)
    if (is_collective(op.type)) {
      for (TensorId t : op.inputs) whole_run[size_t(t)] = true;
      for (TensorId t : op.outputs) whole_run[size_t(t)] = true;
    }

  Arena arena;
  std::vector<Wide> at(n, -1);
  for (size_t t = 0; t < n; ++t) {
    if (!whole_run[t]) continue;
    at[t] = arena.take(aligned(g.tensors[t].bytes()));
  }
  std::vector<std::vector<TensorId>> dies_after(g.ops.size());
  for (size_t t = 0; t < n; ++t)
    if (!whole_run[t] && idx.producer[t] != kNone) dies_after[size_t(last_use[t])].push_back(TensorId(t));
  for (size_t i = 0; i < g.ops.size(); ++i) {
    // Outputs are placed before this op's dead inputs are released, so they never alias.
    for (TensorId t : g.ops[i].outputs)
      if (!whole_run[size_t(t)]) at[size_t(t)] = arena.take(aligned(g.tensor(t).bytes()));
    for (TensorId t : dies_after[i]) arena.give_back(at[size_t(t)], aligned(g.tensor(t).bytes()));
  }
  Wide total = 0;
  for (size_t t = 0; t < n; ++t)
    if (at[t] >= 0) {
      total += aligned(g.tensors[t].bytes());
      plan.offset[t] = clamp64(at[t]);
    }
  plan.fits = arena.top() <= kMax64;
  plan.arena_bytes = clamp64(arena.top());
  plan.total_bytes = clamp64(total);
  return plan;
}

}  // namespace gexec
