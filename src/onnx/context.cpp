// The mapping's state and the node helpers (context.hpp).
#include "context.hpp"

#include "gexec/io/text.hpp"
#include "gexec/ir/graph_build.hpp"

namespace gexec::onnx_import {

std::string UniqueNames::take(const std::string& wanted) {
  if (used_.insert(wanted).second) return wanted;
  for (int k = 2;; ++k) {
    std::string s = wanted + "_" + std::to_string(k);
    if (used_.insert(s).second) return s;
  }
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) return std::nullopt;
    n *= d;
  }
  if (n > kMaxElements) return std::nullopt;
  return n;
}

std::vector<int64_t> default_gexec_shape(const std::vector<int64_t>& s) {
  if (s.empty()) return {1};
  if (s.size() <= 4) return s;
  int64_t lead = 1;
  for (size_t i = 0; i + 3 < s.size(); ++i) lead *= s[i];
  return {lead, s[s.size() - 3], s[s.size() - 2], s[s.size() - 1]};
}

std::string onnx_shape_str(const std::vector<int64_t>& shape) { return shape_str(shape); }

std::string sanitize_name(std::string_view in) {
  std::string s;
  s.reserve(in.size() + 1);
  for (char c : in) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-' || c == ':';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "_" + s;
  return s;
}

Result<std::shared_ptr<const HostTensor>> Builder::data_of(const Value& v, const std::string& who) {
  if (v.data) return v.data;
  if (!v.proto) return bad_input(who + " is computed, not a constant");
  auto it = decoded.find(v.proto);
  if (it != decoded.end()) return it->second;
  auto h = decode_tensor(*v.proto, base_dir, who, &data_files);
  if (!h) return h.error();
  auto shared = std::make_shared<const HostTensor>(std::move(*h));
  decoded.emplace(v.proto, shared);
  return shared;
}

TensorId Builder::add_constant(const std::string& base, std::vector<int64_t> shape, DType dtype,
                               SharedValues vals) {
  const TensorId id = add_tensor(g, tensor_names.take(sanitize_name(base)), std::move(shape), dtype, true);
  Init init;
  init.kind = InitKind::values;
  init.values = std::move(vals);
  g.tensor(id).init = std::move(init);
  reshapeable.push_back(false);
  return id;
}

Result<TensorId> Builder::materialize(const Value& v, const std::vector<int64_t>& shape, DType dtype,
                                      const std::string& who, Layout layout) {
  const auto key = std::make_tuple(v.name, shape, layout);
  if (auto it = materialized.find(key); it != materialized.end()) return it->second;
  auto data = data_of(v, who);
  if (!data) return data.error();
  // The first gexec tensor of a constant takes its name; one in another shape or layout says which.
  bool first = true;
  for (const auto& [k, id] : materialized) first = first && std::get<0>(k) != v.name;
  // A constant that is a graph output leaves the output's name to the copy that writes it.
  std::string base = output_names.count(v.name) ? v.name + "_const" : v.name;
  if (!first) {
    base += "_as";
    for (int64_t d : shape) base += "_" + std::to_string(d);
    if (layout == Layout::colmajor) base += "_colmajor";
  }
  // init.values are in the tensor's storage order.
  SharedValues values = (*data)->values;
  if (layout == Layout::colmajor) values = to_colmajor(values, shape[0], shape[1]);
  const TensorId id = add_constant(base, shape, dtype, std::move(values));
  g.tensor(id).layout = layout;
  materialized.emplace(key, id);
  return id;
}

std::string Node::where() const {
  std::string s = b_.file + ": node " + std::to_string(index_);
  if (!node_.name().empty()) s += " " + quote_text(node_.name());
  return s + " (" + name_text(node_.op_type()) + ", opset " + std::to_string(b_.opset) + ")";
}

Error Node::refuse(const std::string& why) const { return bad_input(where() + ": " + why); }

Value* Node::input(size_t i) {
  if (i >= size_t(node_.input_size()) || node_.input(int(i)).empty()) return nullptr;
  auto it = b_.values.find(node_.input(int(i)));
  return it == b_.values.end() ? nullptr : &it->second;
}

