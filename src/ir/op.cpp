// Names of op types (kOpTypes), activations and GELU forms; the input/output counts of each op type.
#include "gexec/ir/op.hpp"

namespace gexec {

std::string_view op_type_name(OpType t) {
  for (const OpTypeInfo& row : kOpTypes)
    if (row.type == t) return row.name;
  return "?";
}

bool is_group_step_type(OpType t) {
  for (OpType s : kGroupStepTypes)
    if (s == t) return true;
  return false;
}

bool is_collective(OpType t) {
  return t == OpType::ALL_REDUCE || t == OpType::ALL_GATHER || t == OpType::REDUCE_SCATTER;
}

bool is_binary_type(OpType t) {
  return t == OpType::ADD || t == OpType::SUB || t == OpType::MUL || t == OpType::DIV || t == OpType::BIAS_ADD;
}

bool takes_constant(OpType t) {
  return t == OpType::ADD || t == OpType::SUB || t == OpType::MUL || t == OpType::DIV || t == OpType::POW;
}

std::string_view constant_key(OpType t) { return t == OpType::POW ? "exponent" : "scalar"; }

std::optional<OpType> parse_op_type(std::string_view s) {
  for (OpType t : kAllOpTypes)
    if (s == op_type_name(t)) return t;
  return std::nullopt;
}

std::string_view act_name(Act a) {
  switch (a) {
    case Act::none: return "none";
    case Act::relu: return "relu";
    case Act::gelu: return "gelu";
    case Act::silu: return "silu";
    case Act::gelu_erf: return "gelu_erf";
  }
  return "?";
}

std::optional<Act> parse_act(std::string_view s) {
  for (Act a : {Act::none, Act::relu, Act::gelu, Act::gelu_erf, Act::silu})
    if (s == act_name(a)) return a;
  return std::nullopt;
}

std::string_view gelu_approx_name(GeluApprox a) { return a == GeluApprox::tanh ? "tanh" : "none"; }

std::optional<GeluApprox> parse_gelu_approx(std::string_view s) {
  for (GeluApprox a : {GeluApprox::tanh, GeluApprox::none})
    if (s == gelu_approx_name(a)) return a;
  return std::nullopt;
}

Arity op_arity(OpType t) {
  for (const OpTypeInfo& row : kOpTypes)
    if (row.type == t) return row.arity;
  return {0, 0, 0};
}

}  // namespace gexec
