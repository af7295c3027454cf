// The ONNX ops gexec maps, each with the first opset at which its mapping holds, the attributes it
// reads, and its mapping function (docs/onnx.md's table says what each becomes).
#include "context.hpp"

namespace gexec::onnx_import {

const std::vector<OpEntry>& op_table() {
  // Each op's versions from opset 13 to 21 differ only in the types they admit (and Reshape's
  // allowzero from 14, Cast's saturate from 19, which the mappings read), so one entry covers them.
  static const std::vector<OpEntry> table = {
      {"Add", 13, {}, map_add},
      {"Cast", 13, {"to", "saturate"}, map_cast},
      {"CastLike", 15, {"saturate"}, map_castlike},
      {"Concat", 13, {"axis"}, map_concat},
      {"Constant", 13, {"value", "value_float", "value_floats", "value_int", "value_ints"}, map_constant},
      {"Div", 13, {}, map_div},
      {"Erf", 13, {}, map_erf},
      {"Flatten", 13, {"axis"}, map_flatten},
      {"Gather", 13, {"axis"}, map_gather},
      {"Gelu", 20, {"approximate"}, map_gelu},
      {"Gemm", 13, {"alpha", "beta", "transA", "transB"}, map_gemm},
      {"Identity", 13, {}, map_identity},
      {"MatMul", 13, {}, map_matmul},
      {"Mul", 13, {}, map_mul},
      {"Pow", 13, {}, map_pow},
      {"Relu", 13, {}, map_relu},
      {"Reshape", 13, {"allowzero"}, map_reshape},
      {"Shape", 13, {"start", "end"}, map_shape},
      {"Sigmoid", 13, {}, map_sigmoid},
      {"Slice", 13, {}, map_slice},
      {"Squeeze", 13, {}, map_squeeze},
      {"Sub", 13, {}, map_sub},
      {"Tanh", 13, {}, map_tanh},
      {"Transpose", 13, {"perm"}, map_transpose},
      {"Unsqueeze", 13, {}, map_unsqueeze},
  };
  return table;
}

const OpEntry* find_op(std::string_view op) {
  for (const OpEntry& e : op_table())
    if (e.op == op) return &e;
  return nullptr;
}

}  // namespace gexec::onnx_import
