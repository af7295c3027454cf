// The declarations of the CPU kernels (cpu_gemm.cpp, cpu_elementwise.cpp, cpu_fused.cpp). Compiled into the
// core without BLAS headers, so that the table and dry-runs need no OpenBLAS.
#include <algorithm>
#include <climits>
#include <iterator>
#include <string>

#include "gexec/ir/gemm_shape.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {
namespace {

// Accepts every product whose shapes agree and whose sizes fit cblas_sgemm's int arguments.
Verdict check_gemm(const Graph& g, const Op& op, const DeviceCaps&, const KernelOptions&) {
  Verdict v;
  const auto s = accepted_gemm_shape(g, op, v);
  if (!s) return v;
  if (s->m > INT_MAX || s->n > INT_MAX || s->k > INT_MAX) {
    v.rejected = "M, N or K beyond cblas_sgemm's 32-bit sizes";
    return v;
  }
  for (int i = 0; i < 2; ++i) {
    const Tensor& t = g.tensor(op.inputs[static_cast<size_t>(i)]);
    if (t.dtype == DType::f32) continue;
    // A block-scaled operand is converted once only where its S is fixed before the runs too.
    const bool once = fixed_before_runs(g, op.inputs[static_cast<size_t>(i)]) &&
                      (!t.scale.is_block() || fixed_before_runs(g, t.scale.tensor));
    v.notes.push_back(std::string(i == 0 ? "A " : "B ") + std::string(dtype_name(t.dtype)) +
                      (t.scale.is_block() ? ": dequantizing (stored x its block's S) to f32 for cblas_sgemm "
                       : is_f8(t.dtype)   ? ": dequantizing (stored x scale) to f32 for cblas_sgemm "
                                      : ": converting to f32 for cblas_sgemm ") +
                      (once ? "once, before the runs" : "in every run"));
  }
  const Tensor& c = g.tensor(op.outputs[0]);
  const bool epilogue =
      s->has_bias || s->has_residual || (op.type == OpType::GEMM_BIAS_ACT && op.attrs.act != Act::none);
  if (is_f8(c.dtype))
    v.notes.push_back(std::string("computing into an f32 scratch buffer, then ") + (epilogue ? "residual, bias, activation, " : "") +
                      "quantizing to " + std::string(dtype_name(c.dtype)) + " with C's scale" +
                      (op.outputs.size() > 1 ? " and writing the amax" : ""));
  else if (c.dtype != DType::f32)
    v.notes.push_back(std::string("computing into an f32 scratch buffer, then ") + (epilogue ? "residual, bias, activation and " : "") +
                      "rounding to " + std::string(dtype_name(c.dtype)) + " in one pass");
  else if (epilogue)
    v.notes.push_back("bias and activation in one pass over C after the product");
  return v;
}

}  // namespace

