// Exporter patterns: the groups of nodes that exporters write for an activation gexec has as one op
// (x * Sigmoid(x) -> SILU; the erf GELU Div, Erf, Add, Mul, Mul and the tanh GELU Pow, Mul, Add,
// Mul, Tanh, Add, Mul, Mul -> GELU), found before any node is mapped, so that the activation fuses
// as one op. A group that is not exactly one of these formulas (another constant, an intermediate
// value read twice or a graph output, an attribute) is not a match: its nodes are then mapped one
// by one (SIGMOID, ERF, TANH, POW, DIV, ...), as they are written, never approximated.
#pragma once

#include <string>
#include <vector>

#include "proto.hpp"

namespace gexec::onnx_import {

// A single-element constant a match read: checked against X when the group is mapped (same type,
// except an exponent; a rank no higher than X's, so that broadcasting it does not change X's shape).
struct PatternConstant {
  std::string value;  // its ONNX name
  int32_t type = kUndefined;
  std::vector<int64_t> shape;
  bool exponent = false;  // Pow's exponent, whose type may differ from X's
};

struct Pattern {
  std::string what;  // "SILU", "GELU (erf)", "GELU (tanh)"
  OpType type = OpType::SILU;
  GeluApprox approx = GeluApprox::tanh;
  int root = -1;           // the node whose output the op writes (the group's last)
  std::string x;           // the ONNX value the op reads
  std::vector<int> nodes;  // the group's nodes, ascending, the root among them
  std::vector<PatternConstant> constants;
};

// The groups in `graph` that are exactly one of the patterns, none sharing a node. Constants are
// initializers (not external) and Constant nodes of one element.
std::vector<Pattern> find_patterns(const pb::GraphProto& graph, const std::string& base_dir);

}  // namespace gexec::onnx_import
