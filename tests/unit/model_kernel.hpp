// A plain f32 "device" for the check's tests: the graph as written, op by op, f32 accumulation
// in ascending k, each result rounded to its dtype; optionally with a seeded wrong-result
// pattern in the product that feeds the first output (the mutation suite), or with TF32 inputs.
// It shares no code with the reference; it reads and writes tensors in logical (C) order.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/graph.hpp"

namespace gexec::test {

enum class Fault { none, drop_k, acc_in_output_dtype, bias_wrong_column, scale_output };

struct ModelOptions {
  Fault fault = Fault::none;
  double scale = 1.0;   // Fault::scale_output: the output's value times this, before its rounding
  bool tf32 = false;    // round f32 operands to 11 significant bits first
};

inline float round_dtype(DType t, float v) {
  switch (t) {
    case DType::f16: return f16_to_float(float_to_f16(v));
    case DType::bf16: return bf16_to_float(float_to_bf16(v));
    case DType::f32: return v;
  }
  return v;
}

inline float round_tf32(float v) {
  uint32_t b = bits_from_f32(v);
  b = (b + 0xfffu + ((b >> 13) & 1u)) & ~0x1fffu;  // nearest even, 10 stored mantissa bits
  return f32_from_bits(b);
}

// The op whose result becomes the first output, through elementwise ops: the faulted product.
inline int faulted_product(const Graph& g) {
  TensorId t = g.outputs.at(0);
  for (;;) {
    int producer = -1;
    for (size_t o = 0; o < g.ops.size(); ++o)
      if (g.ops[o].outputs[0] == t) producer = int(o);
    if (producer < 0) return -1;
    const Op& op = g.ops[size_t(producer)];
    if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT) return producer;
    t = op.inputs[0];
  }
}

// Whether the faulted product's result reaches a bias (its epilogue, or a BIAS_ADD after it).
inline bool has_bias_after_product(const Graph& g) {
  const int p = faulted_product(g);
  if (p < 0) return false;
  if (g.ops[size_t(p)].type == OpType::GEMM_BIAS_ACT && g.ops[size_t(p)].inputs.size() > 2) return true;
  for (const Op& op : g.ops)
    if (op.type == OpType::BIAS_ADD && op.inputs[0] == g.ops[size_t(p)].outputs[0]) return true;
  return false;
}

inline std::map<std::string, std::vector<float>> run_model(const Graph& g,
                                                           const std::map<std::string, std::vector<float>>& inputs,
                                                           const ModelOptions& mo = {}) {
  std::map<std::string, std::vector<float>> vals = inputs;
  const int fp = faulted_product(g);
  const TensorId out0 = g.outputs.at(0);
  const TensorId fp_out = fp >= 0 ? g.ops[size_t(fp)].outputs[0] : kNone;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    const Tensor& y = g.tensor(op.outputs[0]);
    const bool faulted = int(o) == fp;
    const bool final_op = op.outputs[0] == out0;
    std::vector<float> r(size_t(y.numel()));
    const std::vector<float>& x = vals.at(g.tensor(op.inputs[0]).name);
    if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT) {
      const GemmShape s = *gemm_shape(g, op);
      const std::vector<float>& b = vals.at(g.tensor(op.inputs[1]).name);
      const bool ta32 = mo.tf32 && g.tensor(op.inputs[0]).dtype == DType::f32;
      const bool tb32 = mo.tf32 && g.tensor(op.inputs[1]).dtype == DType::f32;
      const std::vector<float>* bias = op.type == OpType::GEMM_BIAS_ACT && op.inputs.size() > 2
                                           ? &vals.at(g.tensor(op.inputs[2]).name) : nullptr;
      const int64_t kend = faulted && mo.fault == Fault::drop_k ? s.k - 1 : s.k;
      for (int64_t e = 0; e < s.batch; ++e)
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < s.n; ++j) {
            const int64_t be = s.b_batched ? e : 0;
            float acc = 0;
            for (int64_t kk = 0; kk < kend; ++kk) {
              float av = x[size_t(e * s.m * s.k + (s.trans_a ? kk * s.m + i : i * s.k + kk))];
              float bv = b[size_t(be * s.k * s.n + (s.trans_b ? j * s.k + kk : kk * s.n + j))];
              if (ta32) av = round_tf32(av);
              if (tb32) bv = round_tf32(bv);
              acc += av * bv;
              if (faulted && mo.fault == Fault::acc_in_output_dtype) acc = round_dtype(y.dtype, acc);
            }
            float v = float(s.alpha) * acc;
            if (bias) {
              const int64_t col = faulted && mo.fault == Fault::bias_wrong_column ? (j + 1) % s.n : j;
              v += (*bias)[size_t(col)];
            }
            if (op.type == OpType::GEMM_BIAS_ACT && op.attrs.act == Act::relu) v = std::max(v, 0.0f);
            if (op.type == OpType::GEMM_BIAS_ACT && op.attrs.act == Act::gelu)
              v = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
            r[size_t((e * s.m + i) * s.n + j)] = v;
          }
    } else {
      const std::vector<float>* second = op.inputs.size() > 1 ? &vals.at(g.tensor(op.inputs[1]).name) : nullptr;
      const int64_t cols = g.tensor(op.inputs[0]).shape.back();
      for (size_t l = 0; l < r.size(); ++l) {
        float v = x[l];
        switch (op.type) {
          case OpType::BIAS_ADD: {
            int64_t col = int64_t(l) % cols;
            if (mo.fault == Fault::bias_wrong_column && op.inputs[0] == fp_out) col = (col + 1) % cols;
            v += (*second)[size_t(col)];
            break;
          }
          case OpType::ADD: v += (*second)[l]; break;
          case OpType::RELU: v = std::max(v, 0.0f); break;
          case OpType::GELU:
            v = op.attrs.approximate == GeluApprox::tanh
                    ? 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)))
                    : 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f)));
            break;
          default: break;
        }
        r[l] = v;
      }
    }
    for (float& v : r) {
      if (final_op && mo.fault == Fault::scale_output) v = float(double(v) * mo.scale);
      v = round_dtype(y.dtype, v);
    }
    vals[y.name] = std::move(r);
  }
  return vals;
}

}  // namespace gexec::test
