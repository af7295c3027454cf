// A tensor's values read from a .npy file into its stored form: the one conversion that
// `--load-inputs` (rounding) and `gexec check` (exact only) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/io/npy.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// An array's values, in C order of t's logical shape and in real units (an f8 tensor's stored
// value times its scale, as --dump writes them), as t's stored bytes in t's layout. Each value is
// stored as store_real stores it: rounded to nearest even, an f8 value divided by its scale first
// (saturating, graph-format.md "FP8"), except that with `keep_infinities` an infinity stays one
// in f8e5m2, which has them (a kernel's output is read as it is). The shape must already match.
struct StoredArray {
  std::vector<uint8_t> bytes;
  int64_t overflowed = 0;     // finite values that became infinite (f16, bf16, f32)
  int64_t first_inexact = -1; // the first logical index whose value the dtype does not hold exactly
};
StoredArray store_array(const NpyArray& a, const Tensor& t, bool keep_infinities = false);
// The same from values alone (ONNX test data, a TensorProto's values in C order).
StoredArray store_values(const std::vector<double>& values, const Tensor& t, bool keep_infinities = false);

// `gexec check`: DIR/<name>.npy (dump.hpp's file name) as the stored bytes of `t`: the shape must
// equal t's, the dtype one that --load-inputs reads (npy_dtype_problem), and every value must be exact
// in t's dtype
// (an f8 value: a code times t's scale, as --dump writes it; bf16 written as f32 is exact; an f32
// result given for an f16 output that does not round trip is refused, since converting it would
// change what is checked). bad_input naming the file otherwise.
Result<std::vector<uint8_t>> read_tensor_file(const std::string& dir, const Tensor& t);

}  // namespace gexec
