// Graph lookups, the producer/consumer index, stable topological ordering, op shape rules and verify().
#include "gexec/ir/graph.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <unordered_set>

#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/grouped_shape.hpp"

namespace gexec {

TensorId Graph::find_tensor(std::string_view n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<TensorId>(i);
  return kNone;
}

TensorId Graph::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<TensorId>(tensors.size() - 1);
}

GraphIndex::GraphIndex(const Graph& g)
    : producer(g.tensors.size(), kNone), consumers(g.tensors.size()), is_output(g.tensors.size(), false) {
  auto in_range = [&](TensorId t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const OpId op = static_cast<OpId>(i);
    for (TensorId t : g.ops[i].outputs)
      if (in_range(t) && producer[size_t(t)] == kNone) producer[size_t(t)] = op;
    for (TensorId t : op_reads(g, g.ops[i])) {  // a block scale's S is read with its tensor
      if (!in_range(t)) continue;
      auto& c = consumers[size_t(t)];
      if (c.empty() || c.back() != op) c.push_back(op);  // an op reading a tensor twice counts once
    }
  }
  for (TensorId t : g.outputs)
    if (in_range(t)) is_output[size_t(t)] = true;
}

std::optional<std::vector<OpId>> topo_sort(Graph& g) {
  const size_t n = g.ops.size();
  auto in_range = [&](TensorId t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); };
  // The first writer of each tensor is its producer; verify() reports any second one.
  std::vector<OpId> producer(g.tensors.size(), kNone);
  for (size_t i = 0; i < n; ++i)
    for (TensorId t : g.ops[i].outputs)
      if (in_range(t) && producer[size_t(t)] == kNone) producer[size_t(t)] = OpId(i);

  std::vector<std::vector<OpId>> preds(n), succs(n);
  for (size_t i = 0; i < n; ++i)
    for (TensorId t : op_reads(g, g.ops[i])) {
      if (!in_range(t) || producer[size_t(t)] == kNone) continue;
      const OpId p = producer[size_t(t)];
      if (std::find(preds[i].begin(), preds[i].end(), p) != preds[i].end()) continue;
      preds[i].push_back(p);
      succs[size_t(p)].push_back(OpId(i));
    }

  // Kahn's algorithm taking the ready op with the smallest original index: the result is
  // the given order whenever that order already respects the data flow.
  std::vector<size_t> waiting(n);
  std::priority_queue<OpId, std::vector<OpId>, std::greater<OpId>> ready;
  for (size_t i = 0; i < n; ++i) {
    waiting[i] = preds[i].size();
    if (waiting[i] == 0) ready.push(OpId(i));
  }
  std::vector<OpId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const OpId o = ready.top();
    ready.pop();
    order.push_back(o);
    for (OpId s : succs[size_t(o)])
      if (--waiting[size_t(s)] == 0) ready.push(s);
  }

  if (order.size() != n) {
    // Every op left over waits on another left-over op, so walking predecessors from one
    // of them must come back to an op already seen: that loop is a cycle.
    std::vector<bool> left(n, false);
    for (size_t i = 0; i < n; ++i) left[i] = waiting[i] > 0;
    OpId cur = kNone;
    for (size_t i = 0; i < n && cur == kNone; ++i)
      if (left[i]) cur = OpId(i);
    std::vector<int> seen_at(n, -1);
    std::vector<OpId> walk;
    while (seen_at[size_t(cur)] < 0) {
      seen_at[size_t(cur)] = int(walk.size());
      walk.push_back(cur);
      OpId next = kNone;
      for (OpId p : preds[size_t(cur)])
        if (left[size_t(p)]) {
          next = p;
          break;
        }
      cur = next;
    }
    // The walk follows data backwards; reverse it to read in the direction of the data flow,
    // and start at the cycle's earliest op so the report does not depend on where we began.
    std::vector<OpId> cycle(walk.begin() + seen_at[size_t(cur)], walk.end());
    std::reverse(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    return cycle;
  }

  std::vector<Op> sorted;
  sorted.reserve(n);
  for (OpId o : order) sorted.push_back(std::move(g.ops[size_t(o)]));
  g.ops = std::move(sorted);
  return std::nullopt;
}

