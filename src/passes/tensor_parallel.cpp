// The sharding of a graph for --tp N (tensor_parallel.hpp). Each tensor of the graph as loaded is
// either whole on every rank or cut along one axis (rank r holds slice r); the ops are taken in
// order and each is cut where its operands allow, else run whole on gathered operands.
#include "gexec/passes/tensor_parallel.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "fresh_names.hpp"
#include "gexec/ir/gemm_shape.hpp"

namespace gexec {
namespace {

bool is_product(const Op& op) { return op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT; }

// Whether an f8 tensor's scale survives a cut: one value for the whole tensor.
bool tensor_wise(const Tensor& t) { return !is_f8(t.dtype) || (!t.scale.is_block() && t.scale.axis < 0); }

class Sharder {
 public:
  Sharder(const Graph& g, const ShardOptions& o) : g_(g), idx_(g), n_(o.ranks), o_(o), names_(g) {
    plan_.ranks = n_;
    Graph& r = plan_.rank;
    r.name = g.name;
    r.seed = g.seed;
    r.tensors = g.tensors;  // each tensor's whole form keeps its id; cut forms are added after
    r.outputs = g.outputs;
    state_.assign(g.tensors.size(), {});
    whole_.assign(g.tensors.size(), false);
    for (size_t t = 0; t < g.tensors.size(); ++t) whole_[t] = idx_.is_input(TensorId(t));
  }

  Result<ShardPlan> run() {
    for (const Op& op : g_.ops) {
      // A product whose A arrives cut is row-parallel where A is cut along K; else column-parallel
      // on the whole of A (gathered where it was cut along another axis, as sequence parallelism
      // gathers the rows before the next layer).
      const bool a_cut = is_product(op) && state_[size_t(op.inputs[0])].axis >= 0;
      if (a_cut && row_parallel(op)) continue;
      if (is_product(op) && column_parallel(op)) continue;
      if (is_group_step_type(op.type) && elementwise(op)) continue;
      whole_op(op);
    }
    for (TensorId t : g_.outputs) whole(t);
    Graph& r = plan_.rank;
    overlap_order(r);
    drop_unused_tensors(r);
    std::vector<ShardedInput> kept;
    for (ShardedInput& s : plan_.inputs)
      if (r.find_tensor(s.name) != kNone) kept.push_back(std::move(s));
    plan_.inputs = std::move(kept);
    if (auto problems = verify(r); !problems.empty()) {
      std::string all;
      for (const std::string& p : problems) all += "\n  " + p;
      return runtime_error("the sharded graph is not well formed (a bug of the sharding):" + all);
    }
    return std::move(plan_);
  }

 private:
  struct State {
    int axis = -1;             // -1: whole
    TensorId shard = kNone;    // the rank graph's tensor holding this rank's slice
  };

  // A computed tensor can be cut (and gathered) along `axis`: rowmajor, a dtype the collectives
  // carry, the axis divisible by the ranks.
  bool cuttable(const Tensor& t, int axis) const {
    return axis >= 0 && axis < t.rank() && t.shape[size_t(axis)] % n_ == 0 && t.layout == Layout::rowmajor &&
           (t.dtype == DType::f16 || t.dtype == DType::bf16 || t.dtype == DType::f32);
  }

  TensorId add_cut(const Tensor& like, int axis, const std::string& base) {
    Tensor t = like;
    t.name = names_.tensor(base);
    t.shape[size_t(axis)] /= n_;
    t.init.reset();
    t.constant = false;
    return plan_.rank.add_tensor(std::move(t));
  }

  TensorId add_like(const Tensor& like, DType dt, const std::string& base) {
    Tensor t = like;
    t.name = names_.tensor(base);
    t.dtype = dt;
    t.init.reset();
    t.constant = false;
    t.scale = {};
    return plan_.rank.add_tensor(std::move(t));
  }

