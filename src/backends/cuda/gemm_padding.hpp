// Alignment padding for the cuBLASLt GEMM: when to copy misaligned operands into buffers whose
// rows are multiples of 16 bytes, and their geometry. Pure C++ (no CUDA headers), so that the
// kernel table's dry-run notes and the CPU tests use the same decision as the kernel.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gemm_view.hpp"

namespace gexec::cuda {

// Tensor-core kernels read 16-byte vectors along a matrix's rows (column-major: along a column);
// a leading dimension that is not a multiple of 16 bytes leaves cuBLASLt only its slow kernels.
constexpr int64_t kPadBytes = 16;

inline int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// GEXEC_PAD: "0" never pads, "1" pads every eligible misaligned product (for tests and for
// measuring both ways), "estimate" decides by the estimate below. Unset means never: on the
// H200 the padded 4095x4097x4093 f16 product measured 1472 us against 917 us unpadded (the
// estimate said 305 us), so padding stays off by default until that is understood.
enum class PadMode { estimate, never, always };
inline PadMode pad_mode_from_env() {
  const char* v = std::getenv("GEXEC_PAD");
  if (!v) return PadMode::never;
  if (std::string(v) == "estimate") return PadMode::estimate;
  if (std::string(v) == "0") return PadMode::never;
  if (std::string(v) == "1") return PadMode::always;
  return PadMode::never;
}

// A padded column-major operand: rows x cols stored with leading dimension ld, copied from the
// original rows0 x cols0 (ld0 = rows0) block; the rest is zero.
struct PaddedOperand {
  bool padded = false;
  int64_t rows0 = 0, cols0 = 0, rows = 0, cols = 0, ld = 0;
  int64_t elems() const { return ld * cols; }
};

struct PadPlan {
  bool pad = false;
  std::string why;  // the decision in words, for the dry-run and the log
  int64_t k = 0;    // the product's K after padding (zero rows/columns add nothing)
  PaddedOperand x, y, d;
};

inline bool aligned_ld(int64_t ld, int elem_bytes) { return ld * elem_bytes % kPadBytes == 0; }

// The geometry: K is rounded up to a multiple of 16 bytes (its padding zero-filled, so the
// product is unchanged), and every leading dimension too. M and N stay: only their storage grows.
inline PadPlan pad_geometry(const GemmView& v, int ab_bytes, int d_bytes) {
  PadPlan p;
  const int64_t k_to = kPadBytes / ab_bytes;
  p.k = round_up(v.k, k_to);
  auto operand = [&](const ColOperand& o, bool k_is_rows) {
    PaddedOperand r;
    r.rows0 = o.rows;
    r.cols0 = o.cols;
    r.rows = k_is_rows ? p.k : o.rows;
    r.cols = k_is_rows ? o.cols : p.k;
    r.ld = round_up(r.rows, k_to);
    r.padded = r.rows != r.rows0 || r.cols != r.cols0 || r.ld != o.ld;
    return r;
  };
  // op(X) is m x k: stored untransposed X is m x k (K along columns), transposed k x m.
  p.x = operand(v.x, v.x.trans);
  // op(Y) is k x n: stored untransposed Y is k x n (K along rows), transposed n x k.
  p.y = operand(v.y, !v.y.trans);
  p.d.rows0 = p.d.rows = v.m;
  p.d.cols0 = p.d.cols = v.n;
  p.d.ld = aligned_ld(v.ld_d, d_bytes) ? v.ld_d : round_up(v.m, kPadBytes / d_bytes);
  p.d.padded = p.d.ld != v.ld_d;
  return p;
}

// Whether to pad, by a cost estimate. Without 16-byte rows cuBLASLt runs about 4x slower (measured
// on H100/H200 for f16: ~150 TFLOP/s at 4095x4097x4093 against ~700 at 4096^3). Padding costs a
// copy of every operand that changes between runs (read and write, ~3 TB/s) and of D, plus
// ~3 us per copy launch. So: pad when the estimated padded time is below the unpadded one.
// Only single products without conversions or a separate bias kernel are padded, which keeps
// every copy one 2-D memcpy.
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
    p.why = "misaligned rows, not padded (padding is off unless GEXEC_PAD=1 or GEXEC_PAD=estimate)";
    return p;
  }
  const double flops = 2.0 * double(v.m) * double(v.n) * double(v.k);
  const double rate = t.ab == DType::f32 ? 300e12 : 600e12;  // aligned tensor-core rate, roughly
  const double unpadded_us = flops / (rate / 4) * 1e6;
  double bytes = 0, copies = 0;
  const bool x_ready = v.x.is_b ? b_ready : a_ready, y_ready = v.y.is_b ? b_ready : a_ready;
  if (p.x.padded && !x_ready) bytes += 2.0 * double(p.x.rows0 * p.x.cols0) * ab, copies += 1;
  if (p.y.padded && !y_ready) bytes += 2.0 * double(p.y.rows0 * p.y.cols0) * ab, copies += 1;
  if (p.d.padded) bytes += 2.0 * double(v.m * v.n) * db, copies += 1;
  const double padded_us = flops / rate * 1e6 + bytes / 3e12 * 1e6 + 3.0 * copies;
  char buf[160];
  std::snprintf(buf, sizeof buf, "estimated %.1f us padded against %.1f us unpadded", padded_us, unpadded_us);
  p.pad = mode == PadMode::always || padded_us < unpadded_us;
  p.why = std::string(p.pad ? "padding" : "not padding") + (mode == PadMode::always ? " (GEXEC_PAD=1)" : "") +
          " to multiples of " + std::to_string(kPadBytes / ab) + " elements (16-byte rows): K " +
          std::to_string(v.k) + " -> " + std::to_string(p.k) + ", X ld " + std::to_string(v.x.ld) + " -> " +
          std::to_string(p.x.ld) + ", Y ld " + std::to_string(v.y.ld) + " -> " + std::to_string(p.y.ld) + ", D ld " +
          std::to_string(v.ld_d) + " -> " + std::to_string(p.d.ld) + "; " + buf;
  return p;
}

}  // namespace gexec::cuda