namespace {

bool same_shape(const Tensor& a, const Tensor& b) { return a.shape == b.shape; }

// The constant operand of an op or step of type t reading `operands` values (graph-format.md,
// "Constant operands"): POW needs its exponent; ADD, SUB, MUL, DIV take a scalar in place of
// their second input; the others take none. The kernels compute with it as an f32, so it must
// be finite there. Empty when it is right.
std::string constant_problem(const std::string& who, OpType t, const std::optional<double>& c, size_t operands) {
  const std::string key(constant_key(t));
  if (!takes_constant(t))
    return c ? who + " takes no constant operand (\"scalar\" is for ADD, SUB, MUL, DIV; \"exponent\" for POW)" : "";
  if (t == OpType::POW && !c) return who + " needs \"exponent\", a constant (POW by a tensor is not supported)";
  if (c && !std::isfinite(float(*c)))
    return who + " has \"" + key + "\" " + std::to_string(*c) + ", not a finite f32 value (|x| <= 3.4028235e38)";
  if (t == OpType::POW) return "";
  if (operands == 1 && !c) return who + " with one operand needs \"scalar\", its constant second operand";
  if (operands == 2 && c) return who + " takes \"scalar\" or a second operand, not both";
  return "";
}

// FUSED_ELEMENTWISE: every output has the group's shape S (the first output's); every input is
// of shape S, or a vector of S's last dimension read only as a BIAS_ADD's bias; each step's
// arguments have the shapes its op needs, and each output the dtype of the step it writes.
// Steps round to f16, bf16 or f32 (f8 needs a scale, which only a CAST op has: check_f8_op keeps
// f8 tensors out of groups), and every tensor is row-major, read and written in one linear order.
std::vector<std::string> check_group(const Graph& g, const Op& op) {
  std::vector<std::string> problems;
  const Attrs& a = op.attrs;
  const int nin = int(op.inputs.size());
  if (a.steps.empty() || int(a.steps.size()) > kGroupMaxSteps)
    problems.push_back("FUSED_ELEMENTWISE has " + std::to_string(a.steps.size()) + " steps; 1 to " +
                       std::to_string(kGroupMaxSteps) + " are allowed");
  if (a.results.size() != op.outputs.size())
    problems.push_back("FUSED_ELEMENTWISE has " + std::to_string(a.results.size()) + " results for " +
                       std::to_string(op.outputs.size()) + " outputs");
  if (!problems.empty()) return problems;
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (TensorId id : *ids)
      if (const Tensor& t = g.tensor(id); t.rank() == 2 && t.layout == Layout::colmajor)
        problems.push_back("FUSED_ELEMENTWISE " + std::string(ids == &op.inputs ? "reads" : "writes") + " \"" + t.name +
                           "\", which is colmajor; a group reads and writes row-major tensors only");
  const Tensor& first = g.tensor(op.outputs[0]);
  const std::vector<int64_t>& shape = first.shape;
  const int64_t cols = shape.back();
  // Per value: 1 full-shape, 2 a bias vector, 0 unusable.
  std::vector<int> kind(size_t(nin) + a.steps.size(), 0);
  for (int i = 0; i < nin; ++i) {
    const Tensor& t = g.tensor(op.inputs[size_t(i)]);
    if (t.shape == shape) kind[size_t(i)] = 1;
    else if (t.rank() == 1 && t.shape[0] == cols) kind[size_t(i)] = 2;
    else
      problems.push_back("FUSED_ELEMENTWISE input " + std::to_string(i) + " \"" + t.name + "\" is " +
                         shape_str(t.shape) + "; expected the group's shape " + shape_str(shape) + " or a [" +
                         std::to_string(cols) + "] bias");
  }
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const GroupStep& st = a.steps[i];
    const std::string who = "FUSED_ELEMENTWISE step " + std::to_string(i) + " (" + std::string(op_type_name(st.type)) + ")";
    const int own = nin + int(i);
    const size_t want = operand_count(st.type, st.constant.has_value());
    if (!is_group_step_type(st.type)) {
      problems.push_back(who + " is not an elementwise op a group may hold");
      continue;
    }
    if (std::string c = constant_problem(who, st.type, st.constant, st.args.size()); !c.empty()) {
      problems.push_back(std::move(c));
      continue;
    }
    if (is_f8(st.dtype))
      problems.push_back(who + " is rounded to " + std::string(dtype_name(st.dtype)) +
                         "; a step rounds to f16, bf16 or f32 (f8 is quantized by a CAST op, with the tensor's scale)");
    if (st.args.size() != want) {
      problems.push_back(who + " takes " + std::to_string(want) + " arguments, has " + std::to_string(st.args.size()));
      continue;
    }
    bool args_ok = true;
    for (int32_t v : st.args)
      if (v < 0 || v >= own) {
        problems.push_back(who + " reads value " + std::to_string(v) + ", not defined before it");
        args_ok = false;
      }
    if (!args_ok) continue;
    for (size_t j = 0; j < st.args.size(); ++j) {
      const int k = kind[size_t(st.args[j])];
      const bool bias_slot = st.type == OpType::BIAS_ADD && j == 1;
      // A rank-1 group's full values are as long as its last dimension: they serve as a bias too.
      if (bias_slot && k != 2 && !(k == 1 && shape.size() == 1))
        problems.push_back(who + " reads value " + std::to_string(st.args[j]) + " as its bias; expected a [" +
                           std::to_string(cols) + "] input");
      if (!bias_slot && k != 1)
        problems.push_back(who + " reads value " + std::to_string(st.args[j]) +
                           (k == 2 ? ", a bias vector, where a value of the group's shape " + shape_str(shape) + " is needed"
                                   : ", which has no usable shape"));
    }
    kind[size_t(own)] = 1;
  }
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const Tensor& t = g.tensor(op.outputs[o]);
    const int32_t r = a.results[o];
    if (t.shape != shape)
      problems.push_back("FUSED_ELEMENTWISE output \"" + t.name + "\" is " + shape_str(t.shape) +
                         "; every output must have the group's shape " + shape_str(shape));
    if (r < nin || r >= nin + int(a.steps.size())) {
      problems.push_back("FUSED_ELEMENTWISE result " + std::to_string(o) + " is value " + std::to_string(r) +
                         ", not a step");
      continue;
    }
    const DType d = a.steps[size_t(r - nin)].dtype;
    if (t.dtype != d)
      problems.push_back("FUSED_ELEMENTWISE output \"" + t.name + "\" is " + std::string(dtype_name(t.dtype)) +
                         " but step " + std::to_string(r - nin) + ", which it holds, is rounded to " +
                         std::string(dtype_name(d)));
    for (size_t p = 0; p < o; ++p)
      if (a.results[p] == r)
        problems.push_back("FUSED_ELEMENTWISE outputs " + std::to_string(p) + " and " + std::to_string(o) +
                           " both hold value " + std::to_string(r));
  }
  return problems;
}

