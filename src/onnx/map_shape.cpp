// Shape arithmetic: Shape, and Gather, Slice and Concat of constant integer vectors. Exporters
// compute a Reshape's target from the input's shape (PyTorch's `x.view(x.size()[:-1] + (n,))`
// becomes Shape -> Slice -> Concat -> Reshape); gexec knows every shape once the dynamic dimensions
// are bound, so these fold to constants while the model is mapped. Gather, Slice and Concat of
// anything else (values computed at run time, floating data, more than one axis) are refused: gexec
// has no op that moves elements.
#include <algorithm>

#include "gexec/io/text.hpp"
#include "context.hpp"

namespace gexec::onnx_import {

namespace {

// The integers of a constant vector input of Gather, Slice or Concat; else why not.
Result<std::vector<int64_t>> int_vector(Node& n, size_t i, std::string_view role) {
  auto pv = n.required(i, role);
  if (!pv) return pv.error();
  const Value& v = **pv;
  const std::string who = std::string(role) + " " + quote_text(v.name);
  if (!v.constant())
    return n.refuse(who + " is computed at run time: gexec folds " + n.op() +
                    " of constant integer vectors only (shape arithmetic), it has no op that moves elements");
  if (v.shape.size() > 1)
    return n.refuse(who + " is " + onnx_shape_str(v.shape) + ": gexec folds " + n.op() + " of integer vectors (rank 0 or 1) only");
  return n.constant_ints(i, role);
}

Status define_ints(Node& n, std::vector<int64_t> ints, std::vector<int64_t> shape) {
  auto h = std::make_shared<HostTensor>();
  h->type = kInt64;
  h->shape = shape;
  h->ints = std::move(ints);
  Value v;
  v.type = kInt64;
  v.shape = std::move(shape);
  v.data = std::move(h);
  return n.define_output(0, std::move(v));
}

// ONNX's clamping of a start or end index into [0, size] (negative counts from the end).
int64_t clamp_index(int64_t i, int64_t size) {
  if (i < 0) i += size;
  return std::clamp<int64_t>(i, 0, size);
}

}  // namespace

// Shape: the input's dimensions [start, end) (opset 15's attributes; all of them before).
Status map_shape(Node& n) {
  auto px = n.required(0, "data");
  if (!px) return px.error();
  const Value& x = **px;
  const int64_t r = int64_t(x.shape.size());
  auto start = n.attr_int("start", 0);
  if (!start) return start.error();
  auto end = n.attr_int("end", r);
  if (!end) return end.error();
  const int64_t b = clamp_index(*start, r), e = clamp_index(*end, r);
  if (b >= e) return n.refuse("dimensions [" + std::to_string(*start) + ", " + std::to_string(*end) + ") of " +
                              onnx_shape_str(x.shape) + " are none: gexec tensors are not empty");
  std::vector<int64_t> dims(x.shape.begin() + b, x.shape.begin() + e);
  const int64_t count = int64_t(dims.size());
  return define_ints(n, std::move(dims), {count});
}

// Gather along axis 0 of a constant integer vector, at constant indices.
Status map_gather(Node& n) {
  auto axis = n.attr_int("axis", 0);
  if (!axis) return axis.error();
  auto data = int_vector(n, 0, "data");
  if (!data) return data.error();
  if (n.input(0)->shape.size() != 1)
    return n.refuse("data is a scalar: Gather takes a vector or more");
  if (*axis != 0 && *axis != -1) return n.refuse("axis " + std::to_string(*axis) + " of a vector: expected 0 or -1");
  auto pi = n.required(1, "indices");
  if (!pi) return pi.error();
  const std::vector<int64_t> index_shape = (*pi)->shape;
  auto indices = int_vector(n, 1, "indices");
  if (!indices) return indices.error();
  const int64_t size = int64_t(data->size());
  std::vector<int64_t> out;
  for (int64_t i : *indices) {
    if (i < -size || i >= size)
      return n.refuse("index " + std::to_string(i) + " is outside [" + std::to_string(-size) + ", " + std::to_string(size - 1) + "]");
    out.push_back((*data)[size_t(i < 0 ? i + size : i)]);
  }
  return define_ints(n, std::move(out), index_shape);
}

// Slice of a constant integer vector: starts, ends and (optional) axes and steps, one entry each.
Status map_slice(Node& n) {
  auto data = int_vector(n, 0, "data");
  if (!data) return data.error();
  if (n.input(0)->shape.size() != 1) return n.refuse("data is a scalar: Slice takes a vector or more");
  auto one = [&n](size_t i, std::string_view role, int64_t def) -> Result<int64_t> {
    if (!n.input(i)) return def;
    auto v = int_vector(n, i, role);
    if (!v) return v.error();
    if (v->size() != 1) return n.refuse(std::string(role) + " has " + std::to_string(v->size()) + " entries; a vector has one axis");
    return (*v)[0];
  };
  auto start = one(1, "starts", 0), end = one(2, "ends", 0), axis = one(3, "axes", 0), step = one(4, "steps", 1);
  for (const auto* r : {&start, &end, &axis, &step})
    if (!*r) return r->error();
  if (*axis != 0 && *axis != -1) return n.refuse("axes " + std::to_string(*axis) + " of a vector: expected 0 or -1");
  if (*step == 0) return n.refuse("steps is 0");
  const int64_t size = int64_t(data->size());
  std::vector<int64_t> out;
  if (*step > 0) {
    for (int64_t i = clamp_index(*start, size), e = clamp_index(*end, size); i < e; i += *step) out.push_back((*data)[size_t(i)]);
  } else {  // backwards: starts and ends clamp into [-1, size - 1]
    const auto back = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, -1, size - 1); };
    for (int64_t i = back(*start), e = back(*end); i > e; i += *step) out.push_back((*data)[size_t(i)]);
  }
  if (out.empty()) return n.refuse("the slice of " + onnx_shape_str(*data) + " is empty: gexec tensors are not empty");
  const int64_t count = int64_t(out.size());
  return define_ints(n, std::move(out), {count});
}

// Concat of constant integer vectors (axis 0).
Status map_concat(Node& n) {
  auto axis = n.attr_int("axis", 0);
  if (!axis) return axis.error();
  if (n.input_count() == 0) return n.refuse("it has no inputs");
  std::vector<int64_t> out;
  for (size_t i = 0; i < n.input_count(); ++i) {
    const std::string role = "input " + std::to_string(i);
    auto v = int_vector(n, i, role);
    if (!v) return v.error();
    if (n.input(i)->shape.size() != 1) return n.refuse(role + " is a scalar: Concat takes vectors");
    out.insert(out.end(), v->begin(), v->end());
  }
  if (*axis != 0 && *axis != -1) return n.refuse("axis " + std::to_string(*axis) + " of vectors: expected 0 or -1");
  const int64_t count = int64_t(out.size());
  return define_ints(n, std::move(out), {count});
}

}  // namespace gexec::onnx_import
