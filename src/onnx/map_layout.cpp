// Ops that only say what a tensor's elements are, or how they are labelled: Constant, and the
// relabelling Reshape, Flatten, Squeeze and Unsqueeze (no gexec op: the value keeps its tensor or
// its constant data under a new shape), and Transpose (of a constant: its data transposed).
#include <algorithm>

#include "gexec/io/text.hpp"
#include "context.hpp"

namespace gexec::onnx_import {

namespace {

// The value `x` under `shape` (the same elements in the same order).
Status relabel(Node& n, const Value& x, std::vector<int64_t> shape) {
  for (int64_t d : shape)
    if (d <= 0) return n.refuse("the result " + onnx_shape_str(shape) + " has a dimension of size " + std::to_string(d) + "; gexec tensors are not empty");
  if (numel(shape) != numel(x.shape))
    return n.refuse("the result " + onnx_shape_str(shape) + " holds " + std::to_string(numel(shape)) +
                    " elements; the input " + onnx_shape_str(x.shape) + " holds " + std::to_string(numel(x.shape)));
  Value v = x;
  v.shape = std::move(shape);
  return n.define_output(0, std::move(v));
}

// An axis in [-rank, rank - 1] as an index.
Result<int64_t> axis_index(Node& n, int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank)
    return n.refuse(std::string(what) + " " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", " +
                    std::to_string(rank - 1) + "]");
  return axis < 0 ? axis + rank : axis;
}

std::shared_ptr<HostTensor> host(int32_t type, std::vector<int64_t> shape) {
  auto h = std::make_shared<HostTensor>();
  h->type = type;
  h->shape = std::move(shape);
  return h;
}

}  // namespace

// Constant: one of value (a tensor), value_float(s), value_int(s); the others hold no numbers.
Status map_constant(Node& n) {
  if (n.proto().attribute_size() != 1)
    return n.refuse("a Constant has exactly one attribute; this one has " + std::to_string(n.proto().attribute_size()));
  const pb::AttributeProto& a = n.proto().attribute(0);
  Value v;
  std::shared_ptr<HostTensor> h;
  // Each read through the typed accessors: a value_float written as an INT is refused, not read as 0.
  if (a.name() == "value") {
    auto t = n.attr_tensor("value");
    if (!t) return t.error();
    v.type = (*t)->data_type();
    v.shape.assign((*t)->dims().begin(), (*t)->dims().end());
    v.proto = *t;
    if (!checked_numel(v.shape)) return n.refuse("the constant's shape " + onnx_shape_str(v.shape) + " is out of range");
  } else if (a.name() == "value_float") {
    auto f = n.attr_float("value_float", 0);
    if (!f) return f.error();
    h = host(kFloat, {});
    h->values = {*f};
  } else if (a.name() == "value_floats") {
    auto fs = n.attr_floats("value_floats");
    if (!fs) return fs.error();
    h = host(kFloat, {int64_t((*fs)->size())});
    h->values.edit() = std::move(**fs);
  } else if (a.name() == "value_int") {
    auto i = n.attr_int("value_int", 0);
    if (!i) return i.error();
    h = host(kInt64, {});
    h->ints = {*i};
  } else if (a.name() == "value_ints") {
    auto is = n.attr_ints("value_ints");
    if (!is) return is.error();
    h = host(kInt64, {int64_t((*is)->size())});
    h->ints = std::move(**is);
  } else {
    return n.refuse("attribute " + name_text(a.name()) + " is not supported (a Constant that gexec maps holds value, value_float(s) or value_int(s))");
  }
  if (h) {
    v.type = h->type;
    v.shape = h->shape;
    v.data = std::move(h);
  }
  return n.define_output(0, std::move(v));
}

// Reshape with a constant shape: 0 copies the input's dimension (unless allowzero), -1 is inferred.
Status map_reshape(Node& n) {
  auto px = n.required(0, "data");
  if (!px) return px.error();
  const Value& x = **px;
  auto want = n.constant_ints(1, "shape");
  if (!want) return want.error();
  auto allowzero = n.attr_int("allowzero", 0);
  if (!allowzero) return allowzero.error();
  std::vector<int64_t> out;
  int infer = -1;
  for (size_t i = 0; i < want->size(); ++i) {
    int64_t d = (*want)[i];
    if (d == 0 && *allowzero == 0) {
      if (i >= x.shape.size())
        return n.refuse("shape " + onnx_shape_str(*want) + " copies dimension " + std::to_string(i) + " of " + onnx_shape_str(x.shape) + ", which has none");
      d = x.shape[i];
    } else if (d == -1) {
      if (infer >= 0) return n.refuse("shape " + onnx_shape_str(*want) + " has two -1");
      infer = int(i);
      d = 1;
    } else if (d < 0) {
      return n.refuse("shape " + onnx_shape_str(*want) + " has the dimension " + std::to_string(d));
    }
    out.push_back(d);
  }
  if (!checked_numel(out))
    return n.refuse("shape " + onnx_shape_str(*want) + " holds more than 2^48 elements");
  if (infer >= 0) {
    const int64_t known = numel(out);
    if (known == 0 || numel(x.shape) % known != 0)
      return n.refuse("shape " + onnx_shape_str(*want) + " does not divide the " + std::to_string(numel(x.shape)) + " elements of " + onnx_shape_str(x.shape));
    out[size_t(infer)] = numel(x.shape) / known;
  }
  return relabel(n, x, std::move(out));
}

