// group_elementwise: chains and small DAGs of elementwise ops (ADD, SUB, MUL, DIV, BIAS_ADD, RELU, GELU,
// SILU, SIGMOID, TANH, ERF, POW, CAST) of one shape become one FUSED_ELEMENTWISE op, which a backend runs as one kernel.
//
// Each step of the group keeps its op's output dtype, so every intermediate is rounded exactly as
// the graph says and the reference of the original graph still holds. A member's result is
// written (an output of the group) when it is a graph output or an op outside the group reads
// it; the other intermediates live only in registers. A group grows from its first op along the
// data flow, both ways, one op at a time, and takes an op only when no path leaves the group and
// comes back into it (which fusing would turn into a cycle), and while the group stays within
// kGroupMaxInputs inputs, kGroupMaxOutputs outputs, kGroupMaxSteps steps and kGroupMaxLive values
// live at once. All tensors of a group's shape must be row-major (or of rank other than 2), so
// that the kernel reads them in one linear order. A CAST from or to f8 stays a separate op: a
// group's values are f16, bf16 or f32 (graph-format.md), since quantizing needs the f8 tensor's
// scale, which a step has no place for. Single ops are left alone. The group takes the
// place of its last member; the ops are then re-sorted, since an outside reader of an
// intermediate may have come before it.
#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fresh_names.hpp"
#include "passes.hpp"

namespace gexec {
namespace {

// Beyond this many ops visited, a reachability question is answered "reachable" (no fusion).
constexpr size_t kMaxVisits = 4096;

bool rowmajor_like(const Tensor& t) { return t.rank() != 2 || t.layout == Layout::rowmajor; }

bool groupable(const Tensor& t) { return rowmajor_like(t) && !is_f8(t.dtype); }

bool eligible(const Graph& g, const Op& op) {
  if (!is_group_step_type(op.type) || op.hoisted || op.outputs.size() != 1) return false;
  if (!groupable(g.tensor(op.outputs[0]))) return false;
  for (TensorId t : op.inputs)
    if (!groupable(g.tensor(t))) return false;
  return true;
}

class Grouper {
 public:
  explicit Grouper(const Graph& g) : g_(g), idx_(g), group_of_(g.ops.size(), -1) {}

  // The group grown from op `seed`, sorted (data-flow order); just {seed} when nothing joins it.
  std::vector<size_t> grow(size_t seed) {
    std::vector<size_t> members = {seed};
    const std::vector<int64_t>& shape = g_.tensor(g_.ops[seed].outputs[0]).shape;
    bool grew = true;
    while (grew) {
      grew = false;
      for (size_t c : candidates(members)) {
        if (!eligible(g_, g_.ops[c]) || group_of_[c] >= 0 || g_.tensor(g_.ops[c].outputs[0]).shape != shape) continue;
        std::vector<size_t> trial = members;
        trial.insert(std::upper_bound(trial.begin(), trial.end(), c), c);
        if (!within_limits(trial) || !convex(trial)) continue;
        members = std::move(trial);
        grew = true;
        break;
      }
    }
    return members;
  }

  void claim(const std::vector<size_t>& members, int id) {
    for (size_t m : members) group_of_[m] = id;
  }

  // The group's inputs (external tensors, in order of first use) and outputs (written values).
  std::vector<TensorId> inputs(const std::vector<size_t>& members) const {
    std::vector<TensorId> in;
    for (size_t m : members)
      for (TensorId t : g_.ops[m].inputs)
        if (!produced_inside(t, members) && std::find(in.begin(), in.end(), t) == in.end()) in.push_back(t);
    return in;
  }
  std::vector<TensorId> outputs(const std::vector<size_t>& members) const {
    std::vector<TensorId> out;
    for (size_t m : members) {
      const TensorId t = g_.ops[m].outputs[0];
      bool outside = idx_.is_output[size_t(t)];
      for (OpId c : idx_.consumers[size_t(t)]) outside = outside || !contains(members, size_t(c));
      if (outside) out.push_back(t);
    }
    return out;
  }

 private:
  static bool contains(const std::vector<size_t>& v, size_t x) { return std::binary_search(v.begin(), v.end(), x); }
  bool produced_inside(TensorId t, const std::vector<size_t>& members) const {
    const OpId p = idx_.producer[size_t(t)];
    return p != kNone && contains(members, size_t(p));
  }

  // Readers of the members' results and writers of their inputs, in op order.
  std::vector<size_t> candidates(const std::vector<size_t>& members) const {
    std::vector<size_t> c;
    for (size_t m : members) {
      for (OpId r : idx_.consumers[size_t(g_.ops[m].outputs[0])])
        if (!contains(members, size_t(r))) c.push_back(size_t(r));
      for (TensorId t : g_.ops[m].inputs) {
        const OpId p = idx_.producer[size_t(t)];
        if (p != kNone && !contains(members, size_t(p))) c.push_back(size_t(p));
      }
    }
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
  }

