// --dump DIR: every graph input and output written as NumPy .npy, named after the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// The file name of a tensor in a dump folder: "<name>.npy", or for a name too long for a file
// name (over 251 bytes) its first 200 bytes, "~", 16 hex digits of a hash of the whole name,
// ".npy". --load-inputs reads the same names.
std::string tensor_file_name(const std::string& name);

// Writes DIR/tensor_file_name(name) for each tensor, each file atomically (whole or absent): f16 as "<f2", f32 as "<f4", bf16 widened exactly to
// "<f4" (NumPy has no bf16). Every array has the tensor's logical shape in C order (colmajor
// tensors are transposed on the way). Returns the names of the bf16 tensors that were widened.
Result<std::vector<std::string>> dump_tensors(const std::string& dir, const Graph& g,
                                              const std::map<std::string, std::vector<uint8_t>>& bytes);

}  // namespace gexec
