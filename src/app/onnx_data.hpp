// ONNX test data: the input_N.pb and output_N.pb files (TensorProto) of a folder, as
// `--load-inputs` and `--expect` read them. Without ONNX support in the build, a folder that has
// such files is refused, naming one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gexec/ir/dtype.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct PbTensor {
  std::string path;
  size_t index = 0;           // N of input_N.pb
  std::string name;           // the TensorProto's name; empty when it has none
  std::vector<int64_t> shape;
  std::optional<DType> dtype; // its type as a gexec dtype; none for other types (DOUBLE, INT64, ...)
  std::string type;           // its ONNX type's name, for messages
  std::vector<double> values; // floating types
  std::vector<int64_t> ints;  // integer types
};

// The paths of DIR/PREFIX<N>.pb, in N order, without reading them (none when DIR is empty or absent).
std::vector<std::string> pb_file_paths(const std::string& dir, const std::string& prefix);

// DIR/PREFIX<N>.pb for N = 0, 1, ... (prefix "input_" or "output_"), read whole, in N order.
Result<std::vector<PbTensor>> read_pb_files(const std::string& dir, const std::string& prefix);

// The values of p for a tensor of dtype `want` ("input \"x\"" in messages): its own values where its
// type is the tensor's, FLOAT or DOUBLE (rounded to the tensor's dtype when stored), or UINT16
// holding bf16 bits, as ONNX's own test data stores bf16. bad_input naming the file otherwise.
Result<std::vector<double>> pb_values(const PbTensor& p, DType want, const std::string& who);

// The file for port `position` named `name`: the one with that name, else an unnamed one at that position.
const PbTensor* match_pb(const std::vector<PbTensor>& files, size_t position, const std::string& name);

}  // namespace gexec
