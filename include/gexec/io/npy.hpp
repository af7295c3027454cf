// NumPy .npy files: reading (format 1.0 to 3.0, C or Fortran order, f2/f4/f8) and writing (1.0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/dtype.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct NpyArray {
  std::vector<int64_t> shape;
  std::string descr;           // as in the header, e.g. "<f2"
  bool fortran_order = false;
  std::vector<double> values;  // in C (row-major) order of `shape`, whatever the file's order
};

// Errors are bad_input, naming the file and what is wrong. Only a regular file is opened (a FIFO
// is refused, not waited on); header text in messages is quoted and shortened.
Result<NpyArray> read_npy(const std::string& path);

// Why an array with this descr cannot fill a tensor of `tensor`'s dtype, or "" when it can.
// The one rule for init.file and --load-inputs (graph-format.md): float16, float32 and float64
// files fill f16 and f32 tensors (rounded to nearest even), float32 and float64 fill bf16; int32
// and int64 files fill i32 tensors, and only those (their values are checked to fit by the caller).
std::string npy_dtype_problem(const std::string& descr, DType tensor);

// Writes little-endian "<f2" (dtype_size 2 with f16 bits) or "<f4" data in C order, atomically
// (io/file.hpp: the file is whole or absent, an old one kept on failure).
Status write_npy_f16(const std::string& path, const std::vector<int64_t>& shape, const uint16_t* bits);
Status write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data);
Status write_npy_i32(const std::string& path, const std::vector<int64_t>& shape, const int32_t* data);

}  // namespace gexec
