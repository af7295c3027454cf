// ONNX models in: a ModelProto mapped onto gexec's IR (docs/onnx.md has the op table), and ONNX
// TensorProto files (the conformance tests' input_N.pb / output_N.pb) read as values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec::onnx_import {

// The opsets of the default domain (ai.onnx) this front end maps.
constexpr int64_t kMinOpset = 13, kMaxOpset = 21;

// TensorProto.DataType numbers (onnx.proto). The schema stores them in int32 fields, so types newer
// than the onnx.proto compiled in (the f8 types arrived in ONNX 1.14) read the same.
enum OnnxType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
  kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kComplex64 = 14,
  kComplex128 = 15, kBfloat16 = 16, kFloat8E4M3FN = 17, kFloat8E4M3FNUZ = 18, kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
};
// "FLOAT16", ..., or "type 42" for a number this build does not know.
std::string type_name(int32_t type);
// The gexec dtype of an ONNX element type, if it has one (FLOAT, FLOAT16, BFLOAT16, FLOAT8E4M3FN, FLOAT8E5M2).
std::optional<DType> gexec_dtype(int32_t type);
int32_t onnx_type(DType t);

// A tensor's values on the host: floating types as doubles (f8 and f16 decoded exactly), integer
// types as int64s; `shape` as the file gives it (rank 0 for a scalar).
struct HostTensor {
  std::string name;
  int32_t type = kUndefined;
  std::vector<int64_t> shape;
  SharedValues values;         // floating types (shared with the constants made from them)
  std::vector<int64_t> ints;   // integer types
  int64_t numel() const;
  bool is_float() const { return type == kFloat || type == kDouble || gexec_dtype(type).has_value(); }
};

// An ONNX graph input or output and the gexec tensor that holds it. `shape` is the ONNX shape (its
// dimensions bound); the tensor holds the same elements in the same (row-major) order, with a
// shape that may differ where the mapping relabelled it (a folded MatMul, a Flatten, a scalar as [1]).
struct Port {
  std::string name;  // as the model names it
  TensorId tensor = kNone;  // kNone: an input that no mapped node reads and gexec has no dtype for
  std::vector<int64_t> shape;
  int32_t type = kUndefined;
};

struct Model {
  Graph graph;
  std::vector<Port> inputs;   // the graph inputs that are not initializers, in the model's order
  std::vector<Port> outputs;  // the graph outputs, in the model's order
  int64_t opset = 0;          // of ai.onnx
  std::string producer;       // producer_name and producer_version
  std::vector<std::string> data_files;  // external data files read (paths as opened)
  std::vector<std::string> op_types;    // the model's ops by type, sorted: "2 Add", "MatMul", ...
  std::vector<std::string> patterns;    // each exporter pattern mapped as one op: its nodes and what they became
};

// Sizes of the dimensions a model leaves open (dim_param, or no size at all).
struct DimOptions {
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE
  // The shape of the data given for graph input `position` (its name in the model and in gexec),
  // where there is a file for it: open dimensions take their sizes from it.
  std::function<std::optional<std::vector<int64_t>>(size_t position, const std::string& onnx_name,
                                                    const std::string& gexec_name)>
      input_shape;
};

// Whether `bytes` parse as an ONNX ModelProto that has a graph.
bool looks_like_onnx(std::string_view bytes);

// Maps the model onto a gexec graph. `display_name` prefixes every message ("model.onnx: node 3
// (Gemm "fc1", opset 17): ..."), `base_dir` resolves external data. Anything outside the mapping
// (an op, an attribute value, an opset, a dtype, a broadcast) is bad_input naming the node, the op,
// the opset and why; a model that does not parse is bad_input too.
Result<Model> load_onnx(std::string_view bytes, const std::string& display_name, const std::string& base_dir,
                        const DimOptions& dims = {});

// A serialized TensorProto (ONNX test data, input_N.pb / output_N.pb). bad_input naming the file
// when it does not parse or its data does not match its type and shape.
Result<HostTensor> read_tensor_file(const std::string& path);

// gexec's name for an ONNX name: letters, digits and _ . - : kept, any other byte replaced by '_',
// '_' put before a leading digit (and for an empty name), as graph-format.md allows.
std::string sanitize_name(std::string_view onnx_name);

}  // namespace gexec::onnx_import
