// NumPy .npy files: reading (format 1.0 to 3.0, C or Fortran order, f2/f4/f8) and writing (1.0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

struct NpyArray {
  std::vector<int64_t> shape;
  std::string descr;           // as in the header, e.g. "<f2"
  bool fortran_order = false;
  std::vector<double> values;  // in C (row-major) order of `shape`, whatever the file's order
};

// Errors are bad_input, naming the file and what is wrong.
Result<NpyArray> read_npy(const std::string& path);

// Writes little-endian "<f2" (dtype_size 2 with f16 bits) or "<f4" data in C order.
Status write_npy_f16(const std::string& path, const std::vector<int64_t>& shape, const uint16_t* bits);
Status write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data);

}  // namespace gexec
