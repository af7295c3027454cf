// The ONNX ops gexec maps, each with the first opset at which its mapping holds, the attributes it
// reads, and its mapping function (docs/onnx.md's table says what each becomes).
#include "context.hpp"

namespace gexec::onnx_import {

const std::vector<OpEntry>& op_table() {
  // Each op's versions from opset 13 to 21 differ only in the types they admit and in attributes
  // they added (Reshape's allowzero from 14, Shape's start and end from 15, saturate from 19),
  // so one entry covers them.
  static const std::vector<OpEntry> table = {
      {"Add", 13, 2, 2, {}, map_add},
      {"Cast", 13, 1, 1, {{"to"}, {"saturate", 19}}, map_cast},
      {"CastLike", 15, 2, 2, {{"saturate", 19}}, map_castlike},
      {"Concat", 13, 1, OpEntry::kUnbounded, {{"axis"}}, map_concat},
      {"Constant", 13, 0, 0, {{"value"}, {"value_float"}, {"value_floats"}, {"value_int"}, {"value_ints"}}, map_constant},
      {"Div", 13, 2, 2, {}, map_div},
      {"Erf", 13, 1, 1, {}, map_erf},
      {"Flatten", 13, 1, 1, {{"axis"}}, map_flatten},
      {"Gather", 13, 2, 2, {{"axis"}}, map_gather},
      {"Gelu", 20, 1, 1, {{"approximate", 20}}, map_gelu},
      {"Gemm", 13, 2, 3, {{"alpha"}, {"beta"}, {"transA"}, {"transB"}}, map_gemm},
      {"Identity", 13, 1, 1, {}, map_identity},
      {"MatMul", 13, 2, 2, {}, map_matmul},
      {"Mul", 13, 2, 2, {}, map_mul},
      {"Pow", 13, 2, 2, {}, map_pow},
      {"Relu", 13, 1, 1, {}, map_relu},
      {"Reshape", 13, 2, 2, {{"allowzero", 14}}, map_reshape},
      {"Shape", 13, 1, 1, {{"start", 15}, {"end", 15}}, map_shape},
      {"Sigmoid", 13, 1, 1, {}, map_sigmoid},
      {"Slice", 13, 3, 5, {}, map_slice},
      {"Squeeze", 13, 1, 2, {}, map_squeeze},
      {"Sub", 13, 2, 2, {}, map_sub},
      {"Tanh", 13, 1, 1, {}, map_tanh},
      {"Transpose", 13, 1, 1, {{"perm"}}, map_transpose},
      {"Unsqueeze", 13, 2, 2, {}, map_unsqueeze},
  };
  return table;
}

const OpEntry* find_op(std::string_view op) {
  for (const OpEntry& e : op_table())
    if (e.op == op) return &e;
  return nullptr;
}

}  // namespace gexec::onnx_import
