// A tensor of the graph: name, shape, dtype, layout, and how a graph input is initialised.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gexec/ir/dtype.hpp"
#include "gexec/ir/shared_values.hpp"

namespace gexec {

using TensorId = int32_t;
using OpId = int32_t;
constexpr int32_t kNone = -1;

enum class InitKind : uint8_t { normal, uniform, zeros, ones, values, file };

struct Init {
  InitKind kind = InitKind::normal;
  double mean = 0.0, std = 1.0;   // normal
  double low = -1.0, high = 1.0;  // uniform
  SharedValues values;            // values, and file (the file's data, read at load time): shared by copies
  std::string file;               // file: the path as written in the graph
  // Equal data, NaN equal to NaN: a graph that holds NaN (init.values "nan") equals itself.
  bool operator==(const Init& o) const {
    return kind == o.kind && mean == o.mean && std == o.std && low == o.low && high == o.high && file == o.file &&
           (values.shares(o.values) ||
            std::equal(values.begin(), values.end(), o.values.begin(), o.values.end(),
                       [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }));
  }
};

// The scale of an f8 tensor: real value = stored value x scale. One value for the whole tensor
// (axis -1), or one per row (axis 0) or per column (axis 1) of a rank-2 tensor, in logical
// (row, column) terms whatever the layout; or one per [BR, BC] block of the last two dimensions
// (R x C) of a rank-2 tensor, or of each matrix of a rank-3 one [G, R, C] (block scaling), read
// from the f32 tensor S = `tensor` of shape [ceil(R / BR), ceil(C / BC)] ([G, ...] for rank 3).
// S's values are data, known only in a run: `values` is empty in the graph and holds them, block by
// block in row-major order, in a copy made to read real values with (with_block_values,
// block_scale.hpp).
// Other dtypes keep the default.
struct Scale {
  int axis = -1;
  std::vector<double> values{1.0};
  std::array<int64_t, 2> block{0, 0};  // [BR, BC] of a block scale; 0: none
  TensorId tensor = kNone;             // S of a block scale
  bool is_block() const { return block[0] > 0; }
  bool is_default() const { return !is_block() && axis == -1 && values.size() == 1 && values[0] == 1.0; }
  bool operator==(const Scale&) const = default;
};

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
  Layout layout = Layout::rowmajor;
  bool constant = false;
  std::optional<Init> init;  // as written; graph inputs without one use Init{} (normal, 0, 1)
  Scale scale;               // f8 only

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  int64_t bytes() const { return numel() * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  // The scale of logical (row-major) element `logical`.
  // A block scale not yet given S's values reads NaN, which no check passes.
  double scale_at(int64_t logical) const {
    if (scale.is_block()) {
      const int64_t rows = shape[shape.size() - 2], cols = shape.back();
      const int64_t block_rows = rows / scale.block[0] + (rows % scale.block[0] != 0);
      const int64_t block_cols = cols / scale.block[1] + (cols % scale.block[1] != 0);
      const int64_t matrix = logical / (rows * cols), in = logical % (rows * cols);
      const size_t at = size_t((matrix * block_rows + in / cols / scale.block[0]) * block_cols +
                               (in % cols) / scale.block[1]);
      return at < scale.values.size() ? scale.values[at] : std::nan("");
    }
    if (scale.axis < 0) return scale.values[0];
    const int64_t cols = shape[1];
    return scale.values[size_t(scale.axis == 0 ? logical / cols : logical % cols)];
  }
  bool operator==(const Tensor&) const = default;
};

// Where logical (row-major) element `logical` of a rows x cols colmajor matrix is stored.
inline int64_t colmajor_index(int64_t logical, int64_t rows, int64_t cols) {
  return (logical % cols) * rows + logical / cols;
}

// The values of a rows x cols matrix, given in logical (row-major) order, in colmajor storage
// order (to_colmajor), and back (from_colmajor): a transpose each.
inline std::vector<double> to_colmajor(const std::vector<double>& logical, int64_t rows, int64_t cols) {
  std::vector<double> out(logical.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[size_t(c * rows + r)] = logical[size_t(r * cols + c)];
  return out;
}
inline std::vector<double> from_colmajor(const std::vector<double>& stored, int64_t rows, int64_t cols) {
  std::vector<double> out(stored.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[size_t(r * cols + c)] = stored[size_t(c * rows + r)];
  return out;
}

// Where logical element `logical` of t is stored: itself, except in a colmajor rank-2 tensor.
inline int64_t storage_index(const Tensor& t, int64_t logical) {
  if (t.rank() != 2 || t.layout != Layout::colmajor) return logical;
  return colmajor_index(logical, t.shape[0], t.shape[1]);
}

}  // namespace gexec
