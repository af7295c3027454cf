// Small ONNX models built in code for the tests, with the schema's generated classes.
#pragma once

#if GEXEC_HAVE_ONNX

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "gexec/ir/dtype.hpp"
#include "gexec_onnx.pb.h"

namespace gexec::test {

namespace pb = gexec::onnx_pb;

// A dimension: a size, or a name (dim_param).
using Dim = std::variant<int64_t, std::string>;

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 17) {
    m_.set_ir_version(8);
    m_.set_producer_name("gexec tests");
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_.mutable_graph()->set_name("test");
  }

  pb::ModelProto& proto() { return m_; }
  pb::GraphProto& graph() { return *m_.mutable_graph(); }

  void input(const std::string& name, int32_t type, const std::vector<Dim>& dims) {
    value_info(graph().add_input(), name, type, dims);
  }
  void output(const std::string& name, int32_t type, const std::vector<Dim>& dims) {
    value_info(graph().add_output(), name, type, dims);
  }

  // An f32 initializer, in raw_data (or float_data when typed).
  pb::TensorProto& init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v,
                            bool typed = false) {
    pb::TensorProto& t = tensor(name, 1, dims);
    if (typed) {
      for (float f : v) t.add_float_data(f);
    } else {
      t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    }
    return t;
  }
  // An f16 (type 10) or bf16 (16) initializer from values, as bits in raw_data or int32_data.
  pb::TensorProto& init_16(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                           const std::vector<float>& v, bool typed = false) {
    pb::TensorProto& t = tensor(name, type, dims);
    std::string raw;
    for (float f : v) {
      const uint16_t bits = type == 10 ? float_to_f16(f) : float_to_bf16(f);
      if (typed) t.add_int32_data(bits);
      raw.push_back(char(bits & 0xff));
      raw.push_back(char(bits >> 8));
    }
    if (!typed) t.set_raw_data(raw);
    return t;
  }
  pb::TensorProto& init_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    pb::TensorProto& t = tensor(name, 7, dims);
    for (int64_t x : v) t.add_int64_data(x);
    return t;
  }

  pb::NodeProto& node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                      const std::string& name = "") {
    pb::NodeProto* n = graph().add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return *n;
  }

  static void attr_int(pb::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_float(pb::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_string(pb::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr_ints(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  std::string bytes() const { return m_.SerializeAsString(); }
  void save(const std::string& path) const {
    std::ofstream(path, std::ios::binary) << bytes();
  }

 private:
  pb::TensorProto& tensor(const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
    pb::TensorProto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return *t;
  }
  static void value_info(pb::ValueInfoProto* vi, const std::string& name, int32_t type, const std::vector<Dim>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (const auto* v = std::get_if<int64_t>(&d)) dim->set_dim_value(*v);
      else dim->set_dim_param(std::get<std::string>(d));
    }
  }

  pb::ModelProto m_;
};

// A TensorProto file (ONNX test data) of f32 values; `name` empty for none.
inline void write_tensor_pb(const std::string& path, const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<float>& v) {
  pb::TensorProto t;
  if (!name.empty()) t.set_name(name);
  t.set_data_type(1);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
}

}  // namespace gexec::test

#endif  // GEXEC_HAVE_ONNX