Result<Value*> Node::required(size_t i, std::string_view role) {
  if (Value* v = input(i)) return v;
  return refuse(std::string(role) + " (input " + std::to_string(i) + ") is missing");
}

Result<std::vector<int64_t>> Node::constant_ints(size_t i, std::string_view role) {
  auto v = required(i, role);
  if (!v) return v.error();
  const std::string who = std::string(role) + " " + quote_text((*v)->name);
  if (!(*v)->constant())
    return refuse(who + " is computed at run time; gexec needs it constant (an initializer or a Constant)");
  auto d = b_.data_of(**v, who);
  if (!d) return refuse(d.error().message);
  if ((*d)->type != kInt64 && (*d)->type != kInt32)
    return refuse(who + " is " + type_name((*d)->type) + "; expected INT64");
  return (*d)->ints;
}

Result<DType> Node::dtype_of(const Value& v, std::string_view role) const {
  if (!v.not_tensor.empty())
    return refuse(std::string(role) + " " + quote_text(v.name) + " is " + v.not_tensor);
  if (numel(v.shape) == 0)
    return refuse(std::string(role) + " " + quote_text(v.name) + " is empty, " + onnx_shape_str(v.shape) +
                  " (a gexec tensor holds at least one element)");
  if (auto d = gexec_dtype(v.type)) return *d;
  return refuse(std::string(role) + " " + quote_text(v.name) + " is " + type_name(v.type) +
                "; gexec computes on FLOAT, FLOAT16, BFLOAT16, FLOAT8E4M3FN and FLOAT8E5M2 (f32, f16, bf16, f8e4m3, f8e5m2)");
}

const pb::AttributeProto* Node::attr(std::string_view name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

namespace {

// The attribute's type as written, or inferred where an old exporter left `type` unset.
int attr_type(const pb::AttributeProto& a) {
  if (a.type() != pb::AttributeProto::UNDEFINED) return a.type();
  if (a.has_i()) return pb::AttributeProto::INT;
  if (a.has_f()) return pb::AttributeProto::FLOAT;
  if (a.has_s()) return pb::AttributeProto::STRING;
  if (a.has_t()) return pb::AttributeProto::TENSOR;
  if (a.ints_size() > 0) return pb::AttributeProto::INTS;
  if (a.floats_size() > 0) return pb::AttributeProto::FLOATS;
  return pb::AttributeProto::UNDEFINED;
}

const char* attr_type_name(int t) {
  switch (t) {
    case pb::AttributeProto::FLOAT: return "a FLOAT";
    case pb::AttributeProto::INT: return "an INT";
    case pb::AttributeProto::STRING: return "a STRING";
    case pb::AttributeProto::TENSOR: return "a TENSOR";
    case pb::AttributeProto::GRAPH: return "a GRAPH";
    case pb::AttributeProto::FLOATS: return "FLOATS";
    case pb::AttributeProto::INTS: return "INTS";
    case pb::AttributeProto::STRINGS: return "STRINGS";
    default: return "of another type";
  }
}

}  // namespace

Result<int64_t> Node::attr_int(std::string_view name, int64_t def) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return def;
  if (attr_type(*a) != pb::AttributeProto::INT)
    return refuse("attribute " + std::string(name) + " is " + attr_type_name(attr_type(*a)) + "; expected an INT");
  return a->i();
}

Result<double> Node::attr_float(std::string_view name, double def) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return def;
  if (attr_type(*a) != pb::AttributeProto::FLOAT)
    return refuse("attribute " + std::string(name) + " is " + attr_type_name(attr_type(*a)) + "; expected a FLOAT");
  return double(a->f());
}

Result<std::string> Node::attr_string(std::string_view name, const std::string& def) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return def;
  if (attr_type(*a) != pb::AttributeProto::STRING)
    return refuse("attribute " + std::string(name) + " is " + attr_type_name(attr_type(*a)) + "; expected a STRING");
  return a->s();
}

