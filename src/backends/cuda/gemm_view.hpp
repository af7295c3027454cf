// How a gemm maps onto one column-major cuBLASLt call: operand order, transposes, sizes, strides
// and dtypes. Pure C++ (no CUDA headers), so that the kernel table and the CPU tests can use it.
#pragma once

#include <cstdint>

#include "gexec/ir/gemm_shape.hpp"

namespace gexec::cuda {

// One operand of D = op(X) * op(Y) as a column-major BLAS reads it.
struct ColOperand {
  bool is_b = false;                   // which graph operand this is: A or B
  bool trans = false;                  // op() transposes the stored matrix
  int64_t rows = 0, cols = 0, ld = 0;  // the stored matrix in column-major terms, before op()
  int64_t stride = 0;                  // elements between batch entries; 0 when shared
};

// D (m x n, column-major, leading dimension ld_d) = alpha * op(X) * op(Y), `batch` times.
struct GemmView {
  bool swapped = false;  // C is rowmajor, so D is C^T = op(B)^T op(A)^T: X is B, Y is A
  int64_t m = 0, n = 0, k = 0;
  ColOperand x, y;
  int64_t ld_d = 0, stride_d = 0;
  int64_t batch = 1;          // after folding a shared-B batch into one product
  bool bias_on_rows = false;  // the bias (indexed by C's column) runs along D's rows, where
                              // cuBLASLt's bias epilogue adds it (the vector's length is D's rows)
};

// A stored matrix with logical shape [r, c]: rowmajor is, read column-major, the [c, r] matrix
// with ld c (the transpose); colmajor is the [r, c] matrix itself with ld r.
inline ColOperand col_operand(bool is_b, int64_t r, int64_t c, Layout layout, bool trans_logical) {
  ColOperand o;
  o.is_b = is_b;
  const bool row = layout == Layout::rowmajor;
  o.rows = row ? c : r;
  o.cols = row ? r : c;
  o.ld = o.rows;
  // Stored rowmajor, the column-major matrix is already the transpose of the logical one.
  o.trans = trans_logical != row;
  return o;
}

inline GemmView gemm_view(const GemmShape& s) {
  GemmView v;
  // The stored shapes of A and B: op(A) is [M, K], op(B) is [K, N].
  const int64_t ar = s.trans_a ? s.k : s.m, ac = s.trans_a ? s.m : s.k;
  const int64_t br = s.trans_b ? s.n : s.k, bc = s.trans_b ? s.k : s.n;
  ColOperand a = col_operand(false, ar, ac, s.layout_a, s.trans_a);
  ColOperand b = col_operand(true, br, bc, s.layout_b, s.trans_b);
  a.stride = s.batch > 1 ? s.m * s.k : 0;
  b.stride = s.batch > 1 && s.b_batched ? s.k * s.n : 0;
  v.k = s.k;
  v.batch = s.batch;
  v.stride_d = s.batch > 1 ? s.m * s.n : 0;
  if (s.layout_c == Layout::colmajor) {
    // D is C itself: D = op(A) op(B).
    v.swapped = false;
    v.m = s.m;
    v.n = s.n;
    v.ld_d = s.m;
    v.x = a;
    v.y = b;
    v.bias_on_rows = false;
  } else {
    // D is C^T = op(B)^T op(A)^T: transposing an operand flips its op().
    v.swapped = true;
    v.m = s.n;
    v.n = s.m;
    v.ld_d = s.n;
    b.trans = !b.trans;
    a.trans = !a.trans;
    v.x = b;
    v.y = a;
    v.bias_on_rows = true;
    // A shared B with a plain rowmajor A: the batch entries of A and C lie side by side as
    // columns of one [K, batch*M] and one [N, batch*M] matrix, so one larger product does it.
    if (s.batch > 1 && !s.b_batched && !s.trans_a && s.layout_a == Layout::rowmajor) {
      v.n = s.batch * s.m;
      v.y.cols = v.n;
      v.y.stride = 0;
      v.stride_d = 0;
      v.batch = 1;
    }
  }
  return v;
}

// The dtypes of the cuBLASLt call. It multiplies A and B of one dtype (f16, bf16, or f32 through
// TF32) and writes D as the inputs' dtype or f32; anything else goes through conversions.
struct GemmTypes {
  DType ab = DType::f16;      // what cuBLASLt reads for both A and B
  DType d = DType::f16;       // what cuBLASLt writes
  bool convert_a = false;     // A is converted to `ab` first (exact: only ever widened to f32)
  bool convert_b = false;
  bool convert_out = false;   // D is a scratch buffer, converted to C's dtype afterwards
  bool tf32_allowed = true;   // KernelOptions::tf32: f32 operands may go through TF32 tensor cores
  bool tf32() const { return ab == DType::f32 && tf32_allowed; }
};

inline GemmTypes gemm_types(DType a, DType b, DType c) {
  GemmTypes t;
  // Mixed inputs meet in f32, which holds every f16 and bf16 value exactly (and so does TF32).
  t.ab = a == b ? a : DType::f32;
  t.convert_a = a != t.ab;
  t.convert_b = b != t.ab;
  const bool writable = c == DType::f32 || c == t.ab;
  t.d = writable ? c : DType::f32;
  t.convert_out = !writable;
  return t;
}

// Whether cuBLASLt has an epilogue for the activation: ReLU and the tanh GELU (lt_types.hpp),
// not SiLU or the erf GELU, which a tail kernel (or another product kernel) applies instead.
inline bool lt_has_epilogue(Act act) { return act == Act::none || act == Act::relu || act == Act::gelu; }

// Whether the bias and activation are added by cuBLASLt's epilogue: only where the bias runs
// along D's rows, and where it has the activation (lt_has_epilogue). The activation follows the
// bias, so it is fused only when the bias is (and the bias only when the activation is).
struct GemmEpilogue {
  bool fused = false;         // bias and activation (whichever are present) in the epilogue
  bool needs_tail = false;    // bias or activation applied by a separate kernel after the product
  bool convert_bias = false;  // fused, and the bias is not in D's dtype (which cuBLASLt requires)
};

inline GemmEpilogue gemm_epilogue(const GemmView& v, const GemmTypes& t, bool has_bias, DType bias_t, Act act) {
  GemmEpilogue e;
  const bool any = has_bias || act != Act::none;
  if (!any) return e;
  e.fused = lt_has_epilogue(act) && (!has_bias || v.bias_on_rows);
  e.needs_tail = !e.fused;
  e.convert_bias = e.fused && has_bias && bias_t != t.d;
  return e;
}

}  // namespace gexec::cuda
