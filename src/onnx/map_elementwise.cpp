// Elementwise ops: Add, Sub, Mul, Div, Pow, Relu, Sigmoid, Tanh, Erf, Gelu, Cast, and Identity (no op at all).
#include <cmath>

#include "gexec/io/text.hpp"
#include "gexec/ir/graph_build.hpp"
#include "context.hpp"
#include "patterns.hpp"

namespace gexec::onnx_import {

namespace {

// numpy's broadcast of two shapes, or nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[out.size() - 1 - i] = std::max(da, db);
  }
  return out;
}

// The values of `from` broadcast to `to` (row-major).
std::vector<double> expand(const std::vector<double>& v, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  const size_t r = to.size();
  std::vector<int64_t> stride(r, 0);  // of `from`, aligned to the right; 0 along broadcast dimensions
  int64_t s = 1;
  for (size_t i = 0; i < from.size(); ++i) {
    const size_t f = from.size() - 1 - i, t = r - 1 - i;
    stride[t] = from[f] == 1 ? 0 : s;
    s *= from[f];
  }
  std::vector<double> out(size_t(numel(to)));
  std::vector<int64_t> idx(r, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t at = 0;
    for (size_t d = 0; d < r; ++d) at += idx[d] * stride[d];
    out[o] = v[size_t(at)];
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < to[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// The gexec dtype of an elementwise op's operand: f16, bf16 or f32 (gexec's ADD, MUL, RELU and
// GELU neither read nor write f8).
Result<DType> elementwise_dtype(Node& n, const Value& v, std::string_view role) {
  auto d = n.dtype_of(v, role);
  if (!d) return d.error();
  if (is_f8(*d))
    return n.refuse(std::string(role) + " " + quote_text(v.name) + " is " + type_name(v.type) +
                    "; gexec's elementwise ops take f16, bf16 and f32 (only CAST and products read f8)");
  return *d;
}

// An elementwise op over x, in the gexec shape x has (a constant: its default), writing output 0.
Status unary_of(Node& n, const Value& x, OpType type, std::optional<GeluApprox> approx = std::nullopt) {
  auto dtype = elementwise_dtype(n, x, "X");
  if (!dtype) return dtype.error();
  const std::vector<int64_t> shape = n.gexec_shape(x);
  auto tx = n.operand(x, shape, "X");
  if (!tx) return tx.error();
  const TensorId y = n.new_output(0, shape, *dtype, x.shape);
  Op& op = n.emit(type, {*tx}, y);
  if (approx) op.attrs.approximate = *approx;
  return {};
}

Status unary(Node& n, OpType type, std::optional<GeluApprox> approx = std::nullopt) {
  auto px = n.required(0, "X");
  if (!px) return px.error();
  return unary_of(n, **px, type, approx);
}

// The single value of v where it is a constant of one element (any rank), else nullopt.
std::optional<double> scalar_constant(Node& n, const Value& v, const std::string& who) {
  if (!v.constant() || numel(v.shape) != 1) return std::nullopt;
  auto data = n.builder().data_of(v, who);
  if (!data || (*data)->values.size() != 1 || !std::isfinite(float((*data)->values[0]))) return std::nullopt;
  return (*data)->values[0];
}

// x (of the result's shape) with a constant second operand: ADD/SUB/MUL/DIV with attrs.scalar.
Status with_scalar(Node& n, const Value& x, OpType type, double c, const std::vector<int64_t>& out, DType dtype) {
  const std::vector<int64_t> shape = n.gexec_shape(x);
  auto tx = n.operand(x, shape, "X");
  if (!tx) return tx.error();
  const TensorId z = n.new_output(0, shape, dtype, out);
  n.emit(type, {*tx}, z).attrs.constant = c;
  return {};
}

// Add, Sub, Mul and Div. Operands of one shape give ADD / SUB / MUL / DIV; a constant of one
// element gives the op with that scalar (c + x and c * x as x + c and x * c; c - x as -1 * x + c,
// exactly; c / x is refused); Add of a vector along the last dimension gives BIAS_ADD; a
// constant operand of another broadcast shape is expanded to the full shape. A computed operand
// that broadcasts otherwise is refused.
Status binary(Node& n, OpType type) {
  auto pa = n.required(0, "A");
  if (!pa) return pa.error();
  auto pb = n.required(1, "B");
  if (!pb) return pb.error();
  const Value* a = *pa;
  const Value* b = *pb;
  auto da = elementwise_dtype(n, *a, "A");
  if (!da) return da.error();
  auto db = elementwise_dtype(n, *b, "B");
  if (!db) return db.error();
  if (a->type != b->type)
    return n.refuse("A is " + type_name(a->type) + " and B is " + type_name(b->type) + "; ONNX takes one type for both");
  const auto out = broadcast(a->shape, b->shape);
  if (!out) return n.refuse("A " + onnx_shape_str(a->shape) + " and B " + onnx_shape_str(b->shape) + " do not broadcast");
  if (a->shape != *out && b->shape != *out)
    return n.refuse("A " + onnx_shape_str(a->shape) + " and B " + onnx_shape_str(b->shape) +
                    " broadcast to " + onnx_shape_str(*out) + ", larger than either; gexec broadcasts one operand to the other's shape only");
  // A scalar constant beside an operand of the result's shape.
  for (const Value* y : {b, a}) {
    const Value* x = y == b ? a : b;
    if (x->shape != *out) continue;
    const auto c = scalar_constant(n, *y, std::string(y == a ? "A " : "B ") + quote_text(y->name));
    if (!c) continue;
    if (y == b || type == OpType::ADD || type == OpType::MUL) return with_scalar(n, *x, type, *c, *out, *da);
    if (type == OpType::DIV)
      return n.refuse("A " + quote_text(a->name) + " is a constant scalar and B " + quote_text(b->name) +
                      " is not; gexec's DIV divides by a scalar, not a scalar by a tensor");
    // c - x: x * -1 is exact, and adding c rounds once, as the subtraction does.
    const std::vector<int64_t> shape = n.gexec_shape(*x);
    auto tx = n.operand(*x, shape, "B");
    if (!tx) return tx.error();
    Builder& b = n.builder();
    const TensorId neg = add_tensor(b.g, b.tensor_names.take(sanitize_name(x->name + "_neg")), shape, *da);
    b.reshapeable.push_back(false);
    n.emit(OpType::MUL, {*tx}, neg).attrs.constant = -1.0;
    const TensorId z = n.new_output(0, shape, *da, *out);
    n.emit(OpType::ADD, {neg}, z).attrs.constant = *c;
    return {};
  }
  Value expanded;  // a constant operand broadcast to the result's shape
  if (a->shape != b->shape) {
    // x has the result's shape, y broadcasts to it.
    const Value* x = a->shape == *out ? a : b;
    const Value* y = x == a ? b : a;
    const int64_t last = out->empty() ? 1 : out->back();
    bool trailing = !y->shape.empty() && y->shape.back() == last;
    for (size_t i = 0; trailing && i + 1 < y->shape.size(); ++i) trailing = y->shape[i] == 1;
    if (type == OpType::ADD && (trailing || (y->constant() && numel(y->shape) == 1)) && !out->empty()) {
      // BIAS_ADD adds b[i % n] to element i: right where x's gexec shape ends in the same n.
      std::vector<int64_t> xs = n.gexec_shape(*x);
      if (xs.back() != last) xs = default_gexec_shape(x->shape);
      auto tx = n.operand(*x, xs, "X");
      if (!tx) return tx.error();
      TensorId tb = kNone;
      if (trailing) {
        auto t = n.operand(*y, {last}, "the bias");
        if (!t) return t.error();
        tb = *t;
      } else {
        auto data = n.builder().data_of(*y, "B " + quote_text(y->name));
        if (!data) return n.refuse(data.error().message);
        tb = n.builder().add_constant(y->name + "_bias", {last}, *da, std::vector<double>(size_t(last), (*data)->values[0]));
      }
      const TensorId z = n.new_output(0, xs, *da, *out);
      n.emit(OpType::BIAS_ADD, {*tx, tb}, z);
      return {};
    }
    if (!y->constant())
      return n.refuse(std::string(y == a ? "A " : "B ") + quote_text(y->name) + " " + onnx_shape_str(y->shape) +
                      " is computed and broadcasts to " + onnx_shape_str(*out) +
                      (type == OpType::ADD ? "; gexec broadcasts only a vector along the last dimension (a bias)"
                                           : "; gexec's " + std::string(op_type_name(type)) +
                                                 " takes operands of one shape (a constant operand is expanded)"));
    auto data = n.builder().data_of(*y, std::string(y == a ? "A " : "B ") + quote_text(y->name));
    if (!data) return n.refuse(data.error().message);
    auto h = std::make_shared<HostTensor>();
    h->type = y->type;
    h->shape = *out;
    h->values = expand((*data)->values, y->shape, *out);
    expanded.name = y->name + "_expanded";
    expanded.type = y->type;
    expanded.shape = *out;
    expanded.data = std::move(h);
    (y == a ? a : b) = &expanded;
  }
  // One shape: the gexec shape of a computed operand (the first), else the default.
  const Value* runtime = !a->constant() ? a : !b->constant() ? b : nullptr;
  const std::vector<int64_t> shape = runtime ? n.gexec_shape(*runtime) : default_gexec_shape(*out);
  auto ta = n.operand(*a, shape, "A");
  if (!ta) return ta.error();
  auto tb = n.operand(*b, shape, "B");
  if (!tb) return tb.error();
  const TensorId z = n.new_output(0, shape, *da, *out);
  n.emit(type, {*ta, *tb}, z);
  return {};
}

}  // namespace

Status map_add(Node& n) { return binary(n, OpType::ADD); }
Status map_sub(Node& n) { return binary(n, OpType::SUB); }
Status map_mul(Node& n) { return binary(n, OpType::MUL); }
Status map_div(Node& n) { return binary(n, OpType::DIV); }
Status map_relu(Node& n) { return unary(n, OpType::RELU); }
Status map_sigmoid(Node& n) { return unary(n, OpType::SIGMOID); }
Status map_tanh(Node& n) { return unary(n, OpType::TANH); }
Status map_erf(Node& n) { return unary(n, OpType::ERF); }

// Pow: POW by Y, which must be a constant of one element (of any numeric type: the exponent, as
// gexec's POW computes with it, is its nearest f32) whose rank does not exceed X's.
Status map_pow(Node& n) {
  auto px = n.required(0, "X");
  if (!px) return px.error();
  auto py = n.required(1, "Y");
  if (!py) return py.error();
  const Value& x = **px;
  const Value& y = **py;
  if (!y.constant() || numel(y.shape) != 1)
    return n.refuse("Y " + quote_text(y.name) + " " + onnx_shape_str(y.shape) + (y.constant() ? " has more than one element" : " is computed") +
                    "; gexec's POW takes a constant exponent, one value");
  if (y.shape.size() > x.shape.size())
    return n.refuse("Y " + quote_text(y.name) + " " + onnx_shape_str(y.shape) + " has a higher rank than X " +
                    quote_text(x.name) + " " + onnx_shape_str(x.shape) + ", which makes the result another shape than X's");
  auto data = n.builder().data_of(y, "Y " + quote_text(y.name));
  if (!data) return n.refuse(data.error().message);
  const HostTensor& h = **data;
  const double p = h.values.size() == 1 ? h.values[0] : h.ints.size() == 1 ? double(h.ints[0]) : std::nan("");
  if (!std::isfinite(float(p)))
    return n.refuse("Y " + quote_text(y.name) + " is " + type_name(y.type) + " " + std::to_string(p) +
                    "; gexec's POW takes a finite exponent within f32's range");
  auto dtype = elementwise_dtype(n, x, "X");
  if (!dtype) return dtype.error();
  const std::vector<int64_t> shape = n.gexec_shape(x);
  auto tx = n.operand(x, shape, "X");
  if (!tx) return tx.error();
  const TensorId z = n.new_output(0, shape, *dtype, x.shape);
  n.emit(OpType::POW, {*tx}, z).attrs.constant = p;
  return {};
}

// Gelu (opset 20): approximate "none" (the erf form) or "tanh", gexec's GELU of either form.
Status map_gelu(Node& n) {
  auto approx = n.attr_string("approximate", "none");
  if (!approx) return approx.error();
  const auto a = parse_gelu_approx(*approx);
  if (!a) return n.refuse("approximate " + quote_text(*approx) + " is not one of none, tanh");
  return unary(n, OpType::GELU, *a);
}

// The group's constants were matched by value; here they are checked against X: X's type (ONNX
// takes one type for both operands of Mul, Add and Div), and a rank no higher than X's, so that
// every step has X's shape.
Status map_pattern(Node& n, const Pattern& p) {
  const auto it = n.builder().values.find(p.x);
  if (it == n.builder().values.end())
    return n.refuse("the " + p.what + " pattern reads " + quote_text(p.x) +
                    ", which is not a graph input, an initializer or the output of an earlier node");
  const Value& x = it->second;
  for (const PatternConstant& c : p.constants) {
    if (!c.exponent && c.type != x.type)
      return n.refuse("the " + p.what + " pattern's constant " + quote_text(c.value) + " is " + type_name(c.type) +
                      " and X " + quote_text(x.name) + " is " + type_name(x.type) + "; ONNX takes one type for both operands");
    if (c.shape.size() > x.shape.size())
      return n.refuse("the " + p.what + " pattern's constant " + quote_text(c.value) + " " + onnx_shape_str(c.shape) +
                      " has a higher rank than X " + quote_text(x.name) + " " + onnx_shape_str(x.shape) +
                      ", which makes the result another shape than X's; gexec's " + std::string(op_type_name(p.type)) +
                      " keeps X's shape");
  }
  if (p.type == OpType::GELU) return unary_of(n, x, p.type, p.approx);
  return unary_of(n, x, p.type);
}

// Cast to f16, bf16, f32 or f8 (e4m3fn, e5m2) from any of them, as gexec's CAST: round to nearest
// even, and to f8 saturating (ONNX's saturate=1, its default; saturate=0 is refused).
namespace {

Status cast_to(Node& n, int64_t to) {
  auto px = n.required(0, "X");
  if (!px) return px.error();
  const Value& x = **px;
  auto from = n.dtype_of(x, "X");
  if (!from) return from.error();
  const auto dto = gexec_dtype(int32_t(to));
  if (!dto || to != int64_t(int32_t(to)))
    return n.refuse("to " + type_name(int32_t(to)) + ": gexec casts to FLOAT, FLOAT16, BFLOAT16, FLOAT8E4M3FN and FLOAT8E5M2");
  if ((is_f8(*dto) || is_f8(*from)) && n.opset() < 19)
    return n.refuse("a Cast from or to " + type_name(int32_t(is_f8(*dto) ? to : x.type)) +
                    " is in ai.onnx from opset 19; this model imports opset " + std::to_string(n.opset()));
  auto saturate = n.attr_int("saturate", 1);
  if (!saturate) return saturate.error();
  if (*saturate == 0 && is_f8(*dto))
    return n.refuse("saturate=0 (values beyond the f8 range become NaN or infinity) is not gexec's CAST, which saturates");
  const std::vector<int64_t> shape = n.gexec_shape(x);
  auto tx = n.operand(x, shape, "X");
  if (!tx) return tx.error();
  const TensorId y = n.new_output(0, shape, *dto, x.shape);
  n.emit(OpType::CAST, {*tx}, y);
  return {};
}

}  // namespace

Status map_cast(Node& n) {
  if (!n.attr("to")) return n.refuse("attribute to is missing");
  auto to = n.attr_int("to", 0);
  if (!to) return to.error();
  return cast_to(n, *to);
}

// CastLike: Cast to the type of its second input (whose values it does not read).
Status map_castlike(Node& n) {
  auto like = n.required(1, "target_type");
  if (!like) return like.error();
  return cast_to(n, (*like)->type);
}

// Identity: its output is its input, under another name (a graph output gets a copy at the end).
Status map_identity(Node& n) {
  auto px = n.required(0, "X");
  if (!px) return px.error();
  return n.define_output(0, **px);
}

}  // namespace gexec::onnx_import
