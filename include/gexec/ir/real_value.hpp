// A tensor element's real value: the stored value, times the scale for f8 tensors
// (graph-format.md, "FP8"). Storing a real value divides by the scale in double and rounds once.
#pragma once

#include <cstdint>

#include "gexec/ir/tensor.hpp"

namespace gexec {

// The logical (row-major) index of the element stored at `storage` (the inverse of storage_of).
inline int64_t logical_of(const Tensor& t, int64_t storage) {
  if (t.rank() != 2 || t.layout != Layout::colmajor) return storage;
  const int64_t rows = t.shape[0], cols = t.shape[1];
  return (storage % rows) * cols + storage / rows;
}

// The scale of the element stored at `storage`: 1 for dtypes other than f8.
inline double scale_at_storage(const Tensor& t, int64_t storage) {
  if (!is_f8(t.dtype)) return 1.0;
  if (t.scale.axis < 0 && !t.scale.is_block()) return t.scale.values[0];
  return t.scale_at(logical_of(t, storage));
}

inline double load_real(const void* data, const Tensor& t, int64_t storage) {
  const double v = load_as_float(data, t.dtype, storage);
  return is_f8(t.dtype) ? v * scale_at_storage(t, storage) : v;
}

// f8: the code nearest real / scale (round to nearest even, saturating, NaN stays NaN).
// Other dtypes: real rounded once to the dtype.
void store_real(void* data, const Tensor& t, int64_t storage, double real);

}  // namespace gexec