// Flatten at axis: [d0 * ... * d(axis-1), d(axis) * ... ].
Status map_flatten(Node& n) {
  auto px = n.required(0, "input");
  if (!px) return px.error();
  const Value& x = **px;
  auto axis = n.attr_int("axis", 1);
  if (!axis) return axis.error();
  const int64_t r = int64_t(x.shape.size());
  if (*axis < -r || *axis > r)
    return n.refuse("axis " + std::to_string(*axis) + " is outside [" + std::to_string(-r) + ", " + std::to_string(r) + "]");
  const int64_t a = *axis < 0 ? *axis + r : *axis;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < a ? outer : inner) *= x.shape[size_t(i)];
  return relabel(n, x, {outer, inner});
}

// Squeeze the given axes (each of size 1), or every dimension of size 1.
Status map_squeeze(Node& n) {
  auto px = n.required(0, "data");
  if (!px) return px.error();
  const Value& x = **px;
  const int64_t r = int64_t(x.shape.size());
  std::vector<bool> drop(size_t(r), false);
  if (n.input(1)) {
    auto axes = n.constant_ints(1, "axes");
    if (!axes) return axes.error();
    for (int64_t axis : *axes) {
      auto a = axis_index(n, axis, r, "axis");
      if (!a) return a.error();
      if (x.shape[size_t(*a)] != 1)
        return n.refuse("axis " + std::to_string(axis) + " of " + onnx_shape_str(x.shape) + " has size " + std::to_string(x.shape[size_t(*a)]) + ", not 1");
      drop[size_t(*a)] = true;
    }
  } else {
    for (int64_t i = 0; i < r; ++i) drop[size_t(i)] = x.shape[size_t(i)] == 1;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[size_t(i)]) out.push_back(x.shape[size_t(i)]);
  return relabel(n, x, std::move(out));
}

// Unsqueeze: a dimension of size 1 at each axis (of the result).
Status map_unsqueeze(Node& n) {
  auto px = n.required(0, "data");
  if (!px) return px.error();
  const Value& x = **px;
  auto axes = n.constant_ints(1, "axes");
  if (!axes) return axes.error();
  const int64_t r = int64_t(x.shape.size()) + int64_t(axes->size());
  std::vector<bool> one(size_t(r), false);
  for (int64_t axis : *axes) {
    auto a = axis_index(n, axis, r, "axis");
    if (!a) return a.error();
    if (one[size_t(*a)]) return n.refuse("axes " + onnx_shape_str(*axes) + " name axis " + std::to_string(*a) + " twice");
    one[size_t(*a)] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(one[size_t(i)] ? 1 : x.shape[next++]);
  return relabel(n, x, std::move(out));
}

// Transpose: of a constant, its data permuted; of a computed value, only a permutation that keeps
// the order of the dimensions larger than 1 (a relabel). Anything else would need a transpose kernel.
Status map_transpose(Node& n) {
  auto px = n.required(0, "data");
  if (!px) return px.error();
  const Value& x = **px;
  const size_t r = x.shape.size();
  auto perm_attr = n.attr_ints("perm");
  if (!perm_attr) return perm_attr.error();
  std::vector<int64_t> perm;
  if (*perm_attr) {
    perm = **perm_attr;
  } else {
    for (size_t i = 0; i < r; ++i) perm.push_back(int64_t(r - 1 - i));
  }
  std::vector<bool> seen(r, false);
  bool valid = perm.size() == r;
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < int64_t(r) && !seen[size_t(p)];
    if (valid) seen[size_t(p)] = true;
  }
  if (!valid) return n.refuse("perm " + onnx_shape_str(perm) + " is not a permutation of the " + std::to_string(r) + " axes of " + onnx_shape_str(x.shape));
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(x.shape[size_t(p)]);
  if (!x.constant()) {
    std::vector<int64_t> order;  // the input axes larger than 1, in the order the result has them
    for (int64_t p : perm)
      if (x.shape[size_t(p)] > 1) order.push_back(p);
    if (!std::is_sorted(order.begin(), order.end()))
      return n.refuse("Transpose of " + quote_text(x.name) + " " + onnx_shape_str(x.shape) + " by perm " + onnx_shape_str(perm) +
                      ", a value computed at run time: gexec transposes constants only (an initializer or a Constant)");
    return relabel(n, x, std::move(out));
  }
  auto data = n.builder().data_of(x, "data " + quote_text(x.name));
  if (!data) return n.refuse(data.error().message);
  const HostTensor& in = **data;
  auto h = host(in.type, out);
  // Input strides; the result walks its own index and reads input element sum(idx[j] * stride[perm[j]]).
  std::vector<int64_t> stride(r, 1);
  for (size_t i = r; i-- > 1;) stride[i - 1] = stride[i] * x.shape[i];
  const bool ints = !in.ints.empty() || in.values.empty();
  const int64_t count = numel(out);
  std::vector<double>& values = h->values.edit();
  if (ints) h->ints.resize(size_t(count));
  else values.resize(size_t(count));
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < count; ++o) {
    int64_t at = 0;
    for (size_t j = 0; j < r; ++j) at += idx[j] * stride[size_t(perm[j])];
    if (ints) h->ints[size_t(o)] = in.ints[size_t(at)];
    else values[size_t(o)] = in.values[size_t(at)];
    for (size_t j = r; j-- > 0;) {
      if (++idx[j] < out[j]) break;
      idx[j] = 0;
    }
  }
  Value v;
  v.type = x.type;
  v.shape = std::move(out);
  v.data = std::move(h);
  return n.define_output(0, std::move(v));
}

}  // namespace gexec::onnx_import
