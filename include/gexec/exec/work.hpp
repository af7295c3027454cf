// The arithmetic and the memory traffic of one run of a graph, for rates (TFLOP/s, GB/s).
#pragma once

#include "gexec/ir/graph.hpp"

namespace gexec {

struct Work {
  double flops = 0;  // floating-point operations of one run
  double bytes = 0;  // the fewest bytes one run must move to and from device memory
};

// Counts the ops that run every time (hoisted ops run once, before the runs, and are left out).
// FLOPs: 2 * batch * M * N * K per MATMUL or GEMM_BIAS_ACT, plus one per output element for
// the bias and one for the activation of a GEMM_BIAS_ACT; one per output element for BIAS_ADD,
// ADD, RELU and GELU (a GELU costs more instructions; it still counts as one); none for CAST,
// which converts and computes nothing.
// Bytes: every tensor a run reads but does not write (the graph inputs, and results of hoisted
// ops) read once, and every graph output written once. Intermediates are not counted: a
// perfect fusion would keep them out of memory, so this is a lower bound on the traffic.
Work count_work(const Graph& g);

}  // namespace gexec