// GROUPED_GEMM: the shapes (grouped_shape.hpp) and the dtypes its kernels and reference compute.
std::vector<std::string> check_grouped(const Graph& g, const Op& op) {
  std::vector<std::string> problems;
  std::string why;
  if (!grouped_shape(g, op, &why)) return {why};
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& w = g.tensor(op.inputs[1]);
  auto plain = [](DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; };
  if (is_f8(x.dtype) || is_f8(w.dtype)) {  // the FP8 rules themselves: check_f8_op
    // Block scales as a product takes them (graph-format.md, FP8): X 1 x 128 along K, each
    // expert's W 128 x 128; both operands or neither.
    if (x.scale.is_block() != w.scale.is_block())
      problems.push_back("GROUPED_GEMM has a block scale on " + std::string(x.scale.is_block() ? "X" : "W") + " \"" +
                         (x.scale.is_block() ? x.name : w.name) + "\" but not on " +
                         (x.scale.is_block() ? "W \"" + w.name : "X \"" + x.name) +
                         "\"; block scaling needs both operands block-scaled");
    if (x.scale.is_block() && x.scale.block != std::array<int64_t, 2>{1, 128})
      problems.push_back("GROUPED_GEMM X \"" + x.name + "\" has blocks " + shape_str({x.scale.block[0], x.scale.block[1]}) +
                         "; X takes [1,128] (one scale per row and 128 along K)");
    if (w.scale.is_block() && w.scale.block != std::array<int64_t, 2>{128, 128})
      problems.push_back("GROUPED_GEMM W \"" + w.name + "\" has blocks " + shape_str({w.scale.block[0], w.scale.block[1]}) +
                         "; W takes [128,128] (one scale per 128 x 128 block of each expert's weight)");
  } else if (x.dtype != w.dtype || !plain(x.dtype))
    problems.push_back("GROUPED_GEMM X \"" + x.name + "\" is " + std::string(dtype_name(x.dtype)) + " and W \"" + w.name +
                       "\" " + std::string(dtype_name(w.dtype)) + "; both must be one of f16, bf16, f32 (or both f8)");
  if (op.inputs.size() > 3 && !plain(g.tensor(op.inputs[3]).dtype))
    problems.push_back("GROUPED_GEMM bias \"" + g.tensor(op.inputs[3]).name + "\" is " +
                       std::string(dtype_name(g.tensor(op.inputs[3]).dtype)) + "; it must be f16, bf16 or f32");
  if (!plain(g.tensor(op.outputs[0]).dtype))
    problems.push_back("GROUPED_GEMM output \"" + g.tensor(op.outputs[0]).name + "\" is " +
                       std::string(dtype_name(g.tensor(op.outputs[0]).dtype)) + "; it must be f16, bf16 or f32");
  if (op.attrs.alpha != op.attrs.alpha || std::fabs(op.attrs.alpha) > 3.4028234663852886e38)
    problems.push_back("GROUPED_GEMM alpha must be a finite number within f32's range");
  return problems;
}

}  // namespace

