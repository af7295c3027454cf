// `gexec check`: a tensor's values read from DIR/<name>.npy into its stored form, losslessly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// DIR/<name>.npy as the stored bytes of `t`: the shape must equal t's, the dtype float16,
// float32 or float64, and every value must be exact in t's dtype (bf16 written as f32, as
// `--dump` writes it, is; an f32 result given for an f16 output that does not round trip is
// refused, since converting it would change what is checked). bad_input naming the file otherwise.
Result<std::vector<uint8_t>> read_tensor_file(const std::string& dir, const Tensor& t);

}  // namespace gexec
