// The state of one model's mapping (the values by their ONNX names and the graph being built) and
// the node being mapped, with what every op's mapping function needs: its inputs as values, its
// attributes, gexec operands of a given shape, new tensors and ops, and refusals that name the node.
//
// A value's gexec tensor holds its elements in row-major order; its gexec shape may differ from
// the ONNX shape (same element count): Reshape, Flatten, Squeeze and Unsqueeze only relabel, and
// a MatMul of rank 3 folds its leading dimensions into M. An op that needs an operand in another
// shape gets it where that costs nothing: a constant is materialised in that shape, a graph input
// that no op reads yet is declared in it; a computed tensor in another shape is refused (gexec
// has no reshape op).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "proto.hpp"

namespace gexec::onnx_import {

struct Value {
  std::string name;            // the ONNX name
  int32_t type = kUndefined;   // ONNX element type
  std::vector<int64_t> shape;  // the ONNX shape; rank 0 for a scalar
  TensorId tensor = kNone;     // a computed value or graph input: the gexec tensor holding it
  std::shared_ptr<const HostTensor> data;  // a constant: its values, row-major in `shape`
  const pb::TensorProto* proto = nullptr;  // an initializer whose data is decoded on first use
  std::string defined_by;  // "node 3 (Identity, opset 16)" for a node's output; empty otherwise
  std::string not_tensor;  // a graph input that is not a tensor: what it is (refused where read)
  bool constant() const { return data || proto; }
};

// Names unique within one namespace (tensors, or ops): the wanted name, else with _2, _3, ...
class UniqueNames {
 public:
  std::string take(const std::string& wanted);
  void reserve(const std::string& name) { used_.insert(name); }

 private:
  std::unordered_set<std::string> used_;
};

// The product of the dimensions (1 for a scalar), of shapes already known to be in range.
int64_t numel(const std::vector<int64_t>& shape);
// The most elements a value may hold: far beyond any device, and small enough that the products
// of a few such counts cannot overflow.
constexpr int64_t kMaxElements = int64_t(1) << 48;
// The product of the dimensions, or nullopt when one is negative or it exceeds kMaxElements.
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape);
// The gexec shape a value of this ONNX shape gets by default: rank 0 as [1], rank 1 to 4 as it is,
// rank 5 and up with the leading dimensions folded into the first (the last three kept).
std::vector<int64_t> default_gexec_shape(const std::vector<int64_t>& onnx_shape);
// "[2,3]", or "[]" for a scalar.
std::string onnx_shape_str(const std::vector<int64_t>& shape);

struct Builder {
  std::string file;      // the model as named in messages
  std::string base_dir;  // external data is read relative to it
  int64_t opset = 0;
  Graph g;
  UniqueNames tensor_names, op_names;
  std::unordered_map<std::string, Value> values;
  std::vector<bool> reshapeable;  // per tensor: a graph input no op reads yet (its shape may still change)
  std::map<std::tuple<std::string, std::vector<int64_t>, Layout>, TensorId> materialized;  // constants by (value, shape, layout)
  std::map<const pb::TensorProto*, std::shared_ptr<const HostTensor>> decoded;
  std::vector<std::string> data_files;
  std::unordered_set<std::string> output_names;  // the graph outputs' ONNX names


  // A constant's values (decoding an initializer once); `who` names it in an error.
  Result<std::shared_ptr<const HostTensor>> data_of(const Value& v, const std::string& who);
  // The constant v as a gexec tensor of `shape` stored in `layout` (one per value, shape and
  // layout); errors name it as `who`.
  Result<TensorId> materialize(const Value& v, const std::vector<int64_t>& shape, DType dtype, const std::string& who,
                               Layout layout = Layout::rowmajor);
  // A new constant gexec tensor holding `values`; its name is taken from `base`.
  TensorId add_constant(const std::string& base, std::vector<int64_t> shape, DType dtype, SharedValues values);
};

class Node {
 public:
  Node(Builder& b, const pb::NodeProto& node, size_t index) : b_(b), node_(node), index_(index) {}

  const pb::NodeProto& proto() const { return node_; }
  const std::string& op() const { return node_.op_type(); }
  int64_t opset() const { return b_.opset; }
  Builder& builder() { return b_; }
  // bad_input "FILE: node 3 "fc1" (Gemm, opset 17): why".
  Error refuse(const std::string& why) const;
  std::string where() const;  // "FILE: node 3 "fc1" (Gemm, opset 17)"