// The collectives (graph-format.md, "Collectives"): one tensor in, one out, of one dtype; ALL_REDUCE
// keeps the shape, ALL_GATHER multiplies the axis by the ranks, REDUCE_SCATTER divides it.
static std::vector<std::string> check_collective(const Graph& g, const Op& op) {
  std::vector<std::string> problems;
  const std::string type(op_type_name(op.type));
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  const int32_t n = op.attrs.ranks;
  if (n < 1) problems.push_back(type + " ranks must be at least 1; found " + std::to_string(n));
  if (x.dtype != y.dtype || !(x.dtype == DType::f16 || x.dtype == DType::bf16 || x.dtype == DType::f32))
    problems.push_back(type + " reads \"" + x.name + "\" (" + std::string(dtype_name(x.dtype)) + ") and writes \"" +
                       y.name + "\" (" + std::string(dtype_name(y.dtype)) + "); both must be one of f16, bf16, f32");
  if (x.layout != Layout::rowmajor || y.layout != Layout::rowmajor)
    problems.push_back(type + " reads and writes rowmajor tensors only");
  if (!problems.empty()) return problems;
  if (op.type == OpType::ALL_REDUCE) {
    if (x.shape != y.shape)
      problems.push_back(type + " output must have the shape of X " + shape_str(x.shape) + "; Y is " + shape_str(y.shape));
    return problems;
  }
  const int32_t axis = op.attrs.axis;
  if (axis < 0 || axis >= x.rank()) {
    problems.push_back(type + " axis " + std::to_string(axis) + " is not an axis of X " + shape_str(x.shape) +
                       " (0 to " + std::to_string(x.rank() - 1) + ")");
    return problems;
  }
  // The whole tensor and one rank's slice of it.
  const Tensor& whole = op.type == OpType::ALL_GATHER ? y : x;
  const Tensor& slice = op.type == OpType::ALL_GATHER ? x : y;
  std::vector<int64_t> expect = slice.shape;
  expect[size_t(axis)] *= n;
  if (whole.shape != expect)
    problems.push_back(type + " over " + std::to_string(n) + " ranks along axis " + std::to_string(axis) + ": " +
                       (op.type == OpType::ALL_GATHER ? "X " : "Y ") + shape_str(slice.shape) + " needs " +
                       (op.type == OpType::ALL_GATHER ? "Y " : "X ") + shape_str(expect) + "; found " +
                       shape_str(whole.shape));
  return problems;
}

