// An op of the graph: its type, the tensors it reads and writes, and its attributes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/tensor.hpp"

namespace gexec {

enum class OpType : uint8_t { MATMUL, BIAS_ADD, ADD, RELU, GELU, CAST, GEMM_BIAS_ACT };
inline constexpr std::array kAllOpTypes = {OpType::MATMUL, OpType::BIAS_ADD, OpType::ADD,  OpType::RELU,
                                           OpType::GELU,   OpType::CAST,     OpType::GEMM_BIAS_ACT};

enum class Act : uint8_t { none, relu, gelu };  // gelu is the tanh form, as cuBLASLt computes it
enum class GeluApprox : uint8_t { tanh, none };  // none: the exact erf form

std::string_view op_type_name(OpType t);
std::optional<OpType> parse_op_type(std::string_view s);
std::string_view act_name(Act a);
std::optional<Act> parse_act(std::string_view s);
std::string_view gelu_approx_name(GeluApprox a);
std::optional<GeluApprox> parse_gelu_approx(std::string_view s);

// The union of every op type's attributes; each type reads only its own (graph-format.md).
struct Attrs {
  bool trans_a = false, trans_b = false;         // MATMUL, GEMM_BIAS_ACT
  double alpha = 1.0;                            // MATMUL, GEMM_BIAS_ACT
  Act act = Act::none;                           // GEMM_BIAS_ACT
  GeluApprox approximate = GeluApprox::tanh;     // GELU
  std::optional<std::array<int64_t, 3>> mnk;    // GEMM_BIAS_ACT: [M, N, K] as written
  bool fast_accum = false;                       // MATMUL, GEMM_BIAS_ACT with f8 inputs
  bool operator==(const Attrs&) const = default;
};

struct Op {
  std::string name;
  OpType type = OpType::MATMUL;
  std::vector<TensorId> inputs, outputs;
  Attrs attrs;
  // Set by passes for ops whose inputs are all constant: the executor runs them once,
  // before the runs, instead of in every run.
  bool hoisted = false;
  bool operator==(const Op&) const = default;
};

// Input and output counts allowed per op type. max_outputs 0 means exactly `outputs`; products
// and CAST take a second output, the amax of an f8 result (graph-format.md).
struct Arity {
  int min_inputs, max_inputs, outputs;
  int max_outputs = 0;
  int most_outputs() const { return max_outputs > outputs ? max_outputs : outputs; }
};
Arity op_arity(OpType t);

}  // namespace gexec