  bool within_limits(const std::vector<size_t>& members) const {
    return int(members.size()) <= kGroupMaxSteps && int(inputs(members).size()) <= kGroupMaxInputs &&
           int(outputs(members).size()) <= kGroupMaxOutputs && peak_live(members) <= kGroupMaxLive;
  }

  // The most values live at once when the members run in order, each input from its first reader
  // and each value to its last reader in the group, the arguments of a step freed before its
  // result is taken (as fused_program.hpp assigns the CUDA kernel's registers).
  int peak_live(const std::vector<size_t>& members) const {
    std::unordered_map<TensorId, size_t> last;  // tensor -> position of its last reader among members
    for (size_t p = 0; p < members.size(); ++p)
      for (TensorId t : g_.ops[members[p]].inputs) last[t] = p;
    std::unordered_set<TensorId> live;
    int peak = 0;
    for (size_t p = 0; p < members.size(); ++p) {
      const Op& op = g_.ops[members[p]];
      for (TensorId t : op.inputs) live.insert(t);
      peak = std::max(peak, int(live.size()));
      for (TensorId t : op.inputs)
        if (last[t] == p) live.erase(t);
      const TensorId out = op.outputs[0];
      peak = std::max(peak, int(live.size()) + 1);
      if (last.count(out) && last[out] > p) live.insert(out);
    }
    return peak;
  }

  // No op outside the group lies on a path between two members: every outside writer of a
  // member's input must not be reachable from the group.
  bool convex(const std::vector<size_t>& members) const {
    size_t latest = 0;
    std::vector<size_t> writers;
    for (size_t m : members)
      for (TensorId t : g_.ops[m].inputs) {
        const OpId p = idx_.producer[size_t(t)];
        if (p != kNone && !contains(members, size_t(p))) writers.push_back(size_t(p)), latest = std::max(latest, size_t(p));
      }
    if (writers.empty()) return true;
    // Forward from the members through outside ops; ops come in data-flow order, so nothing past
    // the latest writer can lead back to one.
    std::unordered_set<size_t> seen;
    std::deque<size_t> todo;
    auto push_readers = [&](size_t op) {
      for (TensorId t : g_.ops[op].outputs)
        for (OpId r : idx_.consumers[size_t(t)])
          if (size_t(r) <= latest && !contains(members, size_t(r)) && seen.insert(size_t(r)).second) todo.push_back(size_t(r));
    };
    for (size_t m : members) push_readers(m);
    while (!todo.empty()) {
      if (seen.size() > kMaxVisits) return false;
      const size_t op = todo.front();
      todo.pop_front();
      if (std::find(writers.begin(), writers.end(), op) != writers.end()) return false;
      push_readers(op);
    }
    return true;
  }

  const Graph& g_;
  const GraphIndex idx_;
  std::vector<int> group_of_;
};

Op make_group(const Graph& g, const std::vector<size_t>& members, const std::vector<TensorId>& inputs,
              const std::vector<TensorId>& outputs, std::string name) {
  Op f;
  f.type = OpType::FUSED_ELEMENTWISE;
  f.name = std::move(name);
  f.inputs = inputs;
  f.outputs = outputs;
  std::unordered_map<TensorId, int32_t> value;
  for (size_t i = 0; i < inputs.size(); ++i) value[inputs[i]] = int32_t(i);
  for (size_t m : members) {
    const Op& op = g.ops[m];
    GroupStep st;
    st.type = op.type;
    st.dtype = g.tensor(op.outputs[0]).dtype;
    st.approximate = op.attrs.approximate;
    st.constant = op.attrs.constant;
    for (TensorId t : op.inputs) st.args.push_back(value.at(t));
    value[op.outputs[0]] = int32_t(inputs.size() + f.attrs.steps.size());
    f.attrs.steps.push_back(std::move(st));
  }
  for (TensorId t : outputs) f.attrs.results.push_back(value.at(t));
  return f;
}

}  // namespace

Status group_elementwise(Graph& g, const PassContext&) {
  Grouper grouper(g);
  FreshNames names(g);
  std::vector<Op> placed(g.ops.size());
  std::vector<bool> has_group(g.ops.size(), false), removed(g.ops.size(), false);
  int groups = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (removed[i] || !eligible(g, g.ops[i])) continue;
    std::vector<size_t> members = grouper.grow(i);
    if (members.size() < 2) continue;
    const auto in = grouper.inputs(members);
    const auto out = grouper.outputs(members);
    if (out.empty()) continue;  // dead: dead_ops removes it
    grouper.claim(members, groups++);
    std::string name = names.op("FUSED_" + g.ops[members.front()].name);
    for (size_t m : members) removed[m] = true;
    placed[members.back()] = make_group(g, members, in, out, std::move(name));
    has_group[members.back()] = true;
  }
  if (groups == 0) return Status::success();
  std::vector<Op> ops;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (has_group[i]) ops.push_back(std::move(placed[i]));
    else if (!removed[i]) ops.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(ops);
  if (auto cycle = topo_sort(g)) return runtime_error("group_elementwise made a cycle (a bug in the pass)");
  drop_unused_tensors(g);
  return Status::success();
}

}  // namespace gexec