std::vector<std::string> check_op(const Graph& g, const Op& op) {
  std::vector<std::string> problems;
  const std::string type(op_type_name(op.type));
  const Arity ar = op_arity(op.type);
  const int nin = int(op.inputs.size()), nout = int(op.outputs.size());
  auto range = [](int lo, int hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + (hi == lo + 1 ? " or " : " to ") + std::to_string(hi);
  };
  if (nin < ar.min_inputs || nin > ar.max_inputs)
    problems.push_back(type + " takes " + range(ar.min_inputs, ar.max_inputs) + " inputs, has " + std::to_string(nin));
  if (nout < ar.outputs || nout > ar.most_outputs())
    problems.push_back(type + " writes " + range(ar.outputs, ar.most_outputs()) +
                       (ar.most_outputs() > 1 ? " outputs" : " output") + ", has " + std::to_string(nout));
  auto in_range = [&](TensorId t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); };
  for (TensorId t : op.inputs)
    if (!in_range(t)) problems.push_back(type + " reads tensor id " + std::to_string(t) + ", out of range");
  for (TensorId t : op.outputs)
    if (!in_range(t)) problems.push_back(type + " writes tensor id " + std::to_string(t) + ", out of range");
  if (!problems.empty()) return problems;
  // i32 is data for GROUPED_GEMM's offsets only: no other operand of any op reads or writes it.
  for (size_t k = 0; k < op.inputs.size(); ++k)
    if (g.tensor(op.inputs[k]).dtype == DType::i32 && !(op.type == OpType::GROUPED_GEMM && k == 2))
      problems.push_back(type + " reads \"" + g.tensor(op.inputs[k]).name +
                         "\", an i32 tensor; i32 is allowed only as GROUPED_GEMM's offsets (input 2)");
  for (TensorId t : op.outputs)
    if (g.tensor(t).dtype == DType::i32)
      problems.push_back(type + " writes \"" + g.tensor(t).name + "\", an i32 tensor; no op writes i32");
  if (!problems.empty()) return problems;

  switch (op.type) {
    case OpType::MATMUL:
    case OpType::GEMM_BIAS_ACT: {
      std::string why;
      if (!gemm_shape(g, op, &why)) problems.push_back(why);
      break;
    }
    case OpType::BIAS_ADD: {
      const Tensor& x = g.tensor(op.inputs[0]);
      const Tensor& b = g.tensor(op.inputs[1]);
      const Tensor& y = g.tensor(op.outputs[0]);
      const int64_t n = x.shape.empty() ? 0 : x.shape.back();
      if (b.rank() != 1 || b.shape[0] != n)
        problems.push_back("BIAS_ADD bias must be [" + std::to_string(n) + "] (the last dimension of X " +
                           shape_str(x.shape) + "); b is " + shape_str(b.shape));
      if (!same_shape(x, y))
        problems.push_back("BIAS_ADD output must have the shape of X " + shape_str(x.shape) + "; Y is " +
                           shape_str(y.shape));
      break;
    }
    case OpType::ADD:
    case OpType::SUB:
    case OpType::MUL:
    case OpType::DIV: {
      const Tensor& x = g.tensor(op.inputs[0]);
      const Tensor& y = g.tensor(op.inputs[nin - 1]);
      const Tensor& z = g.tensor(op.outputs[0]);
      if (std::string c = constant_problem(type, op.type, op.attrs.constant, op.inputs.size()); !c.empty())
        problems.push_back(std::move(c));
      else if (!same_shape(x, y))
        problems.push_back(type + " shapes disagree: X is " + shape_str(x.shape) + ", Y is " + shape_str(y.shape));
      if (!same_shape(x, z))
        problems.push_back(type + " output must have the shape of X " + shape_str(x.shape) + "; Z is " +
                           shape_str(z.shape));
      break;
    }
    case OpType::FUSED_ELEMENTWISE:
      for (std::string& p : check_group(g, op)) problems.push_back(std::move(p));
      break;
    case OpType::GROUPED_GEMM:
      for (std::string& p : check_grouped(g, op)) problems.push_back(std::move(p));
      break;
    case OpType::ALL_REDUCE:
    case OpType::ALL_GATHER:
    case OpType::REDUCE_SCATTER:
      for (std::string& p : check_collective(g, op)) problems.push_back(std::move(p));
      break;
    default: {  // the one-input elementwise ops (kGroupStepTypes): RELU, GELU, SILU, SIGMOID, TANH, ERF, POW, CAST
      if (std::string c = constant_problem(type, op.type, op.attrs.constant, 1); !c.empty())
        problems.push_back(std::move(c));
      const Tensor& x = g.tensor(op.inputs[0]);
      const Tensor& y = g.tensor(op.outputs[0]);
      if (!same_shape(x, y))
        problems.push_back(type + " output must have the shape of X " + shape_str(x.shape) + "; Y is " +
                           shape_str(y.shape));
      break;
    }
  }
  if (problems.empty())
    for (std::string& p : check_f8_op(g, op)) problems.push_back(std::move(p));
  return problems;
}

