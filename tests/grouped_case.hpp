// GROUPED_GEMM graphs for the tests of both backends: shapes, routing, dtypes and epilogues.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "unit/graph_builder.hpp"

namespace gexec::test {

struct GroupedCase {
  int64_t tokens = 40, k = 24, n = 32;
  std::vector<double> ends = {7, 7, 30, 37};  // G = 4, one empty group, rows 37..39 owned by none
  bool trans_b = false, bias = true;
  Act act = Act::none;
  double alpha = 1.0;
  DType in = DType::f16, out = DType::f16, bias_dtype = DType::f32;
  std::optional<DType> w_dtype;            // W's, where it differs from X's (f8e4m3 x f8e5m2)
  double x_scale = 1.0, w_scale = 1.0;     // f8 operands' tensor-wise scales
  std::string describe() const {
    std::string s = "T " + std::to_string(tokens) + " K " + std::to_string(k) + " N " + std::to_string(n) + " G " +
                    std::to_string(ends.size()) + " " + std::string(dtype_name(in)) + "->" +
                    std::string(dtype_name(out)) + " act " + std::string(act_name(act));
    if (w_dtype) s += " W " + std::string(dtype_name(*w_dtype));
    if (is_f8(in)) s += " scales " + std::to_string(x_scale) + " " + std::to_string(w_scale);
    return s + (trans_b ? " trans_b" : "") + (bias ? " bias" : "");
  }
};

// Y = GROUPED_GEMM(X, W, offsets[, bias]) with the offsets as values, Y the output.
inline Graph grouped_graph(const GroupedCase& c) {
  Builder b;
  const int64_t groups = int64_t(c.ends.size());
  const TensorId x = b.tensor("X", {c.tokens, c.k}, c.in);
  const TensorId w = b.tensor("W", c.trans_b ? std::vector<int64_t>{groups, c.n, c.k} : std::vector<int64_t>{groups, c.k, c.n},
                              c.w_dtype.value_or(c.in));
  if (is_f8(c.in)) {
    b.g.tensors[size_t(x)].scale.values = {c.x_scale};
    b.g.tensors[size_t(w)].scale.values = {c.w_scale};
  }
  const TensorId off = b.tensor("offsets", {groups}, DType::i32);
  Init init;
  init.kind = InitKind::values;
  init.values = SharedValues(c.ends);
  b.g.tensors[size_t(off)].init = init;
  std::vector<TensorId> in = {x, w, off};
  if (c.bias) in.push_back(b.tensor("bias", {groups, c.n}, c.bias_dtype));
  const TensorId y = b.tensor("Y", {c.tokens, c.n}, c.out);
  Op& op = b.op(OpType::GROUPED_GEMM, in, y);
  op.attrs.trans_b = c.trans_b;
  op.attrs.act = c.act;
  op.attrs.alpha = c.alpha;
  b.g.outputs = {y};
  return b.g;
}

// The cases both backends run: every dtype pair, both W layouts, each activation, uneven and
// empty groups, unowned tail rows, one group, a row tile's edge.
inline std::vector<GroupedCase> grouped_cases() {
  std::vector<GroupedCase> cases;
  for (DType in : {DType::f16, DType::bf16})
    for (DType out : {DType::f16, DType::bf16, DType::f32})
      for (bool tb : {false, true}) {
        GroupedCase c;
        c.in = in, c.out = out, c.trans_b = tb;
        cases.push_back(c);
      }
  for (Act a : {Act::relu, Act::gelu, Act::silu}) {
    GroupedCase c;
    c.act = a, c.alpha = 0.5, c.bias_dtype = DType::bf16;
    cases.push_back(c);
  }
  GroupedCase one;  // one group owning every row, no bias, more rows than a tile, K over several steps
  one.tokens = 300, one.k = 136, one.n = 264, one.ends = {300}, one.bias = false, one.in = DType::bf16;
  cases.push_back(one);
  GroupedCase many;  // many groups, most empty or of one row
  many.tokens = 70, many.k = 64, many.n = 40, many.trans_b = true;
  many.ends.clear();
  for (int g = 0; g < 33; ++g) many.ends.push_back(g < 10 ? g : g < 20 ? 10 : std::min(70, 10 + (g - 19) * 4));
  cases.push_back(many);
  for (bool tb : {false, true}) {  // f8 operands with tensor-wise scales
    GroupedCase f8;
    f8.in = DType::f8e4m3, f8.out = DType::bf16, f8.trans_b = tb, f8.x_scale = 0.5, f8.w_scale = 0.125;
    if (tb) f8.w_dtype = DType::f8e5m2, f8.act = Act::silu;
    cases.push_back(f8);
  }
  GroupedCase none;  // every group empty: Y is all zeros
  none.ends = {0, 0};
  cases.push_back(none);
  return cases;
}

// An edit for run_case: the reference reads these offsets instead of the ones the kernel read.
inline auto with_offsets(std::vector<int32_t> ends) {
  return [ends](std::map<std::string, std::vector<uint8_t>>& in) {
    std::vector<uint8_t>& b = in.at("offsets");
    b.assign(reinterpret_cast<const uint8_t*>(ends.data()), reinterpret_cast<const uint8_t*>(ends.data() + ends.size()));
  };
}

}  // namespace gexec::test
