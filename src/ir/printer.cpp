// The stable text form of a graph.
//
// Rules, so that golden files stay stable:
//   graph NAME
//   seed N                                   (only when the graph has a seed)
//   tensor NAME SHAPE DTYPE [colmajor] [constant] [scale=S | scale@AXIS(COUNT) | scale=block[BR,BC]:S] [input INIT]
//       the scale only where it is not the default 1; per-axis scales give their count.
//       "input" marks tensors that no op writes; INIT is the effective initialisation:
//       normal(mean,std), uniform(low,high), zeros, ones, values(COUNT) or file("PATH").
//   op NAME = TYPE(IN, IN) -> OUT {ATTRS} [hoisted]
//       ATTRS lists, in the order trans_a, trans_b, alpha, act, approximate, scalar | exponent, mnk, fast_accum, residual,
//       beta, only the attributes the op type reads and whose value differs from the default; on
//       GEMM_BIAS_ACT and GROUPED_GEMM, act is always shown and mnk whenever it is set. "{}" is left out.
//       FUSED_ELEMENTWISE shows steps=[%3=SILU(%0)f32; %4=MUL(%3, %1)f16; %5=POW(%4, 2)f16]
//       results=[%5], the values numbered inputs first, a step's constant after its values.
//   outputs NAME, NAME
// Numbers use the shortest text that reads back to the same double.
#include "gexec/ir/printer.hpp"

#include <charconv>

namespace gexec {
namespace {

std::string num(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string init_str(const Init& in) {
  switch (in.kind) {
    case InitKind::normal: return "normal(" + num(in.mean) + "," + num(in.std) + ")";
    case InitKind::uniform: return "uniform(" + num(in.low) + "," + num(in.high) + ")";
    case InitKind::zeros: return "zeros";
    case InitKind::ones: return "ones";
    case InitKind::values: return "values(" + std::to_string(in.values.size()) + ")";
    case InitKind::file: return "file(\"" + in.file + "\")";
  }
  return "?";
}

std::string name_of(const Graph& g, TensorId t) {
  if (t < 0 || static_cast<size_t>(t) >= g.tensors.size()) return "<id " + std::to_string(t) + ">";
  return g.tensor(t).name;
}

std::string name_list(const Graph& g, const std::vector<TensorId>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + name_of(g, ids[i]);
  return s;
}

std::string attrs_str(const Op& op) {
  const Attrs def;
  const Attrs& a = op.attrs;
  const bool gemm = op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT;
  std::vector<std::string> parts;
  if (gemm && a.trans_a != def.trans_a) parts.push_back("trans_a=true");
  const bool grouped = op.type == OpType::GROUPED_GEMM;
  if ((gemm || grouped) && a.trans_b != def.trans_b) parts.push_back("trans_b=true");
  if ((gemm || grouped) && a.alpha != def.alpha) parts.push_back("alpha=" + num(a.alpha));
  if (op.type == OpType::GEMM_BIAS_ACT || grouped) parts.push_back("act=" + std::string(act_name(a.act)));
  if (op.type == OpType::GELU && a.approximate != def.approximate)
    parts.push_back("approximate=" + std::string(gelu_approx_name(a.approximate)));
  if (a.constant) parts.push_back(std::string(constant_key(op.type)) + "=" + num(*a.constant));
  if (is_collective(op.type)) parts.push_back("ranks=" + std::to_string(a.ranks));
  if (op.type == OpType::ALL_GATHER || op.type == OpType::REDUCE_SCATTER) parts.push_back("axis=" + std::to_string(a.axis));
  if (op.type == OpType::GEMM_BIAS_ACT && a.mnk)
    parts.push_back("mnk=[" + std::to_string((*a.mnk)[0]) + "," + std::to_string((*a.mnk)[1]) + "," +
                    std::to_string((*a.mnk)[2]) + "]");
  if (gemm && a.fast_accum) parts.push_back("fast_accum=true");
  if (op.type == OpType::GEMM_BIAS_ACT && a.residual) parts.push_back("residual=true");
  if (op.type == OpType::GEMM_BIAS_ACT && a.beta != def.beta) parts.push_back("beta=" + num(a.beta));
  if (op.type == OpType::FUSED_ELEMENTWISE) {
    // %N numbers the values: the inputs first, then the steps.
    const size_t nin = op.inputs.size();
    std::string steps = "steps=[";
    for (size_t i = 0; i < a.steps.size(); ++i) {
      const GroupStep& st = a.steps[i];
      steps += (i ? "; " : "") + std::string("%") + std::to_string(nin + i) + "=" + std::string(op_type_name(st.type)) + "(";
      for (size_t j = 0; j < st.args.size(); ++j) steps += (j ? ", %" : "%") + std::to_string(st.args[j]);
      if (st.constant) steps += ", " + num(*st.constant);
      steps += ")" + std::string(dtype_name(st.dtype));
      if (st.type == OpType::GELU && st.approximate != GeluApprox::tanh) steps += " erf";
    }
    std::string res = "results=[";
    for (size_t i = 0; i < a.results.size(); ++i) res += (i ? ", %" : "%") + std::to_string(a.results[i]);
    parts.push_back(steps + "]");
    parts.push_back(res + "]");
  }
  if (parts.empty()) return "";
  std::string s = " {";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + "}";
}

}  // namespace

std::string print_graph(const Graph& g) {
  const GraphIndex idx(g);
  std::string out = "graph " + g.name + "\n";
  if (g.seed) out += "seed " + std::to_string(*g.seed) + "\n";
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    out += "tensor " + t.name + " " + shape_str(t.shape) + " " + std::string(dtype_name(t.dtype));
    if (t.layout == Layout::colmajor) out += " colmajor";
    if (t.constant) out += " constant";
    if (t.scale.is_block())
      out += " scale=block" + shape_str({t.scale.block[0], t.scale.block[1]}) + ":" +
             (t.scale.tensor >= 0 ? g.tensor(t.scale.tensor).name : std::string("?"));
    else if (!t.scale.is_default())
      out += t.scale.axis < 0 ? " scale=" + num(t.scale.values[0])
                              : " scale@" + std::to_string(t.scale.axis) + "(" + std::to_string(t.scale.values.size()) + ")";
    if (idx.producer[i] == kNone) out += " input " + init_str(t.init.value_or(Init{}));
    out += "\n";
  }
  for (const Op& op : g.ops) {
    out += "op " + op.name + " = " + std::string(op_type_name(op.type)) + "(" + name_list(g, op.inputs) +
           ") -> " + name_list(g, op.outputs) + attrs_str(op);
    if (op.hoisted) out += " hoisted";
    out += "\n";
  }
  out += "outputs " + name_list(g, g.outputs) + "\n";
  return out;
}

}  // namespace gexec