Result<std::optional<std::vector<int64_t>>> Node::attr_ints(std::string_view name) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return std::optional<std::vector<int64_t>>{};
  if (attr_type(*a) != pb::AttributeProto::INTS)
    return refuse("attribute " + std::string(name) + " is " + attr_type_name(attr_type(*a)) + "; expected INTS");
  return std::optional<std::vector<int64_t>>(std::vector<int64_t>(a->ints().begin(), a->ints().end()));
}

Result<std::optional<std::vector<double>>> Node::attr_floats(std::string_view name) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return std::optional<std::vector<double>>{};
  if (attr_type(*a) != pb::AttributeProto::FLOATS)
    return refuse("attribute " + std::string(name) + " is " + attr_type_name(attr_type(*a)) + "; expected FLOATS");
  return std::optional<std::vector<double>>(std::vector<double>(a->floats().begin(), a->floats().end()));
}

Result<const pb::TensorProto*> Node::attr_tensor(std::string_view name) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return static_cast<const pb::TensorProto*>(nullptr);
  if (attr_type(*a) != pb::AttributeProto::TENSOR || !a->has_t())
    return refuse("attribute " + std::string(name) + " is " + attr_type_name(attr_type(*a)) + "; expected a TENSOR");
  return &a->t();
}

std::vector<int64_t> Node::gexec_shape(const Value& v) const {
  if (v.tensor != kNone) return b_.g.tensor(v.tensor).shape;
  return default_gexec_shape(v.shape);
}

Result<TensorId> Node::operand(const Value& v, const std::vector<int64_t>& shape, std::string_view role,
                               Layout constant_layout) {
  const std::string who = std::string(role) + " " + quote_text(v.name);
  auto dtype = dtype_of(v, role);
  if (!dtype) return dtype.error();
  if (shape.empty() || shape.size() > 4)
    return refuse(who + " would need the gexec shape " + shape_str(shape) + "; gexec tensors have rank 1 to 4");
  if (numel(shape) != numel(v.shape))
    return refuse("internal: " + who + " " + onnx_shape_str(v.shape) + " asked for as " + shape_str(shape));
  if (v.constant()) {
    auto t = b_.materialize(v, shape, *dtype, who, shape.size() == 2 ? constant_layout : Layout::rowmajor);
    if (!t) return refuse(t.error().message);
    return *t;
  }
  if (v.tensor == kNone) return refuse("internal: " + who + " has no tensor");
  Tensor& t = b_.g.tensor(v.tensor);
  if (t.shape != shape) {
    if (!b_.reshapeable[size_t(v.tensor)])
      return refuse("needs " + who + " " + onnx_shape_str(v.shape) + " as " + shape_str(shape) +
                    ", but it is computed as " + shape_str(t.shape) +
                    " and gexec has no op that reshapes a computed tensor");
    t.shape = shape;
  }
  b_.reshapeable[size_t(v.tensor)] = false;
  return v.tensor;
}

TensorId Node::new_output(size_t i, const std::vector<int64_t>& gshape, DType dtype,
                          const std::vector<int64_t>& onnx_shape) {
  const std::string& name = node_.output(int(i));
  const TensorId id = add_tensor(b_.g, b_.tensor_names.take(sanitize_name(name)), gshape, dtype);
  b_.reshapeable.push_back(false);
  Value v;
  v.name = name;
  v.type = onnx_type(dtype);
  v.shape = onnx_shape;
  v.tensor = id;
  v.defined_by = where().substr(b_.file.size() + 2);
  b_.values[name] = std::move(v);
  return id;
}

Op& Node::emit(OpType type, std::vector<TensorId> inputs, TensorId output) {
  std::string base = node_.name().empty() ? node_.op_type() + "_" + std::to_string(index_) : node_.name();
  if (emitted_++ > 0) base += "_" + std::to_string(emitted_);
  return add_op(b_.g, b_.op_names.take(sanitize_name(base)), type, std::move(inputs), output);
}

Status Node::define_output(size_t i, Value v) {
  if (i >= size_t(node_.output_size()) || node_.output(int(i)).empty()) return {};
  v.name = node_.output(int(i));
  v.defined_by = where().substr(b_.file.size() + 2);
  b_.values[v.name] = std::move(v);
  return {};
}

}  // namespace gexec::onnx_import
