// Minimising a failing graph: greedy passes of simplifications, each kept when the smaller graph
// is still valid (verify) and still fails, until a whole round keeps none.
#include <algorithm>
#include <map>
#include <set>

#include "gexec/ir/gemm_shape.hpp"
#include "graphgen.hpp"

namespace gexec::graphgen {
namespace {

// Removes ops none of whose results reach an output, then the tensors nothing uses.
void drop_dead(Graph& g) {
  std::vector<bool> live(g.tensors.size(), false);
  for (TensorId t : g.outputs) live[size_t(t)] = true;
  std::vector<bool> keep(g.ops.size(), false);
  for (size_t i = g.ops.size(); i-- > 0;) {
    for (TensorId t : g.ops[i].outputs) keep[i] = keep[i] || live[size_t(t)];
    if (keep[i])
      for (TensorId t : g.ops[i].inputs) live[size_t(t)] = true;
  }
  std::vector<Op> ops;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (keep[i]) ops.push_back(std::move(g.ops[i]));
  g.ops = std::move(ops);
  drop_unused_tensors(g);
}

// Op i removed: its results become graph inputs (drawn from the seed) and leave the outputs; in
// their place the op's inputs that another op writes become outputs (the end of a chain shrinks).
Graph without_op(const Graph& g, size_t i) {
  Graph c = g;
  const GraphIndex idx(g);
  bool was_output = false;
  for (TensorId t : c.ops[i].outputs) was_output = std::erase(c.outputs, t) > 0 || was_output;
  if (was_output)
    for (TensorId t : c.ops[i].inputs)
      if (idx.producer[size_t(t)] != kNone && std::find(c.outputs.begin(), c.outputs.end(), t) == c.outputs.end())
        c.outputs.push_back(t);
  c.ops.erase(c.ops.begin() + long(i));
  drop_dead(c);
  return c;
}

// Every dimension equal to `from` becomes `to`, with what depends on the sizes (per-axis scales,
// explicit values, mnk) resized to match.
Graph resize_dim(const Graph& g, int64_t from, int64_t to) {
  Graph c = g;
  for (Tensor& t : c.tensors) {
    for (int64_t& d : t.shape)
      if (d == from) d = to;
    if (t.scale.axis >= 0) t.scale.values.resize(size_t(t.shape[size_t(t.scale.axis)]), t.scale.values.back());
    if (t.init && t.init->kind == InitKind::values) t.init->values.edit().resize(size_t(t.numel()), 0.5);
  }
  for (Op& op : c.ops)
    if (op.attrs.mnk) {
      op.attrs.mnk.reset();
      if (auto s = gemm_shape(c, op)) op.attrs.mnk = std::array<int64_t, 3>{s->m, s->n, s->k};
    }
  return c;
}

class Shrinker {
 public:
  Shrinker(const std::function<bool(const Graph&)>& fails, int budget) : fails_(fails), budget_(budget) {}

  // Keeps `c` when it is valid, smaller or simpler, and still fails.
  bool try_keep(Graph& best, Graph c) {
    if (budget_ <= 0 || c == best || c.ops.empty() || c.outputs.empty() || !verify(c).empty()) return false;
    --budget_;
    if (!fails_(c)) return false;
    best = std::move(c);
    return true;
  }

  Graph run(Graph g) {
    bool progress = true;
    while (progress && budget_ > 0) {
      progress = false;
      for (size_t i = g.ops.size(); i-- > 0;)
        if (i < g.ops.size() && try_keep(g, without_op(g, i))) progress = true;
      for (size_t o = g.outputs.size(); o-- > 0 && g.outputs.size() > 1;) {
        if (o >= g.outputs.size()) continue;  // a kept drop took more than one output away
        Graph c = g;
        c.outputs.erase(c.outputs.begin() + long(o));
        drop_dead(c);
        if (try_keep(g, std::move(c))) progress = true;
      }
      progress = shrink_dims(g) || progress;
      progress = simplify_ops(g) || progress;
      progress = simplify_tensors(g) || progress;
    }
    return g;
  }

 private:
  bool shrink_dims(Graph& g) {
    bool any = false;
    std::set<int64_t> dims;
    for (const Tensor& t : g.tensors) dims.insert(t.shape.begin(), t.shape.end());
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      const int64_t d = *it;
      for (int64_t to : {int64_t(1), int64_t(2), d / 2, d - 1})
        if (to >= 1 && to < d && try_keep(g, resize_dim(g, d, to))) {
          any = true;
          break;
        }
    }
    return any;
  }

