// Alignment padding for the cuBLASLt GEMM: when to copy misaligned operands into buffers whose
// rows are multiples of 16 bytes, and their geometry. Pure C++ (no CUDA headers), so that the
// kernel table's dry-run notes and the CPU tests use the same decision as the kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "gemm_view.hpp"
#include "gexec/kernels/kernel_def.hpp"

namespace gexec::cuda {

// Tensor-core kernels read 16-byte vectors along a matrix's rows (column-major: along a column);
// a leading dimension that is not a multiple of 16 bytes leaves cuBLASLt only its slow kernels.
constexpr int64_t kPadBytes = 16;

inline int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// The policy (--pad) comes in KernelOptions: the same value for the dry-run's note and the kernel.
using PadMode = PadPolicy;

// A padded column-major operand: rows x cols stored with leading dimension ld = rows, holding the
// original rows0 x cols0 block (stored with ld0 = rows0) in its corner; the rest is zero.
struct PaddedOperand {
  bool padded = false;
  int64_t rows0 = 0, cols0 = 0, rows = 0, cols = 0, ld = 0;
  int64_t elems() const { return ld * cols; }
};

struct PadPlan {
  bool pad = false;
  std::string why;              // the decision in words, for the dry-run and the log
  int64_t m = 0, n = 0, k = 0;  // the product's dimensions after padding
  PaddedOperand x, y, d;
};

inline bool aligned_ld(int64_t ld, int elem_bytes) { return ld * elem_bytes % kPadBytes == 0; }

// The geometry: M, N and K are rounded up to multiples of 16 bytes, so that every leading
// dimension is one and no tile of the product is ragged. K's padding is zero in X and Y, so the
// product is unchanged; the padded rows and columns of D are computed and dropped.
inline PadPlan pad_geometry(const GemmView& v, int ab_bytes, int d_bytes) {
  PadPlan p;
  const int64_t k_to = kPadBytes / ab_bytes;
  const int64_t mn_to = std::max(k_to, kPadBytes / d_bytes);  // m and n are rows of X/Y and of D
  p.m = round_up(v.m, mn_to);
  p.n = round_up(v.n, mn_to);
  p.k = round_up(v.k, k_to);
  auto operand = [](const ColOperand& o, int64_t rows, int64_t cols) {
    PaddedOperand r;
    r.rows0 = o.rows;
    r.cols0 = o.cols;
    r.rows = rows;
    r.cols = cols;
    r.ld = rows;
    r.padded = r.rows != r.rows0 || r.cols != r.cols0 || r.ld != o.ld;
    return r;
  };
  // op(X) is m x k: stored untransposed X is m x k, transposed k x m.
  p.x = v.x.trans ? operand(v.x, p.k, p.m) : operand(v.x, p.m, p.k);
  // op(Y) is k x n: stored untransposed Y is k x n, transposed n x k.
  p.y = v.y.trans ? operand(v.y, p.n, p.k) : operand(v.y, p.k, p.n);
  p.d.rows0 = v.m;
  p.d.cols0 = v.n;
  p.d.rows = p.d.ld = p.m;
  p.d.cols = p.n;
  p.d.padded = p.m != v.m || p.n != v.n || p.d.ld != v.ld_d;
  return p;
}

// Whether to pad, by a cost estimate. Without 16-byte rows cuBLASLt runs about 4x slower (measured
// on the H200 for f16: 150 TFLOP/s at 4095x4097x4093 against 640 at 4096^3). Padding costs a copy
// of every operand that changes between runs and of D (read and write, ~3 TB/s), ~3 us per copy
// launch, and the padded product's extra rows and columns. Pad when that estimate is below the
// unpadded one. Only single products without conversions or a separate bias kernel are padded,
// which keeps every copy one block copy.
inline PadPlan plan_padding(const GemmView& v, const GemmTypes& t, const GemmEpilogue& e, bool a_ready,
                            bool b_ready, PadMode mode) {
  const int ab = dtype_size(t.ab), db = dtype_size(t.d);
  PadPlan p = pad_geometry(v, ab, db);
  const bool misaligned = !aligned_ld(v.x.ld, ab) || !aligned_ld(v.y.ld, ab) || !aligned_ld(v.ld_d, db);
  p.pad = false;
  if (!misaligned) {
    p.why = "rows aligned to 16 bytes";
    return p;
  }
  if (v.batch > 1 || t.convert_a || t.convert_b || t.convert_out || e.needs_tail) {
    p.why = "misaligned rows, not padded (only single products without conversions are padded)";
    return p;
  }
  if (mode == PadMode::never) {
    p.why = "misaligned rows, not padded (--pad never)";
    return p;
  }
  const double rate = t.ab == DType::f32 ? 300e12 : 600e12;  // aligned tensor-core rate, roughly
  const double unpadded_us = 2.0 * double(v.m) * double(v.n) * double(v.k) / (rate / 4) * 1e6;
  double bytes = 0, copies = 0;
  const bool x_ready = v.x.is_b ? b_ready : a_ready, y_ready = v.y.is_b ? b_ready : a_ready;
  if (p.x.padded && !x_ready) bytes += 2.0 * double(p.x.rows0 * p.x.cols0) * ab, copies += 1;
  if (p.y.padded && !y_ready) bytes += 2.0 * double(p.y.rows0 * p.y.cols0) * ab, copies += 1;
  if (p.d.padded) bytes += 2.0 * double(v.m * v.n) * db, copies += 1;
  const double padded_us = 2.0 * double(p.m) * double(p.n) * double(p.k) / rate * 1e6 + bytes / 3e12 * 1e6 + 3.0 * copies;
  char buf[160];
  std::snprintf(buf, sizeof buf, "estimated %.1f us padded against %.1f us unpadded", padded_us, unpadded_us);
  p.pad = mode == PadMode::always || padded_us < unpadded_us;
  p.why = std::string(p.pad ? "padding" : "not padding") + (mode == PadMode::always ? " (--pad always)" : "") +
          " to multiples of 16 bytes: " + std::to_string(v.m) + "x" + std::to_string(v.n) + "x" + std::to_string(v.k) +
          " -> " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
          " (cuBLASLt's M x N x K), leading dimensions X " + std::to_string(v.x.ld) + " -> " + std::to_string(p.x.ld) +
          ", Y " + std::to_string(v.y.ld) + " -> " + std::to_string(p.y.ld) + ", D " + std::to_string(v.ld_d) + " -> " +
          std::to_string(p.d.ld) + "; " + buf;
  return p;
}

}  // namespace gexec::cuda
