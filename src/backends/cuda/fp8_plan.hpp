// How an FP8 product runs through cuBLASLt on Hopper: the "TN" arrangement (both operands with K
// contiguous, in the column-major view C^T = B^T A^T), the scales, the bias and C dtypes. Pure
// logic, no CUDA headers: the kernel table's check (fp8_caps.cpp) and the kernel (fp8_gemm.cpp)
// both use it, so that the dry-run says exactly what the run does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/f8_rules.hpp"
#include "gexec/ir/gemm_shape.hpp"

namespace gexec::cuda {

// One operand's block scales as cuBLASLt reads them (its "Scaling factors layouts"): 1 x 128
// blocks along K (VEC128_32F), rows-major: [L][rows] with L = ceil(K / 128) and the rows of op(X)
// contiguous; 128 x 128 blocks (BLK128x128_32F), K-major: [ceil(rows / 128)][L rounded up to 4].
// The graph's S is row-major over the stored tensor's logical [rows, K] or [K, rows]; one copy
// moves it, out[o * ld + i] = S[o * so + i * si] for i < inner and 1 beyond (padding).
struct ScaleArrangement {
  bool two_d = false;
  int64_t outer = 0, ld = 0, inner = 0, so = 0, si = 0;
  bool once = false;  // S is constant: arranged once, before the runs
  int64_t count() const { return outer * ld; }
};

// `rows_by_k`: the operand's logical shape is [rows, K] (A, or B with trans_b); `rows_padded`
// the rows cuBLASLt sees (M or N, padded to 16 where the product is).
inline ScaleArrangement arrange_block_scale(const Tensor& t, bool rows_by_k, int64_t rows, int64_t rows_padded,
                                            int64_t k) {
  ScaleArrangement a;
  const int64_t l = (k + 127) / 128;
  a.two_d = t.scale.block[0] == 128 && t.scale.block[1] == 128;
  if (!a.two_d) {
    a.outer = l, a.ld = rows_padded, a.inner = rows;
    a.so = rows_by_k ? 1 : rows, a.si = rows_by_k ? l : 1;
  } else {
    const int64_t row_blocks = (rows + 127) / 128;
    a.outer = row_blocks, a.ld = (l + 3) / 4 * 4, a.inner = l;
    a.so = rows_by_k ? l : 1, a.si = rows_by_k ? 1 : row_blocks;
  }
  return a;
}

struct Fp8Plan {
  std::string rejected;  // empty: cuBLASLt can run it
  GemmShape shape;
  DType a = DType::f8e4m3, b = DType::f8e4m3, d = DType::bf16;
  // cuBLASLt on Hopper reads FP8 operands only with K contiguous ("TN"); an operand stored
  // otherwise is copied transposed into a [rows, K] buffer: once for a constant, else every run.
  bool transpose_a = false, transpose_b = false;
  bool a_once = false, b_once = false;
  // M, N or K not a multiple of 16: A and B are copied, zero-filled, into [mp,kp] and [np,kp]
  // K-contiguous buffers, D is computed into an [mp,np] buffer and its [M,N] part copied to C.
  // A batched product always takes the packed copies (one [mp,kp] / [np,kp] matrix per entry).
  bool pad = false;
  int64_t mp = 0, np = 0, kp = 0;
  // D goes to its own buffer only where M or N is padded; else cuBLASLt writes C itself.
  bool d_padded = false;
  // Padded rows of A repeat its last row (else they are zeros): with a bias, zero rows would make
  // rows act(bias) of D that enter the amax; repeated ones only repeat a real row's values.
  bool repeat_a_rows = false;
  // Per-row A / per-column B scales: cuBLASLt's outer-vector scale mode (both operands then take
  // vectors; a tensor-wide scale is repeated). Else one f32 scale per operand.
  bool outer_vector = false;
  // Block scales on both operands: cuBLASLt's VEC128_32F / BLK128x128_32F modes, each S copied
  // into the layout cuBLASLt reads (a_scale for our A, which is cuBLASLt's B; b_scale for our B).
  bool block = false;
  ScaleArrangement a_scale, b_scale;
  DType c16 = DType::bf16;     // the C matrix type cuBLASLt needs with an f8 D (never read: beta = 0)
  bool has_bias = false;
  DType bias_in = DType::bf16, bias_read = DType::bf16;  // the graph's bias, and what cuBLASLt reads
  bool bias_once = false;
  bool amax = false;
  std::vector<std::string> notes;
};

// K is contiguous in op(A) [M, K] when A is rowmajor and not transposed, or colmajor and
// transposed; in op(B) [K, N] when B is rowmajor and transposed, or colmajor and not.
inline bool a_k_contiguous(const Tensor& a, bool trans) { return (a.layout == Layout::rowmajor) != trans; }
inline bool b_k_contiguous(const Tensor& b, bool trans) { return (b.layout == Layout::rowmajor) == trans; }

inline Fp8Plan plan_fp8(const Graph& g, const Op& op) {
  Fp8Plan p;
  std::string why;
  const auto s = gemm_shape(g, op, &why);
  if (!s) {
    p.rejected = why;
    return p;
  }
  p.shape = *s;
  if (!is_f8_product(g, op)) {
    p.rejected = "A and B are not f8";
    return p;
  }
  const Tensor& a = g.tensor(op.inputs[0]);
  const Tensor& b = g.tensor(op.inputs[1]);
  const Tensor& c = g.tensor(op.outputs[0]);
  p.a = a.dtype, p.b = b.dtype, p.d = c.dtype;
  if (s->batch > 1 && ((a.rank() == 3 && a.layout != Layout::rowmajor) || (b.rank() == 3 && b.layout != Layout::rowmajor))) {
    p.rejected = "a batched FP8 product reads rank-3 operands rowmajor only";
    return p;
  }
  auto up16 = [](int64_t x) { return (x + 15) / 16 * 16; };
  p.mp = up16(s->m), p.np = up16(s->n), p.kp = up16(s->k);
  p.pad = p.mp != s->m || p.np != s->n || p.kp != s->k || s->batch > 1;
  p.d_padded = p.mp != s->m || p.np != s->n;
  p.repeat_a_rows = p.mp != s->m && op.outputs.size() > 1 && s->has_bias;
  if (c.layout != Layout::rowmajor) {
    p.rejected = "an FP8 product writes a rowmajor C only";
    return p;
  }
  // The axis is the stored tensor's: A [M,K] per row is along M, A stored [K,M] (trans_a) per
  // column is; B [K,N] per column is along N, B stored [N,K] (trans_b) per row is.
  const bool a_along_k = a.scale.axis >= 0 && ((a.scale.axis == 1) != s->trans_a);
  const bool b_along_k = b.scale.axis >= 0 && ((b.scale.axis == 0) != s->trans_b);
  if (a_along_k || b_along_k) {
    p.rejected = "a scale along K (on A or B) cannot be applied after the product";
    return p;
  }
  if (is_f8(c.dtype) && c.scale.axis >= 0) {
    p.rejected = "cuBLASLt's D scale is one value: a per-axis scale on an f8 C is not supported (the pass "
                 "split_f8_outputs, in the default pipeline, writes such a C through bf16, or f32 with an amax, "
                 "and a CAST)";
    return p;
  }
  if (s->has_residual) {
    p.rejected = "the FP8 kernel runs with beta 0 and reads no C: a residual is not supported (the pass "
                 "fuse_residual leaves an FP8 product's ADD separate)";
    return p;
  }
  p.block = a.scale.is_block() && b.scale.is_block();
  if (p.block && (s->batch > 1 || a.rank() != 2 || b.rank() != 2)) {
    p.rejected = "block scales multiply rank-2 operands only";
    return p;
  }
  if (p.block && a.scale.block[0] == 128 && a.scale.block[1] == 128 && b.scale.block[0] == 128 &&
      b.scale.block[1] == 128) {
    p.rejected = "cuBLASLt has no kernel with 128x128 blocks on both operands (it takes 1x128 x 1x128, 1x128 x "
                 "128x128 and 128x128 x 1x128); give one operand 1x128 blocks along K, or run with --backend cpu";
    return p;
  }
  if (p.block && op.attrs.fast_accum) {
    p.rejected = "cuBLASLt has no block-scaled kernel with fast accumulation (its heuristic answers "
                 "CUBLAS_STATUS_NOT_SUPPORTED on the H200, cuBLASLt 13.1); leave fast_accum off, or run with "
                 "--backend cpu";
    return p;
  }
  if (p.block) {
    p.a_scale = arrange_block_scale(a, !s->trans_a, s->m, p.mp, s->k);
    p.b_scale = arrange_block_scale(b, s->trans_b, s->n, p.np, s->k);
    p.a_scale.once = fixed_before_runs(g, a.scale.tensor);
    p.b_scale.once = fixed_before_runs(g, b.scale.tensor);
  }
  p.outer_vector = a.scale.axis >= 0 || b.scale.axis >= 0;
  if (p.outer_vector && s->batch > 1 && !s->b_batched) {
    p.rejected = "per-row/column scales on a batched product whose B is shared (rank 2): cuBLASLt's outer-vector "
                 "mode has no algorithm for a stride-0 operand";
    return p;
  }
  if (p.outer_vector && is_f8(c.dtype)) {
    p.rejected = "per-row/column operand scales with an f8 C are not supported by the outer-vector mode (the "
                 "pass split_f8_outputs, in the default pipeline, writes such a C through bf16, or f32 with an "
                 "amax, and a CAST)";
    return p;
  }
  p.a_once = fixed_before_runs(g, op.inputs[0]);
  p.b_once = fixed_before_runs(g, op.inputs[1]);
  p.transpose_a = !a_k_contiguous(a, s->trans_a);
  p.transpose_b = !b_k_contiguous(b, s->trans_b);
  auto when = [](bool once) { return std::string(once ? "once, before the runs" : "in every run"); };
  p.notes.push_back("FP8 on Hopper: cuBLASLt takes only the TN form (A and B both with K contiguous), "
                    "M, N, K multiples of 16");
  if (p.pad && p.mp == s->m && p.np == s->n && p.kp == s->k)
    p.notes.push_back("batched: A and B copied K-contiguous into [" + std::to_string(p.mp) + "," + std::to_string(p.kp) +
                      "] and [" + std::to_string(p.np) + "," + std::to_string(p.kp) + "] per batch entry, A " +
                      when(p.a_once) + ", B " + when(p.b_once));
  else if (p.pad)
    p.notes.push_back("padding " + std::to_string(s->m) + "x" + std::to_string(s->n) + "x" + std::to_string(s->k) +
                      " to " + std::to_string(p.mp) + "x" + std::to_string(p.np) + "x" + std::to_string(p.kp) +
                      ": A copied zero-filled into [" + std::to_string(p.mp) + "," + std::to_string(p.kp) + "] " +
                      when(p.a_once) + ", B into [" + std::to_string(p.np) + "," + std::to_string(p.kp) + "] " +
                      when(p.b_once) +
                      (p.d_padded ? ", D computed padded and its [M,N] part copied to C in every run" : "") +
                      (p.repeat_a_rows ? "; A's padded rows repeat its last row, so that the amax sees no act(bias) "
                                         "rows"
                                       : "") +
                      (s->batch > 1 ? " (per batch entry; a batched product always takes these copies)" : ""));
  // (The padded copies read either storage and write K contiguous: no transposed copy beside them.)
  if (p.transpose_a && !p.pad)
    p.notes.push_back("A is stored with M contiguous: copying it transposed into [M,K] " + when(p.a_once));
  if (p.transpose_b && !p.pad)
    p.notes.push_back("B [K,N] is stored with N contiguous: copying it transposed into [N,K] " + when(p.b_once) +
                      (p.b_once ? "" : " (mark the weight constant, or store it transposed, to do this once)"));
  auto layout_of = [&](const ScaleArrangement& x, const char* which, const char* rows) {
    const std::string form =
        x.two_d ? "(128x128, BLK128x128_32F) K-major" : "(1x128, VEC128_32F) " + std::string(rows) + "-major";
    return std::string(which) + "'s S " + form + " [" + std::to_string(x.outer) + "," + std::to_string(x.ld) +
           "], copied " + when(x.once);
  };
  if (p.block)
    p.notes.push_back("block scales: " + layout_of(p.a_scale, "A", "M") + "; " + layout_of(p.b_scale, "B", "N"));
  else
    p.notes.push_back(p.outer_vector
                          ? "scales: one per row of op(A) (M) and per column of op(B) (N), cuBLASLt's outer-vector scale mode"
                          : "scales: one f32 per operand through the A and B scale pointers");
  if (is_f8(c.dtype))
    p.notes.push_back("f8 " + std::string(dtype_name(c.dtype)) + " C: D scale 1/" + std::to_string(c.scale.values[0]) +
                      ", with a bf16 C descriptor (beta = 0, never read)");
  p.amax = op.outputs.size() > 1;
  if (p.amax) p.notes.push_back("amax: cuBLASLt's AMAX_D pointer, taken before the D scale");
  if (op.attrs.fast_accum) p.notes.push_back("fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM)");
  p.has_bias = s->has_bias;
  if (p.has_bias) {
    p.bias_in = g.tensor(op.inputs[2]).dtype;
    // bf16 output: bf16 bias; f16: f16; f32: bf16; f8: the bias follows C (bf16 here).
    p.bias_read = c.dtype == DType::f16 ? DType::f16 : DType::bf16;
    p.bias_once = fixed_before_runs(g, op.inputs[2]);
    if (p.bias_in != p.bias_read)
      p.notes.push_back("bias " + std::string(dtype_name(p.bias_in)) + ": cuBLASLt's FP8 kernels read a " +
                        std::string(dtype_name(p.bias_read)) + " bias with " + std::string(dtype_name(c.dtype)) +
                        " output: converting it " + when(p.bias_once));
  }
  return p;
}

}  // namespace gexec::cuda
