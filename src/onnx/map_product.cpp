// MatMul and Gemm as gexec products: MATMUL, and GEMM_BIAS_ACT with its bias or residual.
#include "gexec/io/text.hpp"
#include "context.hpp"

namespace gexec::onnx_import {

namespace {

// Both operands of a product have one floating type, which is its output's.
Result<DType> product_dtype(Node& n, const Value& a, const Value& b) {
  auto da = n.dtype_of(a, "A");
  if (!da) return da.error();
  auto db = n.dtype_of(b, "B");
  if (!db) return db.error();
  if (is_f8(*da) || is_f8(*db))
    return n.refuse(std::string(n.op()) + " of " + type_name(a.type) + " operands is not an ONNX product; gexec's f8 products come from graph files");
  if (*da != *db)
    return n.refuse("A is " + type_name(a.type) + " and B is " + type_name(b.type) + "; ONNX takes one type for both");
  return *da;
}

// The layout of a product's B: a constant [K, N] weight is stored K-contiguous (colmajor), as
// PyTorch's Linear keeps its weight; cuBLASLt's kernels read it faster so than N-contiguous at the
// sizes of an MLP (f32 at 256 x 11008 x 4096 on an H200: 469 against 561 us; docs/onnx.md).
Layout weight_layout(const Value& b) { return b.constant() ? Layout::colmajor : Layout::rowmajor; }

}  // namespace

// MatMul (numpy's matmul): A [..., M, K] x B [K, N]. A of rank 3 and up against a 2-D B folds its
// leading dimensions into M (one product); both of rank 3 with the same batch is a batched
// product; a 1-D operand is a row (A) or a column (B) whose dimension the result drops.
Status map_matmul(Node& n) {
  auto pa = n.required(0, "A");
  if (!pa) return pa.error();
  auto pb = n.required(1, "B");
  if (!pb) return pb.error();
  const Value& a = **pa;
  const Value& b = **pb;
  auto dtype = product_dtype(n, a, b);
  if (!dtype) return dtype.error();
  const std::vector<int64_t>& sa = a.shape;
  const std::vector<int64_t>& sb = b.shape;
  if (sa.empty() || sb.empty()) return n.refuse("a scalar operand is not a matrix product (MatMul needs rank 1 or more)");
  const int64_t k = sa.back();
  const int64_t kb = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  if (k != kb)
    return n.refuse("shapes disagree: A is " + onnx_shape_str(sa) + " so K=" + std::to_string(k) + ", B is " +
                    onnx_shape_str(sb) + " so K=" + std::to_string(kb));
  const int64_t nn = sb.size() == 1 ? 1 : sb.back();
  if (!checked_numel({numel(sa) / k, nn})) return n.refuse("the result holds more than 2^48 elements");

  if (sb.size() <= 2) {
    // One product: M is every dimension of A but the last.
    const int64_t m = numel(sa) / k;
    std::vector<int64_t> out(sa.begin(), sa.end() - 1);
    if (sb.size() == 2) out.push_back(nn);
    auto tb = n.operand(b, {k, nn}, "B", weight_layout(b));
    if (!tb) return tb.error();
    // A folded to [M, K]; where A is a computed rank-3 tensor that cannot be seen as [M, K], its
    // product is batched with B shared, which computes the same.
    std::vector<int64_t> a_shape{m, k}, c_shape{m, nn};
    const std::vector<int64_t> now = n.gexec_shape(a);
    if (a.tensor != kNone && !a.constant() && sa.size() == 3 && now == sa && !n.builder().reshapeable[size_t(a.tensor)]) {
      a_shape = sa;
      c_shape = {sa[0], sa[1], nn};
    }
    auto ta = n.operand(a, a_shape, "A");
    if (!ta) return ta.error();
    const TensorId c = n.new_output(0, c_shape, *dtype, out);
    n.emit(OpType::MATMUL, {*ta, *tb}, c);
    return {};
  }
  if (sa.size() == 3 && sb.size() == 3) {
    if (sa[0] != sb[0])
      return n.refuse("batched MatMul of A " + onnx_shape_str(sa) + " and B " + onnx_shape_str(sb) +
                      ": gexec's batched products take one batch size on both sides (no broadcast)");
    auto ta = n.operand(a, sa, "A");
    if (!ta) return ta.error();
    auto tb = n.operand(b, sb, "B");
    if (!tb) return tb.error();
    const std::vector<int64_t> out{sa[0], sa[1], nn};
    const TensorId c = n.new_output(0, out, *dtype, out);
    n.emit(OpType::MATMUL, {*ta, *tb}, c);
    return {};
  }
  return n.refuse("MatMul of A " + onnx_shape_str(sa) + " and B " + onnx_shape_str(sb) +
                  " is not supported: gexec maps B of rank 1 or 2 (any A), and A and B both of rank 3 with one batch size");
}

// Gemm: Y = alpha op(A) op(B) + beta C, as GEMM_BIAS_ACT. C of [N] or [1, N] is the bias; [M, N]
// the residual (times beta); a constant C of one value is a constant bias vector of N copies of
// beta * C, and a constant C of another broadcast shape ([M, 1]) is expanded to the [M, N] residual.
Status map_gemm(Node& n) {
  auto pa = n.required(0, "A");
  if (!pa) return pa.error();
  auto pb = n.required(1, "B");
  if (!pb) return pb.error();
  const Value& a = **pa;
  const Value& b = **pb;
  auto dtype = product_dtype(n, a, b);
  if (!dtype) return dtype.error();
  auto alpha = n.attr_float("alpha", 1.0);
  if (!alpha) return alpha.error();
  auto beta = n.attr_float("beta", 1.0);
  if (!beta) return beta.error();
  auto trans_a = n.attr_int("transA", 0);
  if (!trans_a) return trans_a.error();
  auto trans_b = n.attr_int("transB", 0);
  if (!trans_b) return trans_b.error();
  if ((*trans_a != 0 && *trans_a != 1) || (*trans_b != 0 && *trans_b != 1))
    return n.refuse("transA and transB are 0 or 1; found " + std::to_string(*trans_a) + " and " + std::to_string(*trans_b));
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return n.refuse("Gemm takes 2-D A and B; A is " + onnx_shape_str(a.shape) + ", B is " + onnx_shape_str(b.shape));
  const int64_t m = *trans_a ? a.shape[1] : a.shape[0], k = *trans_a ? a.shape[0] : a.shape[1];
  const int64_t kb = *trans_b ? b.shape[1] : b.shape[0], nn = *trans_b ? b.shape[0] : b.shape[1];
  if (k != kb)
    return n.refuse("shapes disagree: op(A) is [" + std::to_string(m) + "," + std::to_string(k) + "], op(B) is [" +
                    std::to_string(kb) + "," + std::to_string(nn) + "]");
  if (!checked_numel({m, nn})) return n.refuse("the result holds more than 2^48 elements");
  auto ta = n.operand(a, a.shape, "A");
  if (!ta) return ta.error();
  // B stored [N, K] (transB) is K-contiguous already.
  auto tb = n.operand(b, b.shape, "B", *trans_b ? Layout::rowmajor : weight_layout(b));
  if (!tb) return tb.error();
  std::vector<TensorId> inputs{*ta, *tb};
  bool residual = false;
  if (const Value* c = n.input(2)) {
    auto dc = n.dtype_of(*c, "C");
    if (!dc) return dc.error();
    const std::vector<int64_t>& sc = c->shape;
    // Broadcast to [M, N] (numpy's rules, from the right).
    bool broadcasts = sc.size() <= 2;
    for (size_t i = 0; broadcasts && i < sc.size(); ++i) {
      const int64_t want = i == 0 ? nn : m;
      const int64_t d = sc[sc.size() - 1 - i];
      broadcasts = d == 1 || d == want;
    }
    if (!broadcasts)
      return n.refuse("C " + onnx_shape_str(sc) + " does not broadcast to the result [" + std::to_string(m) + "," +
                      std::to_string(nn) + "]");
    const int64_t count = numel(sc);
    const bool vector = !sc.empty() && count == nn && sc.back() == nn && (sc.size() == 1 || sc[0] == 1);
    const bool full = sc.size() == 2 && sc[0] == m && sc[1] == nn;
    if (is_f8(*dc)) return n.refuse("C is " + type_name(c->type) + "; a bias or residual is f16, bf16 or f32");
    if (full || (!vector && c->constant() && count != 1)) {
      TensorId r = kNone;
      if (full) {
        auto t = n.operand(*c, {m, nn}, "C");
        if (!t) return t.error();
        r = *t;
      } else {
        // A constant C that varies along M only (or along both, as [1, 1] does not): expanded.
        auto data = n.builder().data_of(*c, "C " + quote_text(c->name));
        if (!data) return n.refuse(data.error().message);
        std::vector<double> full_values(size_t(m * nn));
        const int64_t rows = sc.size() == 2 ? sc[0] : 1, cols = sc.back();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < nn; ++j)
            full_values[size_t(i * nn + j)] = (*data)->values[size_t((rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j))];
        r = n.builder().add_constant(c->name + "_full", {m, nn}, *dc, std::move(full_values));
      }
      inputs.push_back(r);
      residual = true;
    } else if (vector || count == 1) {
      if (c->constant() && (count == 1 || *beta != 1.0)) {
        // beta * C rounded to C's type once, as ONNX's reference rounds that product.
        auto data = n.builder().data_of(*c, "C " + quote_text(c->name));
        if (!data) return n.refuse(data.error().message);
        std::vector<double> bias(static_cast<size_t>(nn));
        for (int64_t j = 0; j < nn; ++j) {
          // In float, then rounded to C's type, as numpy computes beta * C for ONNX's reference.
          const float product = float(*beta) * float((*data)->values[size_t(count == 1 ? 0 : j)]);
          uint32_t bits = 0;
          store_from_float(&bits, *dc, 0, product);
          bias[size_t(j)] = load_as_float(&bits, *dc, 0);
        }
        inputs.push_back(n.builder().add_constant(c->name + "_bias", {nn}, *dc, std::move(bias)));
      } else if (*beta == 1.0 && vector) {
        auto t = n.operand(*c, {nn}, "C");
        if (!t) return t.error();
        inputs.push_back(*t);
      } else {
        return n.refuse("C " + quote_text(c->name) + " " + onnx_shape_str(sc) +
                        (count == 1 ? " is one value computed at run time" : " is a vector computed at run time, with beta " + std::to_string(*beta)) +
                        "; gexec adds a computed C as a bias of [N] with beta 1 or as an [M, N] residual");
      }
    } else {
      return n.refuse("C " + quote_text(c->name) + " " + onnx_shape_str(sc) +
                      " is computed at run time and broadcasts along N; gexec adds a computed C as a bias of [N] or as an [M, N] residual");
    }
  }
  const std::vector<int64_t> out{m, nn};
  const TensorId y = n.new_output(0, out, *dtype, out);
  Op& op = n.emit(OpType::GEMM_BIAS_ACT, std::move(inputs), y);
  op.attrs.alpha = *alpha;
  op.attrs.trans_a = *trans_a != 0;
  op.attrs.trans_b = *trans_b != 0;
  op.attrs.residual = residual;
  if (residual) op.attrs.beta = *beta;  // otherwise beta is in the bias's values, or there is no C for it to scale
  return {};
}

}  // namespace gexec::onnx_import