std::vector<KernelDef> cpu_kernel_defs() {
  const std::vector<DType> all(std::begin(kAllDTypes), std::end(kAllDTypes));
  auto def = [&all](std::string name, OpType op, size_t inputs, std::string summary) {
    const bool gemm = op == OpType::MATMUL || op == OpType::GEMM_BIAS_ACT;
    KernelDef d = declare_kernel(std::move(name), op, Backend::cpu, gemm ? KernelImpl::cpu_gemm : KernelImpl::cpu_elementwise,
                                 10, inputs, std::move(summary));
    // Products and CAST read and write f8 too (dequantized to f32, quantized with the scales); a
    // bias and the other elementwise ops stay f16/bf16/f32, as the graph format allows.
    if (gemm || op == OpType::CAST) {
      for (size_t i = 0; i < std::min<size_t>(inputs, 2); ++i) d.inputs[i] = all;
      d.outputs = all;
    }
    d.colmajor = true;  // operands are read by logical element, or mapped onto BLAS transposes
    return d;
  };
  KernelDef gemm = def("cpu.gemm_bias_act", OpType::GEMM_BIAS_ACT, 4,
                       "C = act(alpha * op(A) op(B) + beta * R + bias): OpenBLAS cblas_sgemm, then residual, bias "
                       "and activation in one pass while rounding to C's dtype");
  gemm.transposes = gemm.batched = true;
  gemm.acts = {Act::none, Act::relu, Act::silu, Act::gelu_erf, Act::gelu};
  gemm.check = check_gemm;
  KernelDef fused = def("cpu.fused_elementwise", OpType::FUSED_ELEMENTWISE, size_t(kGroupMaxInputs),
                        "the group's steps per element in f32, each rounded to its dtype; one read of each input, "
                        "one write of each output; threaded");
  fused.impl = KernelImpl::cpu_fused_elementwise;
  fused.colmajor = false;
  KernelDef matmul = def("cpu.matmul", OpType::MATMUL, 2, "C = alpha * op(A) op(B): OpenBLAS cblas_sgemm");
  matmul.transposes = matmul.batched = true;
  matmul.check = check_gemm;
  KernelDef grouped = declare_kernel("cpu.grouped_gemm", OpType::GROUPED_GEMM, Backend::cpu, KernelImpl::cpu_grouped_gemm,
                                     10, 4,
                                     "Y = act(alpha * X_g W_g + bias_g) per group of rows: OpenBLAS cblas_sgemm per "
                                     "group, then bias, activation and rounding to Y's dtype in one threaded pass");
  grouped.inputs[0] = grouped.inputs[1] = all;  // f8 X and W dequantized with their scales
  grouped.inputs[2] = {DType::i32};
  grouped.transposes = true;
  // The collectives of a sharded run's CPU ranks: in host memory, the test double for NCCL.
  auto collective = [](const char* name, OpType op, const char* summary) {
    KernelDef d = declare_kernel(name, op, Backend::cpu, KernelImpl::cpu_collective, 10, 1, summary);
    d.batched = true;
    d.check = [](const Graph&, const Op& op, const DeviceCaps&, const KernelOptions&) {
      Verdict v;
      if (op.attrs.ranks < 1) v.rejected = "ranks must be at least 1";
      return v;
    };
    return d;
  };
  return {
      collective("cpu.all_reduce", OpType::ALL_REDUCE,
                 "Y = the sum of every rank's X, in f32 in rank order, rounded once (host memory: the CPU ranks of --tp)"),
      collective("cpu.all_gather", OpType::ALL_GATHER,
                 "Y = every rank's X concatenated along the axis (host memory: the CPU ranks of --tp)"),
      collective("cpu.reduce_scatter", OpType::REDUCE_SCATTER,
                 "Y = slice r along the axis of the sum of every rank's X, in f32 in rank order (host memory)"),
      gemm,
      matmul,
      grouped,
      def("cpu.bias_add", OpType::BIAS_ADD, 2, "Y = X + b[col], in f32, rounded once to Y's dtype; threaded"),
      def("cpu.add", OpType::ADD, 2, "Z = X + Y, in f32, rounded once to Z's dtype; threaded"),
      def("cpu.relu", OpType::RELU, 1, "Y = max(X, 0); threaded"),
      def("cpu.gelu", OpType::GELU, 1, "Y = GELU(X), tanh or erf form, in f32; threaded"),
      def("cpu.cast", OpType::CAST, 1, "Y = X converted to Y's dtype, round to nearest even; to and from f8 with the scales "
          "(quantize, dequantize) and the amax; threaded"),
      def("cpu.mul", OpType::MUL, 2, "Z = X * Y, in f32, rounded once to Z's dtype; threaded"),
      def("cpu.silu", OpType::SILU, 1, "Y = X * sigmoid(X), in f32; threaded"),
      def("cpu.sub", OpType::SUB, 2, "Z = X - Y (Y: a second input or the constant scalar), in f32, rounded once to Z's dtype; threaded"),
      def("cpu.div", OpType::DIV, 2, "Z = X / Y (Y: a second input or the constant scalar), in f32, rounded once to Z's dtype; threaded"),
      def("cpu.sigmoid", OpType::SIGMOID, 1, "Y = 1 / (1 + exp(-X)), in f32; threaded"),
      def("cpu.tanh", OpType::TANH, 1, "Y = tanh(X), in f32 (a polynomial and exp, within 2 ulps); threaded"),
      def("cpu.erf", OpType::ERF, 1, "Y = erf(X), in f32 (polynomials and exp, within 2.5 ulps); threaded"),
      def("cpu.pow", OpType::POW, 1, "Y = X ^ exponent (a constant), in f32 (powf: NaN for X < 0 and a non-integer exponent); threaded"),
      fused,
  };
}

}  // namespace gexec
