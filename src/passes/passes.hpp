// The passes of the pipeline, one per file; the pass manager (pipeline.cpp) lists them by name.
#pragma once

#include <string>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// Names unnamed ops, fills attributes that can be derived (GEMM_BIAS_ACT's mnk) and orders
// the ops by data flow.
Status canonicalize(Graph& g);

// Removes the ops whose results reach no graph output, then the tensors nothing uses.
Status dead_ops(Graph& g);

// Marks CASTs of constants as hoisted (run once, before the runs) and their outputs constant.
Status fold_constant_casts(Graph& g);

// MATMUL [-> BIAS_ADD] [-> RELU | GELU(tanh)] chains become one GEMM_BIAS_ACT.
Status fuse_elementwise(Graph& g);

// MATMUL [-> BIAS_ADD] -> ADD(residual) [-> RELU | GELU(tanh)] becomes one GEMM_BIAS_ACT with a residual.
Status fuse_residual(Graph& g);

// Chains and small DAGs of elementwise ops become FUSED_ELEMENTWISE ops.
Status group_elementwise(Graph& g);

// An f8 product with per-row/column operand scales and an f8 C writes bf16, then a CAST quantizes.
Status split_f8_outputs(Graph& g);

// A decision a pass explains (why it fused, converted, or did not): collected by the pass
// manager into the pass's PassRecord; dropped when no pass manager is running.
void pass_note(std::string note);

}  // namespace gexec
