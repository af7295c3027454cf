// The FP8 rules of the graph format (graph-format.md, "FP8"): scales, f8 operands, amax outputs.
#include "gexec/ir/f8_rules.hpp"

#include "gexec/ir/block_scale.hpp"

#include <charconv>
#include <cmath>

namespace gexec {
namespace {

std::string named(const Tensor& t) { return "\"" + t.name + "\" (" + std::string(dtype_name(t.dtype)) + ")"; }

// The shortest text that reads back to v.
std::string num(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::vector<std::string> check_scale(const Tensor& t) {
  std::vector<std::string> p;
  if (t.scale.is_default()) return p;
  if (!is_f8(t.dtype)) {
    p.push_back("a scale is allowed only on f8 tensors (f8e4m3, f8e5m2); this one is " +
                std::string(dtype_name(t.dtype)));
    return p;
  }
  if (t.scale.is_block()) {
    if (t.rank() != 2 && t.rank() != 3)
      p.push_back("a block scale needs a rank-2 tensor (or rank 3, a GROUPED_GEMM's W); the shape is " +
                  shape_str(t.shape));
    else if (t.scale.block[0] <= 0 || t.scale.block[1] <= 0)
      p.push_back("block " + shape_str({t.scale.block[0], t.scale.block[1]}) + " has a side that is not positive");
    return p;
  }
  if (t.scale.axis >= 0 && t.rank() != 2) {
    p.push_back("a per-axis scale needs a rank-2 tensor; the shape is " + shape_str(t.shape));
    return p;
  }
  if (t.scale.axis > 1 || t.scale.axis < -1) {
    p.push_back("scale axis " + std::to_string(t.scale.axis) + " is not 0 (per row) or 1 (per column)");
    return p;
  }
  const size_t want = t.scale.axis < 0 ? 1 : size_t(t.shape[size_t(t.scale.axis)]);
  if (t.scale.values.size() != want)
    p.push_back(std::to_string(t.scale.values.size()) + " scale values for axis " + std::to_string(t.scale.axis) +
                " of " + shape_str(t.shape) + ", which needs " + std::to_string(want));
  for (size_t i = 0; i < t.scale.values.size(); ++i) {
    const double v = t.scale.values[i];
    if (!(v > 0) || !std::isfinite(v)) {
      p.push_back("scale value " + std::to_string(i) + " is " + num(v) +
                  "; a scale must be positive and finite");
      break;
    }
  }
  return p;
}

std::string block_scale_values_problem(const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = float(values[i]);
    if (!(v > 0) || !std::isfinite(v))
      return "value " + std::to_string(i) + " is " + num(values[i]) +
             (values[i] > 0 && std::isfinite(values[i]) ? ", which is " + num(v) + " as the f32 S stores it" : "") +
             "; a scale must be a positive, finite f32";
  }
  return {};
}

std::vector<std::string> check_block_scale(const Graph& g, const Tensor& t) {
  std::vector<std::string> p;
  if (!t.scale.is_block() || !check_scale(t).empty()) return p;
  if (t.scale.tensor < 0 || size_t(t.scale.tensor) >= g.tensors.size()) {
    p.push_back("the block scale names no tensor");
    return p;
  }
  const Tensor& s = g.tensor(t.scale.tensor);
  const std::vector<int64_t> want = block_scale_shape(t);
  if (s.dtype != DType::f32 || s.shape != want || s.layout != Layout::rowmajor)
    p.push_back("block scale tensor \"" + s.name + "\" must be f32 " + shape_str(want) + ", row-major (blocks of " +
                shape_str({t.scale.block[0], t.scale.block[1]}) + " over " + shape_str(t.shape) + "); it is " +
                std::string(dtype_name(s.dtype)) + " " + shape_str(s.shape) +
                (s.layout == Layout::rowmajor ? "" : " colmajor"));
  if (s.init && (s.init->kind == InitKind::values || s.init->kind == InitKind::file)) {
    if (const std::string why = block_scale_values_problem(s.init->values.get()); !why.empty())
      p.push_back("block scale \"" + s.name + "\" " + why);
  } else if (s.init && (s.init->kind == InitKind::normal ||
                        (s.init->kind == InitKind::uniform &&
                         (!(float(s.init->low) > 0) || !std::isfinite(float(s.init->high)))) ||
                        s.init->kind == InitKind::zeros)) {
    p.push_back("block scale \"" + s.name + "\" is drawn with values that are not all positive; give it values, a "
                "file, ones, or uniform with low > 0");
  }
  return p;
}

bool is_f8_product(const Graph& g, const Op& op) {
  if (op.type != OpType::MATMUL && op.type != OpType::GEMM_BIAS_ACT) return false;
  if (op.inputs.size() < 2) return false;
  return is_f8(g.tensor(op.inputs[0]).dtype) && is_f8(g.tensor(op.inputs[1]).dtype);
}

std::vector<std::string> check_f8_op(const Graph& g, const Op& op) {
  std::vector<std::string> p;
  const std::string type(op_type_name(op.type));
  const bool product = op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT;
  if (op.type == OpType::GROUPED_GEMM) {  // X and W may be f8 (both), as a product's A and B; Y and the bias not
    const Tensor& x = g.tensor(op.inputs[0]);
    const Tensor& w = g.tensor(op.inputs[1]);
    if (is_f8(x.dtype) != is_f8(w.dtype))
      p.push_back(type + " mixes " + named(x) + " and " + named(w) + "; an f8 product needs both X and W in f8");
    if (x.dtype == DType::f8e5m2 && w.dtype == DType::f8e5m2)
      p.push_back(type + " multiplies f8e5m2 by f8e5m2, which is not supported; make one operand f8e4m3");
    for (TensorId t : op.outputs)
      if (is_f8(g.tensor(t).dtype))
        p.push_back(type + " writes " + named(g.tensor(t)) + "; a grouped product writes f16, bf16 or f32");
    return p;
  }
  if (!product && op.type != OpType::CAST) {
    for (TensorId t : op.inputs)
      if (is_f8(g.tensor(t).dtype))
        p.push_back(type + " reads " + named(g.tensor(t)) + "; only MATMUL, GEMM_BIAS_ACT and CAST read f8 tensors");
    for (TensorId t : op.outputs)
      if (is_f8(g.tensor(t).dtype))
        p.push_back(type + " writes " + named(g.tensor(t)) + "; only MATMUL, GEMM_BIAS_ACT and CAST write f8 tensors");
    return p;
  }
  const Tensor& out = g.tensor(op.outputs[0]);
  // Rank-3 blocks are a GROUPED_GEMM W's (the experts' weights, one S matrix each): given, not
  // computed or read by a CAST.
  for (const Tensor* t : {&g.tensor(op.inputs[0]), &out})
    if (op.type == OpType::CAST && t->scale.is_block() && t->rank() != 2)
      p.push_back(type + (t == &out ? " writes " : " reads ") + named(*t) + " with a block scale at rank " +
                  std::to_string(t->rank()) + "; a CAST quantizes to and dequantizes from block scales at rank 2");
  if (writes_block_scale(g, op)) {
    // The quantizing CAST: outputs Y and Y's S (whose dtype and shape check_block_scale checks).
  } else if (out.scale.is_block() && op.outputs.size() > 1) {
    p.push_back(type + " writes " + named(out) + " with a block scale, so its second output is that scale \"" +
                (out.scale.tensor >= 0 ? g.tensor(out.scale.tensor).name : std::string("?")) + "\", not \"" +
                g.tensor(op.outputs[1]).name + "\" (a block-scaled result has no amax output)");
  } else if (op.outputs.size() > 1) {
    const Tensor& amax = g.tensor(op.outputs[1]);
    if (!is_f8(out.dtype))
      p.push_back(type + " has a second output (amax) " + named(amax) + ", which only an f8 first output takes; " +
                  named(out) + " is not f8");
    else if (amax.dtype != DType::f32 || amax.shape != std::vector<int64_t>{1})
      p.push_back(type + " amax output \"" + amax.name + "\" must be f32 of shape [1]; it is " +
                  std::string(dtype_name(amax.dtype)) + " " + shape_str(amax.shape));
  }
  if (!product) return p;
  const Tensor& a = g.tensor(op.inputs[0]);
  const Tensor& b = g.tensor(op.inputs[1]);
  const bool fa = is_f8(a.dtype), fb = is_f8(b.dtype);
  if (fa != fb)
    p.push_back(type + " mixes " + named(a) + " and " + named(b) + "; an f8 product needs both A and B in f8");
  if (a.dtype == DType::f8e5m2 && b.dtype == DType::f8e5m2)
    p.push_back(type + " multiplies f8e5m2 by f8e5m2, which is not supported; make one operand f8e4m3");
  // The inputs after A and B: [Bias], [R] or [Bias, R] (a residual is always last).
  const bool residual = op.type == OpType::GEMM_BIAS_ACT && op.attrs.residual;
  const size_t bias_at = op.inputs.size() == (residual ? 4u : 3u) ? 2 : 0;
  if (bias_at && is_f8(g.tensor(op.inputs[bias_at]).dtype))
    p.push_back(type + " bias " + named(g.tensor(op.inputs[bias_at])) + " must be f16, bf16 or f32");
  if (residual && op.inputs.size() > 2 && is_f8(g.tensor(op.inputs.back()).dtype))
    p.push_back(type + " residual R " + named(g.tensor(op.inputs.back())) +
                " must be f16, bf16 or f32; dequantize it with a CAST first");
  if (is_f8(out.dtype) && !(fa && fb))
    p.push_back(type + " writes " + named(out) + " from inputs that are not f8; an f8 output needs f8 inputs");
  if (out.dtype == DType::f8e5m2 && fa && fb && a.dtype != DType::f8e5m2 && b.dtype != DType::f8e5m2)
    p.push_back(type + " writes f8e5m2 output " + named(out) +
                " from f8e4m3 operands; an f8e5m2 output needs an f8e5m2 operand");
  const bool ba = a.scale.is_block(), bb = b.scale.is_block();
  if (ba != bb)
    p.push_back(type + " has a block scale on " + (ba ? "A " + named(a) : "B " + named(b)) + " but not on " +
                (ba ? "B " + named(b) : "A " + named(a)) + "; block scaling needs both operands block-scaled");
  // Each operand's blocks: 1 x 128 along K, or 128 x 128 (the recipe's activations and weights).
  auto block_problem = [&](const Tensor& t, const char* which, bool k_is_column) -> std::string {
    if (!t.scale.is_block()) return "";
    const std::array<int64_t, 2> vec = k_is_column ? std::array<int64_t, 2>{1, 128} : std::array<int64_t, 2>{128, 1};
    if (t.scale.block == vec || t.scale.block == std::array<int64_t, 2>{128, 128}) return "";
    return type + " " + which + " " + named(t) + " has blocks " + shape_str({t.scale.block[0], t.scale.block[1]}) +
           "; a product takes " + shape_str({vec[0], vec[1]}) + " (one scale per 128 along K) or [128,128]";
  };
  if ((ba || bb || out.scale.is_block()) && is_f8(out.dtype))
    p.push_back(type + " writes " + named(out) + (out.scale.is_block() ? " with a block scale" : "") +
                "; a product with block scales writes f16, bf16 or f32 (quantize its result with a CAST)");
  if (ba && bb) {
    for (std::string s : {block_problem(a, "A", !op.attrs.trans_a), block_problem(b, "B", op.attrs.trans_b)})
      if (!s.empty()) p.push_back(s);
    if (a.rank() != 2 || b.rank() != 2)
      p.push_back(type + " with block scales multiplies rank-2 operands only");
  }
  if (op.attrs.fast_accum && !(fa && fb))
    p.push_back(type + " has fast_accum, which applies only to products of f8 tensors; A is " +
                std::string(dtype_name(a.dtype)) + ", B is " + std::string(dtype_name(b.dtype)));
  return p;
}

}  // namespace gexec