  // This rank's slice along `axis` of graph input t (cut on the host), or kNone where it cannot be cut.
  TensorId input_slice(TensorId t, int axis) {
    const Tensor& x = g_.tensor(t);
    if (!idx_.is_input(t) || axis < 0 || axis >= x.rank() || x.shape[size_t(axis)] % n_ != 0 || !tensor_wise(x) ||
        x.rank() == 0)
      return kNone;
    const auto key = std::make_pair(t, axis);
    if (auto it = input_cuts_.find(key); it != input_cuts_.end()) return it->second;
    Tensor c = x;
    c.name = names_.tensor(x.name + ".shard");
    c.shape[size_t(axis)] /= n_;
    // Its values are the whole input's, cut on the host (ShardedInput): values or a file written
    // for the whole shape do not describe the slice.
    if (c.init && (c.init->kind == InitKind::values || c.init->kind == InitKind::file)) c.init.reset();
    const TensorId id = plan_.rank.add_tensor(std::move(c));
    plan_.inputs.push_back({plan_.rank.tensor(id).name, x.name, axis});
    input_cuts_[key] = id;
    return id;
  }

  // This rank's slice of t along `axis`: its cut form, or a graph input's host cut; else kNone.
  TensorId slice(TensorId t, int axis) {
    if (state_[size_t(t)].axis == axis) return state_[size_t(t)].shard;
    return input_slice(t, axis);
  }

  // The whole of t on every rank: gathered where it was cut (`for`: who needs it, for the note).
  TensorId whole(TensorId t, const std::string& for_ = "the graph's output") {
    if (whole_[size_t(t)]) return t;
    const State s = state_[size_t(t)];
    Op gather;
    gather.type = OpType::ALL_GATHER;
    gather.name = names_.op("gather_" + g_.tensor(t).name);
    gather.inputs = {s.shard};
    gather.outputs = {t};
    gather.attrs.ranks = n_;
    gather.attrs.axis = s.axis;
    plan_.rank.ops.push_back(std::move(gather));
    whole_[size_t(t)] = true;
    plan_.notes.push_back("tensor " + g_.tensor(t).name + ": gathered along axis " + std::to_string(s.axis) +
                          " (ALL_GATHER) for " + for_);
    return t;
  }

  void whole_op(const Op& op) {
    Op c = op;
    for (TensorId& t : c.inputs) t = whole(t, "op " + op.name);
    for (TensorId t : c.outputs) whole_[size_t(t)] = true;
    plan_.rank.ops.push_back(std::move(c));
  }

  void cut_output(TensorId t, int axis, TensorId shard) { state_[size_t(t)] = {axis, shard}; }

  bool column_parallel(const Op& op) {
    const auto s = gemm_shape(g_, op);
    if (!s || op.outputs.size() != 1) return why_not(op, "it writes an amax");
    const TensorId a = op.inputs[0], b = op.inputs[1], c = op.outputs[0];
    const Tensor& B = g_.tensor(b);
    const Tensor& C = g_.tensor(c);
    if (!idx_.is_input(b)) return why_not(op, "its B is computed (only a graph input's weight is cut)");
    if (s->n % n_ != 0) return why_not(op, "N = " + std::to_string(s->n) + " is not divisible by " + std::to_string(n_));
    if (!cuttable(C, C.rank() - 1)) return why_not(op, "its output cannot be cut (colmajor or f8)");
    if (!tensor_wise(B)) return why_not(op, "B has a per-column or block scale");
    const int b_axis = s->trans_b ? B.rank() - 2 : B.rank() - 1;
    Op cut = op;
    cut.inputs[0] = whole(a);
    const TensorId cut_b = cut.inputs[1] = input_slice(b, b_axis);
    size_t k = 2;
    if (s->has_bias) {
      cut.inputs[k] = slice(op.inputs[k], 0);
      if (cut.inputs[k] == kNone) return why_not(op, "its bias is computed");
      ++k;
    }
    if (s->has_residual) {
      cut.inputs[k] = slice(op.inputs[k], C.rank() - 1);
      if (cut.inputs[k] == kNone) return why_not(op, "its residual is computed and whole");
    }
    cut.outputs[0] = add_cut(C, C.rank() - 1, C.name + ".shard");
    if (cut.attrs.mnk) (*cut.attrs.mnk)[1] /= n_;
    plan_.rank.ops.push_back(std::move(cut));
    cut_output(c, C.rank() - 1, plan_.rank.ops.back().outputs[0]);
    plan_.notes.push_back("op " + op.name + ": column-parallel: B " + B.name + " " + shape_str(B.shape) + " cut along N into " +
                          std::to_string(n_) + " slices of " + shape_str(plan_.rank.tensor(cut_b).shape) + "; " + C.name +
                          " cut along its last axis");
    return true;
  }

