// How an f16/bf16/f32 product runs through the cuBLASLt GEMM: the column-major view, the
// conversions, where the bias and activation go, the residual and the padding, with the notes that
// say so. Pure logic, no CUDA headers: the kernel table's check (cublaslt_caps.cpp) and the kernel
// (cublaslt_gemm.cpp) both read it, so that a rule lives once and the dry-run says what the run does.
// (The FP8 product has its own plan, fp8_plan.hpp.)
#pragma once

#include <climits>
#include <sstream>
#include <string>
#include <vector>

#include "gemm_padding.hpp"
#include "gemm_view.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/kernels/kernel_def.hpp"

namespace gexec::cuda {

struct GemmPlan {
  std::string rejected;   // empty: cuBLASLt can run it
  bool shaped = false;    // the op is a product whose shapes agree (else `rejected` says why not)
  GemmShape shape;
  GemmView view;
  GemmTypes types;
  GemmEpilogue epi;       // before the run: cuBLASLt may still refuse the fused epilogue
  Act act = Act::none;
  DType a = DType::f16, b = DType::f16, c = DType::f16;
  DType bias = DType::f16;  // the bias's dtype; C's where there is none
  // Operands whose values are fixed before the runs: converted or padded once, in prepare().
  bool a_once = false, b_once = false, bias_once = false;
  // The residual R is cuBLASLt's C times beta, stored like D; where R's dtype is not D's, it is
  // converted into D first and C is D (in place).
  bool residual = false;
  DType res = DType::f16;
  bool res_into_d = false;
  PadPlan pad;
  std::vector<std::string> notes;
};

namespace plan_detail {
inline std::string name(DType t) { return std::string(dtype_name(t)); }
inline std::string when(bool once) { return once ? "once, before the runs" : "in every run"; }
}  // namespace plan_detail

// Why a separate kernel applies the bias and activation after the product (GemmEpilogue).
inline std::string tail_reason(Act act, bool has_bias) {
  const std::string what = has_bias ? act != Act::none ? "the bias and the activation" : "the bias" : "the activation";
  if (act == Act::silu) return "SiLU: cuBLASLt has no SiLU epilogue; a separate kernel applies " + what + " after the product";
  if (act == Act::gelu_erf)
    return "erf GELU: cuBLASLt's GELU epilogue is the tanh form; a separate kernel applies " + what + " after the product";
  return "colmajor C: the bias runs along C's columns, which cuBLASLt's bias epilogue cannot add there; a separate "
         "kernel applies " + what + " after the product";
}

// Accepts every product whose shapes agree; the notes say what runs beyond the one cuBLASLt call.
inline GemmPlan plan_gemm(const Graph& g, const Op& op, const KernelOptions& options) {
  using plan_detail::name;
  using plan_detail::when;
  GemmPlan p;
  const auto shape = gemm_shape(g, op, &p.rejected);
  if (!shape) {
    if (p.rejected.empty()) p.rejected = "not a product";
    return p;
  }
  p.shaped = true;
  p.shape = *shape;
  if (shape->batch > INT32_MAX) {
    p.rejected = "batch " + std::to_string(shape->batch) + " is beyond cuBLASLt's 32-bit batch count";
    return p;
  }
  p.a = g.tensor(op.inputs[0]).dtype;
  p.b = g.tensor(op.inputs[1]).dtype;
  p.c = g.tensor(op.outputs[0]).dtype;
  p.types = gemm_types(p.a, p.b, p.c);
  p.types.tf32_allowed = options.tf32;
  p.view = gemm_view(*shape);
  p.act = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
  p.bias = shape->has_bias ? g.tensor(op.inputs[2]).dtype : p.c;
  p.epi = gemm_epilogue(p.view, p.types, shape->has_bias, p.bias, p.act);
  p.a_once = fixed_before_runs(g, op.inputs[0]);
  p.b_once = fixed_before_runs(g, op.inputs[1]);
  p.bias_once = shape->has_bias && fixed_before_runs(g, op.inputs[2]);
  const GemmTypes& types = p.types;

  if (types.convert_a || types.convert_b) {
    std::string which = types.convert_a && types.convert_b ? "A and B" : types.convert_a ? "A" : "B";
    const bool once = (!types.convert_a || p.a_once) && (!types.convert_b || p.b_once);
    p.notes.push_back("A " + name(p.a) + " and B " + name(p.b) + " meet in f32: converting " + which + " to f32 " +
                      when(once));
  }
  if (types.tf32()) p.notes.push_back("f32 inputs: TF32 tensor cores (10-bit mantissa products, f32 accumulation)");
  else if (types.ab == DType::f32) p.notes.push_back("f32 inputs: f32 products, no TF32 (--precision f32)");
  if (types.convert_out)
    p.notes.push_back("cuBLASLt writes " + name(types.ab) + " products as " + name(types.ab) +
                      (types.ab == DType::f32 ? "" : " or f32") + " only: computing into an f32 scratch buffer, converted to " +
                      name(p.c) + " in every run");
  if (p.epi.convert_bias) {
    const std::string out = types.convert_out ? "the f32 product" : name(types.d) + " output";
    p.notes.push_back("bias " + name(p.bias) + " with " + out + " needs a bias in the " +
                      (types.convert_out ? "product's" : "output") + " dtype: converting " +
                      (p.bias_once ? "the constant bias " + when(true) : "the bias " + when(false)));
  }
  if (shape->has_residual) {
    const Tensor& r = g.tensor(op.inputs.back());
    if (r.layout != g.tensor(op.outputs[0]).layout) {
      p.rejected = "the residual \"" + r.name + "\" is stored " + std::string(layout_name(r.layout)) + " and C " +
                   std::string(layout_name(g.tensor(op.outputs[0]).layout)) +
                   "; cuBLASLt reads R as its C, which must be stored like D";
      return p;
    }
    p.residual = true;
    p.res = r.dtype;
    p.res_into_d = r.dtype != types.d;
    std::ostringstream beta;
    beta << shape->beta;
    p.notes.push_back("residual " + r.name + " read as cuBLASLt's C with beta " + beta.str() +
                      " (added before the bias and activation)" +
                      (p.res_into_d ? "; converted from " + name(r.dtype) + " to " + name(types.d) +
                                          " into D in every run, then read in place"
                                    : ""));
  }
  if (p.epi.needs_tail) p.notes.push_back(tail_reason(p.act, shape->has_bias));
  p.pad = plan_padding(p.view, types, p.epi, p.a_once, p.b_once, options.pad);
  if (p.residual && p.pad.pad) {
    // C would need a padded copy of R in every run: the copy costs what padding wins.
    p.pad.pad = false;
    p.pad.why = "misaligned rows, not padded (a residual read as C is not padded)";
  }
  if (p.pad.why.rfind("rows aligned", 0) != 0) p.notes.push_back(p.pad.why);
  return p;
}

}  // namespace gexec::cuda