  // Input i, or nullptr where the node leaves it out (fewer inputs, or an empty name).
  Value* input(size_t i);
  size_t input_count() const { return size_t(node_.input_size()); }
  // Input i, refused when absent.
  Result<Value*> required(size_t i, std::string_view role);
  // The integers of a constant input (Reshape's shape, Squeeze's axes); refused when computed.
  Result<std::vector<int64_t>> constant_ints(size_t i, std::string_view role);
  // The gexec dtype of a value; refused naming the value and its type when it has none.
  Result<DType> dtype_of(const Value& v, std::string_view role) const;

  // Attributes, each read with its default; a value of another type is refused.
  const pb::AttributeProto* attr(std::string_view name) const;
  Result<int64_t> attr_int(std::string_view name, int64_t def) const;
  Result<double> attr_float(std::string_view name, double def) const;
  Result<std::string> attr_string(std::string_view name, const std::string& def) const;
  Result<std::optional<std::vector<int64_t>>> attr_ints(std::string_view name) const;
  Result<std::optional<std::vector<double>>> attr_floats(std::string_view name) const;
  // A TENSOR attribute's tensor, or nullptr where the node has none of that name.
  Result<const pb::TensorProto*> attr_tensor(std::string_view name) const;

  // The gexec tensor of value v in `shape` (as the comment at the top of this file says), read by
  // the op being emitted.
  Result<TensorId> operand(const Value& v, const std::vector<int64_t>& shape, std::string_view role,
                           Layout constant_layout = Layout::rowmajor);
  // The gexec shape v has now (a constant: its default).
  std::vector<int64_t> gexec_shape(const Value& v) const;
  // A new gexec tensor for output i of the node (named after it) and the value it defines.
  TensorId new_output(size_t i, const std::vector<int64_t>& gexec_shape, DType dtype,
                      const std::vector<int64_t>& onnx_shape);
  // Appends a gexec op writing `output`, named after the node.
  Op& emit(OpType type, std::vector<TensorId> inputs, TensorId output);
  // Output i is `v` under the output's name (a relabel, a constant, an identity).
  Status define_output(size_t i, Value v);

 private:
  Builder& b_;
  const pb::NodeProto& node_;
  size_t index_;
  int emitted_ = 0;
};

// One ONNX op that gexec maps: the first ai.onnx opset at which this mapping applies (the op's
// semantics are the same from there to kMaxOpset), how many inputs the op's schema allows, the
// attributes it reads, each from the opset that added it (any other, or one before its opset, is
// refused), and the function that maps it. Adding an op is one entry here and one function.
using MapFn = Status (*)(Node&);
struct OpAttr {
  std::string_view name;
  int64_t since = 13;
};
struct OpEntry {
  std::string_view op;
  int64_t since;
  int min_inputs, max_inputs;  // as the schema allows (optional inputs left out count as given)
  static constexpr int kUnbounded = 1 << 30;  // max_inputs of a variadic op (Concat)
  std::vector<OpAttr> attrs;
  MapFn map;
};
const std::vector<OpEntry>& op_table();
const OpEntry* find_op(std::string_view op);

// map_product.cpp
Status map_matmul(Node& n);
Status map_gemm(Node& n);
// map_elementwise.cpp
Status map_add(Node& n);
Status map_mul(Node& n);
Status map_sub(Node& n);
Status map_div(Node& n);
Status map_pow(Node& n);
Status map_relu(Node& n);
Status map_sigmoid(Node& n);
Status map_tanh(Node& n);
Status map_erf(Node& n);
Status map_gelu(Node& n);
Status map_cast(Node& n);
Status map_castlike(Node& n);
Status map_identity(Node& n);
// An exporter pattern (patterns.hpp) as one op, at its last node.
struct Pattern;
Status map_pattern(Node& n, const Pattern& p);
// map_layout.cpp
Status map_constant(Node& n);
Status map_reshape(Node& n);
Status map_flatten(Node& n);
Status map_squeeze(Node& n);
Status map_unsqueeze(Node& n);
Status map_transpose(Node& n);
// map_shape.cpp
Status map_shape(Node& n);
Status map_gather(Node& n);
Status map_slice(Node& n);
Status map_concat(Node& n);

}  // namespace gexec::onnx_import
