// The FP8 rules of the graph format: scales, which ops read and write f8 tensors, amax outputs.
#pragma once

#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"

namespace gexec {

// A tensor's scale: only on f8 tensors; positive and finite; per-axis only on rank 2, with one
// value per row (axis 0) or column (axis 1). Each problem as a message without a path.
std::vector<std::string> check_scale(const Tensor& t);

// A block scale's S (given the graph): f32 of block_scale_shape, row-major; known values
// positive and finite; not drawn from a distribution that gives values <= 0.
std::vector<std::string> check_block_scale(const Graph& g, const Tensor& t);

// Known values of a block scale's S (values, a file, --load-inputs): S is stored in f32, so each
// value as an f32 must be positive and finite (1e-300 would be 0 there, 1e39 infinite). The
// first bad value as "value I is V; ...", or "" where all are good.
std::string block_scale_values_problem(const std::vector<double>& values);

// An op's FP8 rules (called by check_op once shapes and counts are right): f8 tensors only on
// products (A, B and C; never a bias or a residual) and CAST; both product operands f8 or neither,
// never f8e5m2 x f8e5m2; f8e5m2 output only with an f8e5m2 operand; fast_accum only on f8
// products; a second output only after an f8 first output, as an f32 [1] amax.
std::vector<std::string> check_f8_op(const Graph& g, const Op& op);

// Whether the op is a product with f8 operands.
bool is_f8_product(const Graph& g, const Op& op);

// The amax output of an op, or kNone.
// (A CAST to a block-scaled tensor has none: its second output is S, block_scale.hpp.)
inline TensorId amax_output(const Op& op) { return op.outputs.size() > 1 ? op.outputs[1] : kNone; }

}  // namespace gexec
