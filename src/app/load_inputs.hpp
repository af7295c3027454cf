// --load-inputs DIR: graph inputs replaced by the .npy files named after them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gexec/app/model_file.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// For every graph input of g with a DIR/<name>.npy (dump.hpp's tensor_file_name): its values
// converted to the tensor's dtype and laid out as the tensor is stored. The array's shape must
// equal the tensor's (or, for a port's tensor, the port's shape), its dtype pass npy_dtype_problem
// (the rule of init.file). Then, for each port (the model file's inputs, model_file.hpp) without
// such a file, ONNX test data: DIR/input_N.pb matched by its tensor name, else by position N,
// its type the input's own or FLOAT or DOUBLE. Inputs without a file are left out. bad_input when
// DIR is not a folder or a file does not fit its tensor.
Result<std::map<std::string, std::vector<uint8_t>>> load_inputs(const std::string& dir, const Graph& g,
                                                                const std::vector<ModelPort>& ports = {});

// What the user should hear about a --load-inputs DIR: each .npy file in it that names no graph
// input (a typo, or a tensor the graph computes), each input_N.pb that matches no port, and that
// no input was loaded at all.
std::vector<std::string> load_inputs_warnings(const std::string& dir, const Graph& g,
                                              const std::map<std::string, std::vector<uint8_t>>& loaded,
                                              const std::vector<ModelPort>& ports = {});

}  // namespace gexec