  bool row_parallel(const Op& op) {
    const auto s = gemm_shape(g_, op);
    const TensorId a = op.inputs[0], b = op.inputs[1], c = op.outputs[0];
    const Tensor& A = g_.tensor(a);
    const Tensor& B = g_.tensor(b);
    const Tensor& C = g_.tensor(c);
    const int a_k = s && s->trans_a ? A.rank() - 2 : A.rank() - 1;
    if (!s || op.outputs.size() != 1) return why_not(op, "it writes an amax");
    if (state_[size_t(a)].axis != a_k) return why_not(op, "its A is cut along another axis than K");
    if (!idx_.is_input(b)) return why_not(op, "its B is computed (only a graph input's weight is cut)");
    if (is_f8(C.dtype)) return why_not(op, "it writes f8");
    if (C.layout != Layout::rowmajor) return why_not(op, "it writes a colmajor tensor (the sums are rowmajor)");
    if (!tensor_wise(B)) return why_not(op, "B has a per-row or block scale");
    const int b_axis = s->trans_b ? B.rank() - 1 : B.rank() - 2;
    // The partial product of this rank's K slice, alpha applied, in f32.
    Op mm;
    mm.type = OpType::MATMUL;
    mm.name = op.name;  // the op as written is not in the rank graph: its name is free
    const TensorId cut_b = input_slice(b, b_axis);
    mm.inputs = {state_[size_t(a)].shard, cut_b};
    mm.attrs.trans_a = op.attrs.trans_a;
    mm.attrs.trans_b = op.attrs.trans_b;
    mm.attrs.alpha = op.attrs.alpha;
    mm.attrs.fast_accum = op.attrs.fast_accum;
    if (cut_b == kNone) return why_not(op, "B cannot be cut along K");
    const TensorId partial = add_like(C, DType::f32, C.name + ".partial");
    mm.outputs = {partial};
    plan_.rank.ops.push_back(std::move(mm));
    // The sum: every rank's rows (ALL_REDUCE), or its own rows (REDUCE_SCATTER along axis 0) where
    // asked and the rows and the residual can be cut so.
    const bool has_res = s->has_residual;
    const TensorId res = has_res ? op.inputs.back() : kNone;
    const bool scatter = o_.reduce_scatter && cuttable(C, 0) && (!has_res || slice(res, 0) != kNone);
    Op sum;
    sum.type = scatter ? OpType::REDUCE_SCATTER : OpType::ALL_REDUCE;
    sum.name = names_.op((scatter ? "reduce_scatter_" : "all_reduce_") + C.name);
    sum.inputs = {partial};
    sum.attrs.ranks = n_;
    sum.attrs.axis = 0;
    const bool epilogue = has_res || s->has_bias || (op.type == OpType::GEMM_BIAS_ACT && op.attrs.act != Act::none);
    // Without an epilogue, an f32 result is the sum itself.
    const bool direct = !epilogue && C.dtype == DType::f32;
    TensorId v = kNone;
    if (direct) v = scatter ? add_cut(C, 0, C.name + ".shard") : c;
    else v = scatter ? add_cut(plan_.rank.tensor(partial), 0, C.name + ".sum") : add_like(C, DType::f32, C.name + ".sum");
    sum.outputs = {v};
    plan_.rank.ops.push_back(std::move(sum));
    // The epilogue of the whole product, after the sum, in f32: beta R, the bias once, the activation.
    const Tensor vt = plan_.rank.tensor(v);
    auto step = [&](OpType type, std::vector<TensorId> in, std::optional<double> constant = std::nullopt) {
      Op e;
      e.type = type;
      e.name = names_.op(op.name + "_" + std::string(op_type_name(type)));
      e.inputs = std::move(in);
      e.attrs.constant = constant;
      e.outputs = {add_like(vt, DType::f32, C.name + ".f32")};
      plan_.rank.ops.push_back(std::move(e));
      return plan_.rank.ops.back().outputs[0];
    };
    if (has_res) {
      TensorId r = scatter ? slice(res, 0) : whole(res);
      if (op.attrs.beta != 1.0) r = step(OpType::MUL, {r}, op.attrs.beta);
      v = step(OpType::ADD, {v, r});
    }
    if (s->has_bias) v = step(OpType::BIAS_ADD, {v, whole(op.inputs[2])});
    if (op.type == OpType::GEMM_BIAS_ACT && op.attrs.act != Act::none) {
      v = step(op.attrs.act == Act::relu ? OpType::RELU : op.attrs.act == Act::silu ? OpType::SILU : OpType::GELU, {v});
      if (op.attrs.act == Act::gelu_erf) plan_.rank.ops.back().attrs.approximate = GeluApprox::none;
    }
    if (!direct) {
      // The result in C's dtype: the last step writes it where C is f32, else a CAST.
      const TensorId out = scatter ? add_cut(C, 0, C.name + ".shard") : c;
      if (C.dtype == DType::f32 && epilogue) {
        plan_.rank.ops.back().outputs[0] = out;
      } else {
        Op cast;
        cast.type = OpType::CAST;
        cast.name = names_.op(op.name + "_cast");
        cast.inputs = {v};
        cast.outputs = {out};
        plan_.rank.ops.push_back(std::move(cast));
      }
      v = out;
    }
    if (scatter) cut_output(c, 0, v);
    else whole_[size_t(c)] = true;
    plan_.notes.push_back("op " + op.name + ": row-parallel: B " + B.name + " " + shape_str(B.shape) + " cut along K into " +
                          std::to_string(n_) + " slices of " + shape_str(plan_.rank.tensor(cut_b).shape) +
                          "; the partial products summed in f32 by " +
                          std::string(scatter ? "REDUCE_SCATTER (each rank keeps its rows)" : "ALL_REDUCE") +
                          (epilogue ? ", then the epilogue once, after the sum" : ""));
    return true;
  }

