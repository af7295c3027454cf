// What the cuBLASLt GEMM kernels support, beside their code (src/backends/cuda/cublaslt_gemm.cpp).
// Compiled into the core without CUDA headers, so that selection and dry-runs need no GPU.
#include <climits>
#include <sstream>
#include <string>

#include "gemm_padding.hpp"
#include "gemm_view.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

std::string name(DType t) { return std::string(dtype_name(t)); }

std::string when(bool once) { return once ? "once, before the runs" : "in every run"; }

// Accepts every product whose shapes agree; the notes say what runs beyond the one cuBLASLt call.
Verdict check_gemm(const Graph& g, const Op& op, const DeviceCaps&, const KernelOptions& options) {
  Verdict v;
  const auto shape = accepted_gemm_shape(g, op, v);
  if (!shape) return v;
  if (shape->batch > INT32_MAX) {
    v.rejected = "batch " + std::to_string(shape->batch) + " is beyond cuBLASLt's 32-bit batch count";
    return v;
  }
  const DType a = g.tensor(op.inputs[0]).dtype, b = g.tensor(op.inputs[1]).dtype;
  const DType c = g.tensor(op.outputs[0]).dtype;
  auto types = cuda::gemm_types(a, b, c);
  types.tf32_allowed = options.tf32;
  const auto view = cuda::gemm_view(*shape);
  const Act act = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
  const DType bias_t = shape->has_bias ? g.tensor(op.inputs[2]).dtype : c;
  const auto epi = cuda::gemm_epilogue(view, types, shape->has_bias, bias_t, act);

  if (types.convert_a || types.convert_b) {
    std::string which = types.convert_a && types.convert_b ? "A and B" : types.convert_a ? "A" : "B";
    const bool once = (!types.convert_a || fixed_before_runs(g, op.inputs[0])) &&
                      (!types.convert_b || fixed_before_runs(g, op.inputs[1]));
    v.notes.push_back("A " + name(a) + " and B " + name(b) + " meet in f32: converting " + which + " to f32 " +
                      when(once));
  }
  if (types.tf32()) v.notes.push_back("f32 inputs: TF32 tensor cores (10-bit mantissa products, f32 accumulation)");
  else if (types.ab == DType::f32) v.notes.push_back("f32 inputs: f32 products, no TF32 (--precision f32)");
  if (types.convert_out)
    v.notes.push_back("cuBLASLt writes " + name(types.ab) + " products as " + name(types.ab) +
                      (types.ab == DType::f32 ? "" : " or f32") + " only: computing into an f32 scratch buffer, converted to " +
                      name(c) + " in every run");
  if (epi.convert_bias) {
    const std::string out = types.convert_out ? "the f32 product" : name(types.d) + " output";
    v.notes.push_back("bias " + name(bias_t) + " with " + out + " needs a bias in the " +
                      (types.convert_out ? "product's" : "output") + " dtype: converting " +
                      (fixed_before_runs(g, op.inputs[2]) ? "the constant bias " + when(true)
                                                                : "the bias " + when(false)));
  }
  if (shape->has_residual) {
    const Tensor& r = g.tensor(op.inputs.back());
    if (r.layout != g.tensor(op.outputs[0]).layout) {
      v.rejected = "the residual \"" + r.name + "\" is stored " + std::string(layout_name(r.layout)) +
                   " and C " + std::string(layout_name(g.tensor(op.outputs[0]).layout)) +
                   "; cuBLASLt reads R as its C, which must be stored like D";
      return v;
    }
    std::ostringstream beta;
    beta << shape->beta;
    v.notes.push_back("residual " + r.name + " read as cuBLASLt's C with beta " + beta.str() +
                      " (added before the bias and activation)" +
                      (r.dtype != types.d ? "; converted from " + name(r.dtype) + " to " + name(types.d) +
                                                " into D in every run, then read in place"
                                          : ""));
  }
  if (epi.needs_tail)
    v.notes.push_back("colmajor C: the bias runs along C's columns, which cuBLASLt's bias epilogue cannot add "
                      "there; a separate kernel adds the bias" +
                      std::string(act != Act::none ? " and the activation" : "") + " after the product");
  const bool a_once = fixed_before_runs(g, op.inputs[0]), b_once = fixed_before_runs(g, op.inputs[1]);
  const auto pad = cuda::plan_padding(view, types, epi, a_once, b_once, options.pad);
  if (shape->has_residual && pad.pad)
    v.notes.push_back("misaligned rows, not padded (a residual read as C is not padded)");
  else if (pad.why.rfind("rows aligned", 0) != 0)
    v.notes.push_back(pad.why);
  return v;
}

KernelDef gemm_def(std::string kernel_name, OpType op, std::string summary) {
  KernelDef d = declare_kernel(std::move(kernel_name), op, Backend::cuda, KernelImpl::cublaslt_gemm, 100,
                               op == OpType::GEMM_BIAS_ACT ? 4 : 2, std::move(summary));
  d.colmajor = true;
  d.transposes = true;
  d.batched = true;
  d.acts = op == OpType::GEMM_BIAS_ACT ? std::vector<Act>{Act::none, Act::relu, Act::gelu} : std::vector<Act>{};
  // Tensor-core kernels read 16-byte vectors; the preference passes the actual alignment too.
  d.align_bytes = 16;
  // bf16 tensor cores (and the bf16 GEMMs cuBLASLt offers) start with Ampere, sm_80.
  d.min_cc = 80;
  d.check = check_gemm;
  return d;
}

}  // namespace

std::vector<KernelDef> cublaslt_kernel_defs() {
  return {
      gemm_def("cublaslt.gemm_bias_act", OpType::GEMM_BIAS_ACT,
               "cuBLASLt GEMM with the bias and activation in its epilogue (RELU_BIAS, GELU_BIAS, ...), a "
               "residual as its C times beta"),
      gemm_def("cublaslt.matmul", OpType::MATMUL, "cuBLASLt GEMM, alpha * op(A) * op(B)"),
  };
}

}  // namespace gexec
