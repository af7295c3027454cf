// A stable, deterministic text form of a graph, for --print-after-all, dry-runs and golden tests.
#pragma once

#include <string>

#include "gexec/ir/graph.hpp"

namespace gexec {

// One line per tensor, then one line per op in order, then the outputs, e.g.
//   graph gemm_bias_relu
//   tensor A [64,80] f16 input normal(0,0.25)
//   op GEMM_BIAS_ACT_0 = GEMM_BIAS_ACT(A, B, Bias) -> C {act=relu, mnk=[64,96,80]}
//   outputs C
std::string print_graph(const Graph& g);

}  // namespace gexec