std::vector<std::string> verify(const Graph& g) {
  std::vector<std::string> problems;
  const size_t nt = g.tensors.size();
  auto in_range = [&](TensorId t) { return t >= 0 && static_cast<size_t>(t) < nt; };

  // `who` is built only for a problem: verify() runs after every pass, on every op.
  std::unordered_set<std::string_view> names;
  names.reserve(nt);
  for (const Tensor& t : g.tensors) {
    auto who = [&t] { return "tensor \"" + t.name + "\""; };
    if (!names.insert(t.name).second) problems.push_back(who() + " is declared twice");
    if (t.shape.empty() || t.shape.size() > 4)
      problems.push_back(who() + " has rank " + std::to_string(t.shape.size()) + "; ranks 1 to 4 are allowed");
    for (int64_t d : t.shape)
      if (d <= 0) problems.push_back(who() + " has a dimension that is not positive: " + shape_str(t.shape));
    if (t.layout == Layout::colmajor && t.rank() != 2)
      problems.push_back(who() + " is colmajor with rank " + std::to_string(t.rank()) + "; colmajor needs rank 2");
    if (!t.scale.is_default() || is_f8(t.dtype))
      for (const std::string& p : check_scale(t)) problems.push_back(who() + ": " + p);
    for (const std::string& p : check_block_scale(g, t)) problems.push_back(who() + ": " + p);
  }

  // An input not yet written when its reader runs is either a graph input or out of order.
  std::vector<OpId> first_writer(nt, kNone);
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (TensorId t : g.ops[i].outputs)
      if (in_range(t) && first_writer[size_t(t)] == kNone) first_writer[size_t(t)] = OpId(i);
  std::vector<OpId> writer(nt, kNone);
  std::unordered_set<std::string_view> op_names;
  op_names.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    auto who = [&op] { return "op " + op.name; };
    if (!op_names.insert(op.name).second) problems.push_back(who() + " is named twice");
    for (const std::string& p : check_op(g, op)) problems.push_back(who() + ": " + p);
    for (TensorId t : op_reads(g, op))
      if (in_range(t) && writer[size_t(t)] == kNone && first_writer[size_t(t)] != kNone)
        problems.push_back(who() + " reads \"" + g.tensor(t).name + "\" before op " +
                           g.ops[size_t(first_writer[size_t(t)])].name + " writes it");
    for (TensorId t : op.outputs) {
      if (!in_range(t)) continue;
      if (writer[size_t(t)] != kNone)
        problems.push_back(who() + " writes \"" + g.tensor(t).name + "\", already written by op " +
                           g.ops[size_t(writer[size_t(t)])].name);
      else
        writer[size_t(t)] = OpId(i);
    }
  }

  for (size_t t = 0; t < nt; ++t) {
    const Tensor& ten = g.tensors[t];
    if (writer[t] != kNone && ten.init)
      problems.push_back("tensor \"" + ten.name + "\" has an init but is written by op " +
                         g.ops[size_t(writer[t])].name);
    if (writer[t] != kNone && ten.constant && !g.ops[size_t(writer[t])].hoisted)
      problems.push_back("tensor \"" + ten.name + "\" is constant but written in every run by op " +
                         g.ops[size_t(writer[t])].name);
    if (ten.init && (ten.init->kind == InitKind::values || ten.init->kind == InitKind::file) &&
        int64_t(ten.init->values.size()) != ten.numel())
      problems.push_back("tensor \"" + ten.name + "\" has " + std::to_string(ten.init->values.size()) +
                         " initial values for " + std::to_string(ten.numel()) + " elements");
  }

  for (TensorId t : g.outputs) {
    if (!in_range(t))
      problems.push_back("output id " + std::to_string(t) + " is out of range");
    else if (writer[size_t(t)] == kNone)
      problems.push_back("output \"" + g.tensor(t).name + "\" is not written by any op");
  }
  return problems;
}

void drop_unused_tensors(Graph& g) {
  const GraphIndex idx(g);
  std::vector<TensorId> remap(g.tensors.size(), kNone);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (idx.producer[t] == kNone && idx.consumers[t].empty() && !idx.is_output[t]) continue;
    remap[t] = TensorId(kept.size());
    kept.push_back(std::move(g.tensors[t]));
  }
  g.tensors = std::move(kept);
  auto fix = [&](std::vector<TensorId>& ids) {
    for (TensorId& id : ids)
      if (id >= 0 && static_cast<size_t>(id) < remap.size()) id = remap[size_t(id)];
  };
  for (Op& op : g.ops) {
    fix(op.inputs);
    fix(op.outputs);
  }
  fix(g.outputs);
  for (Tensor& t : g.tensors)
    if (t.scale.tensor >= 0 && size_t(t.scale.tensor) < remap.size()) t.scale.tensor = remap[size_t(t.scale.tensor)];
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace gexec