  bool simplify_ops(Graph& g) {
    bool any = false;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      // A kept edit replaces g (drop_dead may take ops away): `op` is a copy, and an edit whose op
      // is gone is not tried.
      auto edit = [&](auto&& change) {
        if (i >= g.ops.size()) return;
        Graph c = g;
        change(c.ops[i]);
        drop_dead(c);
        if (try_keep(g, std::move(c))) any = true;
      };
      const Attrs def;
      const Op op = g.ops[i];
      if (op.outputs.size() == 2 && op.type != OpType::FUSED_ELEMENTWISE) edit([](Op& o) { o.outputs.pop_back(); });
      if (op.attrs.residual)
        edit([](Op& o) {
          o.inputs.pop_back();
          o.attrs.residual = false;
          o.attrs.beta = 1.0;
        });
      if (op.type == OpType::GEMM_BIAS_ACT && op.inputs.size() == (op.attrs.residual ? 4u : 3u))
        edit([](Op& o) { o.inputs.erase(o.inputs.begin() + 2); });
      if (op.attrs.alpha != def.alpha) edit([](Op& o) { o.attrs.alpha = 1.0; });
      if (op.attrs.beta != def.beta) edit([](Op& o) { o.attrs.beta = 1.0; });
      if (op.attrs.act != def.act) edit([](Op& o) { o.attrs.act = Act::none; });
      if (op.attrs.fast_accum) edit([](Op& o) { o.attrs.fast_accum = false; });
      if (op.attrs.mnk) edit([](Op& o) { o.attrs.mnk.reset(); });
      if (op.attrs.approximate != def.approximate) edit([](Op& o) { o.attrs.approximate = GeluApprox::tanh; });
      if (op.type == OpType::FUSED_ELEMENTWISE) any = simplify_group(g, i) || any;
    }
    return any;
  }

  // A group's outputs dropped one at a time, with the steps only they needed (those after the last
  // result left).
  bool simplify_group(Graph& g, size_t i) {
    bool any = false;
    auto still_group = [&] { return i < g.ops.size() && g.ops[i].type == OpType::FUSED_ELEMENTWISE; };
    for (size_t o = g.ops[i].outputs.size(); o-- > 0 && still_group() && o < g.ops[i].outputs.size() &&
                                             g.ops[i].outputs.size() > 1;) {
      Graph c = g;
      Op& op = c.ops[i];
      const TensorId t = op.outputs[o];
      op.outputs.erase(op.outputs.begin() + long(o));
      op.attrs.results.erase(op.attrs.results.begin() + long(o));
      const int32_t last = *std::max_element(op.attrs.results.begin(), op.attrs.results.end());
      op.attrs.steps.resize(size_t(last + 1) - op.inputs.size());
      std::erase(c.outputs, t);
      drop_dead(c);
      if (try_keep(g, std::move(c))) any = true;
    }
    return any;
  }

  bool simplify_tensors(Graph& g) {
    bool any = false;
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      auto edit = [&](auto&& change) {  // as in simplify_ops: a kept edit replaces g
        if (t >= g.tensors.size()) return;
        Graph c = g;
        change(c.tensors[t]);
        if (try_keep(g, std::move(c))) any = true;
      };
      const Tensor ten = g.tensors[t];
      if (ten.layout != Layout::rowmajor) edit([](Tensor& x) { x.layout = Layout::rowmajor; });
      if (!ten.scale.is_default()) edit([](Tensor& x) { x.scale = Scale{}; });
      if (ten.init) edit([](Tensor& x) { x.init.reset(); });
      if (ten.constant) edit([](Tensor& x) { x.constant = false; });
      if (ten.dtype != DType::f32)
        edit([](Tensor& x) {
          x.dtype = DType::f32;
          x.scale = Scale{};
        });
    }
    return any;
  }

  const std::function<bool(const Graph&)>& fails_;
  int budget_;
};

}  // namespace

Graph shrink(Graph g, const std::function<bool(const Graph&)>& still_fails, int max_candidates) {
  return Shrinker(still_fails, max_candidates).run(std::move(g));
}

}  // namespace gexec::graphgen
