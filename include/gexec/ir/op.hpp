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

// New values go at the end: a FUSED_ELEMENTWISE program carries the value as a byte.
enum class OpType : uint8_t {
  MATMUL, BIAS_ADD, ADD, RELU, GELU, CAST, GEMM_BIAS_ACT, MUL, SILU, FUSED_ELEMENTWISE,
  SUB, DIV, SIGMOID, TANH, ERF, POW, GROUPED_GEMM, ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER
};

// Input and output counts allowed per op type. max_outputs 0 means exactly `outputs`; products
// and CAST take a second output, the amax of an f8 result (graph-format.md).
struct Arity {
  int min_inputs, max_inputs, outputs;
  int max_outputs = 0;  // more than `outputs` allowed up to this (FUSED_ELEMENTWISE); 0: exactly `outputs`
  int most_outputs() const { return max_outputs > outputs ? max_outputs : outputs; }
};
// FUSED_ELEMENTWISE's limits: what one kernel launch carries in its parameters.
constexpr int kGroupMaxInputs = 8, kGroupMaxOutputs = 4, kGroupMaxSteps = 16;

// One row per op type: its name in the format and its input/output counts, read by the loader,
// the printer, verify() and the tests. The order is the one the loader's messages list them in.
struct OpTypeInfo {
  OpType type;
  std::string_view name;
  Arity arity;
};
inline constexpr OpTypeInfo kOpTypes[] = {
    {OpType::MATMUL, "MATMUL", {2, 2, 1, 2}},
    {OpType::BIAS_ADD, "BIAS_ADD", {2, 2, 1}},
    {OpType::ADD, "ADD", {1, 2, 1}},  // one input with attrs.scalar (takes_constant)
    {OpType::SUB, "SUB", {1, 2, 1}},
    {OpType::MUL, "MUL", {1, 2, 1}},
    {OpType::DIV, "DIV", {1, 2, 1}},
    {OpType::RELU, "RELU", {1, 1, 1}},
    {OpType::GELU, "GELU", {1, 1, 1}},
    {OpType::SILU, "SILU", {1, 1, 1}},
    {OpType::SIGMOID, "SIGMOID", {1, 1, 1}},
    {OpType::TANH, "TANH", {1, 1, 1}},
    {OpType::ERF, "ERF", {1, 1, 1}},
    {OpType::POW, "POW", {1, 1, 1}},  // attrs.exponent, a constant
    {OpType::CAST, "CAST", {1, 1, 1, 2}},
    {OpType::GEMM_BIAS_ACT, "GEMM_BIAS_ACT", {2, 4, 1, 2}},
    {OpType::FUSED_ELEMENTWISE, "FUSED_ELEMENTWISE", {1, kGroupMaxInputs, 1, kGroupMaxOutputs}},
    {OpType::GROUPED_GEMM, "GROUPED_GEMM", {3, 4, 1}},  // X, W, offsets (i32), optionally a bias [G, N]
    // The collectives of a tensor-parallel rank's program (docs/distributed.md): attrs ranks, axis.
    {OpType::ALL_REDUCE, "ALL_REDUCE", {1, 1, 1}},
    {OpType::ALL_GATHER, "ALL_GATHER", {1, 1, 1}},
    {OpType::REDUCE_SCATTER, "REDUCE_SCATTER", {1, 1, 1}},
};
inline constexpr auto kAllOpTypes = [] {
  std::array<OpType, std::size(kOpTypes)> all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = kOpTypes[i].type;
  return all;
}();

// The op types a FUSED_ELEMENTWISE step may compute (graph-format.md, "Fused elementwise groups"):
// the elementwise ops. An op type listed here is elementwise everywhere: verify() requires its
// output to have its first input's shape, the reference computes it through ref_math.hpp's
// elementwise(), a generic kernel case of the backend-ops harness covers it, and its work is one
// flop per element (CAST none).
inline constexpr std::array kGroupStepTypes = {OpType::ADD,     OpType::SUB,  OpType::MUL, OpType::DIV,
                                               OpType::BIAS_ADD, OpType::RELU, OpType::GELU, OpType::SILU,
                                               OpType::SIGMOID,  OpType::TANH, OpType::ERF,  OpType::POW,
                                               OpType::CAST};
