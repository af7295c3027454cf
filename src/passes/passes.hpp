// The passes of the pipeline, one per file; the pass manager (pipeline.cpp) lists them by name and
// hands each its PassContext (the options, the cost model, the sink of its notes).
#pragma once

#include <string>

#include "gexec/ir/graph.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/status.hpp"

namespace gexec {

// Names unnamed ops, fills attributes that can be derived (GEMM_BIAS_ACT's mnk) and orders
// the ops by data flow.
Status canonicalize(Graph& g, const PassContext& ctx);

// Removes the ops whose results reach no graph output, then the tensors nothing uses.
Status dead_ops(Graph& g, const PassContext& ctx);

// Marks CASTs of constants as hoisted (run once, before the runs) and their outputs constant.
Status fold_constant_casts(Graph& g, const PassContext& ctx);

// MATMUL [-> BIAS_ADD] [-> RELU | GELU(tanh)] chains become one GEMM_BIAS_ACT.
Status fuse_elementwise(Graph& g, const PassContext& ctx);

// MATMUL [-> BIAS_ADD] -> ADD(residual) [-> RELU | GELU(tanh)] becomes one GEMM_BIAS_ACT with a residual.
Status fuse_residual(Graph& g, const PassContext& ctx);

// Chains and small DAGs of elementwise ops become FUSED_ELEMENTWISE ops.
Status group_elementwise(Graph& g, const PassContext& ctx);

// An f8 product with per-row/column operand scales and an f8 C writes bf16, then a CAST quantizes.
Status split_f8_outputs(Graph& g, const PassContext& ctx);

}  // namespace gexec
