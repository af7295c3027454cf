// Names of op types, activations and GELU forms, and the input/output counts of each op type.
#include "gexec/ir/op.hpp"

namespace gexec {

std::string_view op_type_name(OpType t) {
  switch (t) {
    case OpType::MATMUL: return "MATMUL";
    case OpType::BIAS_ADD: return "BIAS_ADD";
    case OpType::ADD: return "ADD";
    case OpType::RELU: return "RELU";
    case OpType::GELU: return "GELU";
    case OpType::CAST: return "CAST";
    case OpType::GEMM_BIAS_ACT: return "GEMM_BIAS_ACT";
    case OpType::MUL: return "MUL";
    case OpType::SILU: return "SILU";
    case OpType::FUSED_ELEMENTWISE: return "FUSED_ELEMENTWISE";
  }
  return "?";
}

bool is_group_step_type(OpType t) {
  switch (t) {
    case OpType::ADD:
    case OpType::MUL:
    case OpType::BIAS_ADD:
    case OpType::RELU:
    case OpType::GELU:
    case OpType::SILU:
    case OpType::CAST: return true;
    default: return false;
  }
}

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
  }
  return "?";
}

std::optional<Act> parse_act(std::string_view s) {
  for (Act a : {Act::none, Act::relu, Act::gelu})
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
  switch (t) {
    case OpType::MATMUL: return {2, 2, 1, 2};
    case OpType::BIAS_ADD:
    case OpType::ADD:
    case OpType::MUL: return {2, 2, 1};
    case OpType::RELU:
    case OpType::GELU:
    case OpType::SILU: return {1, 1, 1};
    case OpType::CAST: return {1, 1, 1, 2};
    case OpType::GEMM_BIAS_ACT: return {2, 4, 1, 2};
    case OpType::FUSED_ELEMENTWISE: return {1, kGroupMaxInputs, 1, kGroupMaxOutputs};
  }
  return {0, 0, 0};
}

}  // namespace gexec