bool is_group_step_type(OpType t);  // listed in kGroupStepTypes
// ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER: ops between the ranks of a sharded run, which only a
// sharded run (--tp) executes and which the reference of a graph as written has no meaning for.
bool is_collective(OpType t);

// The ops that combine two values (x op y): ADD, SUB, MUL, DIV with a second input or, written as
// attrs.scalar, a constant y (then one input); BIAS_ADD always with its bias input.
bool is_binary_type(OpType t);
// The ops that take a constant operand (Attrs::constant): ADD, SUB, MUL, DIV (`scalar`, optional)
// and POW (`exponent`, required).
bool takes_constant(OpType t);
// The number of value operands (inputs, or a step's args) an op reads given whether it has a constant.
inline size_t operand_count(OpType t, bool has_constant) { return is_binary_type(t) && !has_constant ? 2 : 1; }
// The format's name of the constant: "scalar" or "exponent" (POW).
std::string_view constant_key(OpType t);

// gelu is the tanh form, as cuBLASLt computes it; gelu_erf the exact erf form (BERT's, which
// cuBLASLt's epilogues lack); silu x * sigmoid(x).
enum class Act : uint8_t { none, relu, gelu, silu, gelu_erf };
enum class GeluApprox : uint8_t { tanh, none };  // none: the exact erf form

std::string_view op_type_name(OpType t);
std::optional<OpType> parse_op_type(std::string_view s);
std::string_view act_name(Act a);
std::optional<Act> parse_act(std::string_view s);
std::string_view gelu_approx_name(GeluApprox a);
std::optional<GeluApprox> parse_gelu_approx(std::string_view s);

// One step of a FUSED_ELEMENTWISE group: an elementwise op over earlier values, rounded to `dtype`.
// Values are numbered: the group's inputs first (0 .. inputs-1), then the steps in order.
struct GroupStep {
  OpType type = OpType::ADD;
  std::vector<int32_t> args;                  // value numbers, each below this step's own
  DType dtype = DType::f32;                   // the dtype the step's result is rounded to
  GeluApprox approximate = GeluApprox::tanh;  // GELU
  std::optional<double> constant;             // as Attrs::constant
  bool operator==(const GroupStep&) const = default;
};

// The union of every op type's attributes; each type reads only its own (graph-format.md).
struct Attrs {
  bool trans_a = false, trans_b = false;         // MATMUL, GEMM_BIAS_ACT; GROUPED_GEMM trans_b
  double alpha = 1.0;                            // MATMUL, GEMM_BIAS_ACT, GROUPED_GEMM
  Act act = Act::none;                           // GEMM_BIAS_ACT (not silu), GROUPED_GEMM
  GeluApprox approximate = GeluApprox::tanh;     // GELU
  // The constant operand (takes_constant): ADD/SUB/MUL/DIV's second operand y, written as
  // `scalar` (the op then has one input); POW's exponent, written as `exponent`. The kernels
  // compute with it as an f32 (its nearest), and so does the reference (ref_math.hpp).
  std::optional<double> constant;
  std::optional<std::array<int64_t, 3>> mnk;    // GEMM_BIAS_ACT: [M, N, K] as written
  bool fast_accum = false;                       // MATMUL, GEMM_BIAS_ACT with f8 inputs
  bool residual = false;                         // GEMM_BIAS_ACT: the last input R is added (times beta)
  double beta = 1.0;                             // GEMM_BIAS_ACT with residual
  std::vector<GroupStep> steps;                  // FUSED_ELEMENTWISE
  std::vector<int32_t> results;                  // FUSED_ELEMENTWISE: per output, the value it writes
  int32_t ranks = 1;                             // collectives: the ranks of the run (N)
  int32_t axis = 0;                              // ALL_GATHER, REDUCE_SCATTER: the axis cut into N slices
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

// The values a group the passes make may hold at once (inputs loaded at their first reader,
// results kept until their last): what the CUDA kernel keeps in registers (fused_program.hpp).
constexpr int kGroupMaxLive = 6;
Arity op_arity(OpType t);  // kOpTypes's row

}  // namespace gexec