  bool elementwise(const Op& op) {
    if (op.outputs.size() != 1) return false;
    int axis = -1;
    for (TensorId t : op.inputs) {
      const int a = state_[size_t(t)].axis;
      if (a < 0) continue;
      if (axis >= 0 && a != axis) return false;
      axis = a;
    }
    if (axis < 0) return false;
    const TensorId y = op.outputs[0];
    const Tensor& Y = g_.tensor(y);
    if (!cuttable(Y, axis) || !tensor_wise(Y)) return false;
    Op cut = op;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const TensorId t = op.inputs[k];
      const Tensor& X = g_.tensor(t);
      if (op.type == OpType::BIAS_ADD && k == 1) {
        // The bias runs along the last axis: cut with it, whole beside a cut of the rows.
        cut.inputs[k] = axis == Y.rank() - 1 ? slice(t, 0) : whole(t);
      } else if (X.shape == Y.shape) {
        cut.inputs[k] = slice(t, axis);
      } else {
        return false;
      }
      if (cut.inputs[k] == kNone) return false;  // a computed whole operand: run whole instead
    }
    cut.outputs[0] = add_cut(Y, axis, Y.name + ".shard");
    plan_.rank.ops.push_back(std::move(cut));
    cut_output(y, axis, plan_.rank.ops.back().outputs[0]);
    return true;
  }

