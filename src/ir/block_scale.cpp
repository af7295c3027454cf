// Block scales: S's shape, S's readers and writer, S of one block, and tensors carrying S's values.
#include "gexec/ir/block_scale.hpp"

#include <algorithm>

#include "gexec/ir/f8.hpp"

namespace gexec {

bool has_block_scales(const Graph& g) {
  return std::any_of(g.tensors.begin(), g.tensors.end(), [](const Tensor& t) { return t.scale.is_block(); });
}

bool is_block_scale(const Graph& g, TensorId s) {
  return std::any_of(g.tensors.begin(), g.tensors.end(),
                     [&](const Tensor& t) { return t.scale.is_block() && t.scale.tensor == s; });
}

std::vector<int64_t> block_scale_shape(const Tensor& t) {
  if (!t.scale.is_block() || (t.rank() != 2 && t.rank() != 3) || t.scale.block[1] <= 0) return {};
  const auto up = [](int64_t n, int64_t b) { return n / b + (n % b != 0); };  // no n + b overflow
  const int64_t rows = t.shape[size_t(t.rank() - 2)], cols = t.shape.back();
  if (t.rank() == 3) return {t.shape[0], up(rows, t.scale.block[0]), up(cols, t.scale.block[1])};
  return {up(rows, t.scale.block[0]), up(cols, t.scale.block[1])};
}

bool writes_block_scale(const Graph& g, const Op& op) {
  if (op.type != OpType::CAST || op.outputs.size() < 2) return false;
  const Scale& s = g.tensor(op.outputs[0]).scale;
  return s.is_block() && s.tensor == op.outputs[1];
}

std::vector<TensorId> scale_reads(const Graph& g, const Op& op) {
  std::vector<TensorId> reads;
  auto add = [&](TensorId t) {
    if (t < 0 || size_t(t) >= g.tensors.size()) return;
    const Scale& s = g.tensor(t).scale;
    if (!s.is_block() || s.tensor == kNone) return;
    if (std::find(reads.begin(), reads.end(), s.tensor) == reads.end()) reads.push_back(s.tensor);
  };
  for (TensorId t : op.inputs) add(t);
  if (!op.outputs.empty() && !writes_block_scale(g, op)) add(op.outputs[0]);
  return reads;
}

int scale_slot(const Graph& g, const Op& op, TensorId t) {
  const Scale& s = g.tensor(t).scale;
  if (!s.is_block()) return -1;
  const std::vector<TensorId> reads = scale_reads(g, op);
  const auto it = std::find(reads.begin(), reads.end(), s.tensor);
  return it == reads.end() ? -1 : int(it - reads.begin());
}

std::vector<TensorId> op_reads(const Graph& g, const Op& op) {
  std::vector<TensorId> reads = op.inputs;
  for (TensorId s : scale_reads(g, op)) reads.push_back(s);
  return reads;
}

Tensor with_block_values(const Tensor& t, const float* s) {
  Tensor r = t;
  const std::vector<int64_t> shape = block_scale_shape(t);
  size_t n = shape.empty() ? 0 : 1;
  for (int64_t d : shape) n *= size_t(d);
  r.scale.values.assign(s, s + n);
  return r;
}

std::optional<Tensor> with_scale_from(const Graph& g, const Tensor& t,
                                      const std::map<std::string, std::vector<uint8_t>>& bytes) {
  if (!t.scale.is_block()) return t;
  if (t.scale.tensor < 0 || size_t(t.scale.tensor) >= g.tensors.size()) return std::nullopt;
  const Tensor& s = g.tensor(t.scale.tensor);
  const auto it = bytes.find(s.name);
  if (it == bytes.end() || int64_t(it->second.size()) != s.bytes()) return std::nullopt;
  return with_block_values(t, reinterpret_cast<const float*>(it->second.data()));
}

float block_scale_of(float amax, DType f8) { return f8::block_scale(amax, f8_format(f8)); }

}  // namespace gexec
