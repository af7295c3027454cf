// Block scales (graph-format.md, "FP8"): the shape of S, which ops read and write S, S as the
// quantizing CAST computes it, and the copy of a tensor that carries S's values so that its real
// values read through real_value.hpp as those of any other f8 tensor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"

namespace gexec {

// Whether any tensor of the graph has a block scale.
bool has_block_scales(const Graph& g);

// Whether tensor `s` is the S of a block-scaled tensor.
bool is_block_scale(const Graph& g, TensorId s);

// [ceil(R / BR), ceil(C / BC)]: the shape of S for a rank-2 tensor [R, C] with a block scale;
// [G, ceil(R / BR), ceil(C / BC)] for a rank-3 one [G, R, C]. Empty for any other.
std::vector<int64_t> block_scale_shape(const Tensor& t);

// Whether the op is a CAST that computes its output's S: its second output is S of its first.
bool writes_block_scale(const Graph& g, const Op& op);

// The S tensors an op reads besides its inputs: that of each block-scaled input, and that of a
// block-scaled output whose S the op does not compute (a CAST quantizing with a given S). In
// order (inputs first), each once.
std::vector<TensorId> scale_reads(const Graph& g, const Op& op);

// Where the S of tensor t (an input or output of op) is in scale_reads(g, op): its index in a
// Binding's `scales`, or -1 when t has no block scale that the op reads.
int scale_slot(const Graph& g, const Op& op, TensorId t);

// Everything a run of the op reads: op.inputs, then scale_reads.
std::vector<TensorId> op_reads(const Graph& g, const Op& op);

// A copy of t whose block scale holds S's values (block_scale_shape's count of them, as stored).
Tensor with_block_values(const Tensor& t, const float* s);

// t as bytes of it are read and written: itself, or with a block scale a copy carrying S's values
// from `bytes` (by S's name); null where `bytes` has no S of S's size.
std::optional<Tensor> with_scale_from(const Graph& g, const Tensor& t,
                                      const std::map<std::string, std::vector<uint8_t>>& bytes);

// S of one block as the quantizing CAST computes it, in f32: amax / the largest finite value of
// the f8 dtype; 1 for a block of zeros; the smallest positive f32 where the quotient underflows
// to 0 (so that dividing by S stays finite).
float block_scale_of(float amax, DType f8);

}  // namespace gexec