  // Orders the ops so that the readers of a collective's result come as late as the data allows:
  // the ops that do not need it run while it is in flight (its kernel runs on a communication
  // stream, waited for by its first reader). Otherwise the order is kept.
  static void overlap_order(Graph& r) {
    std::vector<bool> ready(r.tensors.size(), false), in_flight(r.tensors.size(), false);
    const GraphIndex idx(r);
    for (size_t t = 0; t < r.tensors.size(); ++t) ready[t] = idx.is_input(TensorId(t));
    std::vector<Op> left = std::move(r.ops), done;
    while (!left.empty()) {
      auto can = [&](const Op& op, bool waiting_ok) {
        for (TensorId t : op.inputs)
          if (!ready[size_t(t)] || (!waiting_ok && in_flight[size_t(t)])) return false;
        return true;
      };
      auto it = std::find_if(left.begin(), left.end(), [&](const Op& op) { return can(op, false); });
      if (it == left.end()) it = std::find_if(left.begin(), left.end(), [&](const Op& op) { return can(op, true); });
      if (it == left.end()) it = left.begin();  // not reached: the ops were in data-flow order
      for (TensorId t : it->inputs) in_flight[size_t(t)] = false;
      for (TensorId t : it->outputs) ready[size_t(t)] = true, in_flight[size_t(t)] = is_collective(it->type);
      done.push_back(std::move(*it));
      left.erase(it);
    }
    r.ops = std::move(done);
  }

  bool why_not(const Op& op, const std::string& why) {
    plan_.notes.push_back("op " + op.name + ": not cut: " + why);
    return false;
  }

  const Graph& g_;
  GraphIndex idx_;
  int n_;
  ShardOptions o_;
  FreshNames names_;
  ShardPlan plan_;
  std::vector<State> state_;
  std::vector<bool> whole_;  // per tensor of g: the rank graph holds all of it under its id
  std::map<std::pair<TensorId, int>, TensorId> input_cuts_;
};

}  // namespace

Result<ShardPlan> shard_graph(const Graph& g, const ShardOptions& o) {
  if (o.ranks < 1) return bad_input("--tp " + std::to_string(o.ranks) + ": the ranks must be at least 1");
  for (const Op& op : g.ops)
    if (is_collective(op.type))
      return bad_input("op " + op.name + " is " + std::string(op_type_name(op.type)) +
                       ": the graph is already a rank's program; --tp cuts an unsharded graph");
  return Sharder(g, o).run();
}

int64_t collective_tensor_bytes(const Graph& rank, const Op& op) {
  return op.type == OpType::ALL_GATHER ? rank.tensor(op.outputs[0]).bytes() : rank.tensor(op.inputs[0]).bytes();
}

int64_t collective_ring_bytes(const Graph& rank, const Op& op) {
  const int64_t n = op.attrs.ranks, s = collective_tensor_bytes(rank, op);
  return (op.type == OpType::ALL_REDUCE ? 2 : 1) * (n - 1) * s / n;
}

std::vector<uint8_t> slice_bytes(const Tensor& whole, const std::vector<uint8_t>& bytes, int axis, int ranks, int r) {
  // A colmajor matrix is stored as its transpose, rowmajor: the same cut along the other axis.
  std::vector<int64_t> stored = whole.shape;
  if (whole.rank() == 2 && whole.layout == Layout::colmajor) {
    std::swap(stored[0], stored[1]);
    axis = 1 - axis;
  }
  int64_t outer = 1, inner = int64_t(dtype_size(whole.dtype));
  for (int i = 0; i < axis; ++i) outer *= stored[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < stored.size(); ++i) inner *= stored[i];
  const int64_t part = stored[size_t(axis)] / ranks;  // rows of the axis per rank
  const size_t chunk = size_t(part * inner), row = size_t(stored[size_t(axis)] * inner);
  std::vector<uint8_t> out(size_t(outer) * chunk);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.data() + size_t(o) * chunk, bytes.data() + size_t(o) * row + size_t(r) * chunk, chunk);
  return out;
}

}  // namespace gexec
