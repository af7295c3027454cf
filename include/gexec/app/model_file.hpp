// A model file of either kind, told apart by its content: a gexec graph (JSON, graph-format.md)
// or an ONNX model (docs/onnx.md), loaded as a Graph with its inputs and outputs as the file
// names them (for --load-inputs and --expect files matched by name or position).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// A graph input or output as the file names it: for a JSON graph the tensor itself; for an ONNX
// model its name there and its ONNX shape (the tensor holds the same elements, maybe relabelled).
struct ModelPort {
  std::string name;
  TensorId tensor = kNone;  // kNone: an ONNX input that no op reads and that has no gexec dtype
  std::vector<int64_t> shape;
};

struct ModelFile {
  enum class Format { json, onnx };
  Format format = Format::json;
  Graph graph;
  std::vector<ModelPort> inputs;   // JSON: every graph input in tensor order; ONNX: the model's inputs
  std::vector<ModelPort> outputs;  // the graph's outputs in order
  std::vector<std::string> data_files;  // files read besides the model (ONNX external data)
  std::string description;              // "ONNX opset 17, from pytorch 2.1"; empty for JSON
  std::vector<std::string> op_types;    // an ONNX model's ops by type: "2 Add", "MatMul", ...
  std::vector<std::string> patterns;    // an ONNX model's exporter patterns, each mapped as one op
};
std::string_view format_name(ModelFile::Format f);  // "json", "onnx"

struct ModelOptions {
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE: an ONNX model's open dimensions
  std::string load_inputs_dir;          // --load-inputs: open dimensions take the shapes of its files
};

// Whether this build reads ONNX models; when not, why (for messages and --version).
bool onnx_supported();

// Loads `path`: a file whose first non-blank byte is '{' is a JSON graph, any other an ONNX model
// when it parses as one (or is named *.onnx, which then reports why it does not). Errors are
// bad_input with one line per problem.
Result<ModelFile> load_model_file(const std::string& path, const ModelOptions& opts = {});

// An ONNX model from bytes (Python's Graph.from_onnx); external data resolves against `base_dir`.
Result<ModelFile> load_onnx_bytes(std::string_view bytes, const std::string& display_name, const std::string& base_dir,
                                  const ModelOptions& opts = {});

// A graph already in memory as a model file (its inputs and outputs its own tensors).
ModelFile graph_model(Graph g);

// Parses "NAME=VALUE" of --dim into *dims; bad_input for a malformed or repeated one.
Status parse_dim(const std::string& text, std::map<std::string, int64_t>* dims);

}  // namespace gexec
