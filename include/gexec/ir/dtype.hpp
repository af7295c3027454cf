// Element types and layouts of tensors; loading and storing an element of any dtype as a number
// (the conversions themselves: rounding.hpp, and f8.hpp for the FP8 codes).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "gexec/ir/f8.hpp"
#include "gexec/ir/rounding.hpp"

namespace gexec {

// i32 holds integer data (GROUPED_GEMM's offsets); no arithmetic op reads it (graph-format.md).
enum class DType : uint8_t { f16, bf16, f32, f8e4m3, f8e5m2, i32 };
enum class Layout : uint8_t { rowmajor, colmajor };

// The floating-point dtypes, those the arithmetic ops read and write.
inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f8e4m3, DType::f8e5m2};

constexpr bool is_f8(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2; }
constexpr int dtype_size(DType t) { return t == DType::f32 || t == DType::i32 ? 4 : is_f8(t) ? 1 : 2; }
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f8e4m3: return "f8e4m3";
    case DType::f8e5m2: return "f8e5m2";
    case DType::i32: return "i32";
  }
  return "?";
}
// "f16, bf16, f32, f8e4m3, f8e5m2", for messages that list the accepted names.
constexpr std::string_view kDTypeList = "f16, bf16, f32, f8e4m3, f8e5m2, i32";
constexpr f8::Format f8_format(DType t) { return t == DType::f8e5m2 ? f8::e5m2() : f8::e4m3(); }
constexpr std::string_view layout_name(Layout l) { return l == Layout::rowmajor ? "rowmajor" : "colmajor"; }
std::optional<DType> parse_dtype(std::string_view s);
std::optional<Layout> parse_layout(std::string_view s);

// Reads element i of a buffer of the given dtype as float; an f8 element gives its stored value,
// before the tensor's scale.
inline float load_as_float(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::f16: return f16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::bf16: return bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::f8e4m3:
    case DType::f8e5m2: return float(f8::decode(static_cast<const uint8_t*>(data)[i], f8_format(t)));
    case DType::i32: return float(static_cast<const int32_t*>(data)[i]);
  }
  return 0.0f;
}

// The nearest i32 (halves to even), saturating; NaN gives 0. Loaded data is checked to be integers
// in range (load_tensors.cpp): this rounds only drawn values.
inline int32_t round_to_i32(double v) {
  if (!(v == v)) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(std::nearbyint(v));
}

// Writes element i, rounding to the dtype (an f8 element stores v as it is: no scale applied):
// a float through float_to_f16/bf16, a double rounded once (rounding.hpp says why there are two).
inline void store_from_float(void* data, DType t, int64_t i, float v) {
  switch (t) {
    case DType::f16: static_cast<uint16_t*>(data)[i] = float_to_f16(v); break;
    case DType::bf16: static_cast<uint16_t*>(data)[i] = float_to_bf16(v); break;
    case DType::f32: static_cast<float*>(data)[i] = v; break;
    case DType::f8e4m3:
    case DType::f8e5m2: static_cast<uint8_t*>(data)[i] = f8::encode(v, f8_format(t)); break;
    case DType::i32: static_cast<int32_t*>(data)[i] = round_to_i32(v); break;
  }
}
inline void store_rounded(void* data, DType t, int64_t i, double v) {
  switch (t) {
    case DType::f16: static_cast<uint16_t*>(data)[i] = round_to_f16_bits(v); break;
    case DType::bf16: static_cast<uint16_t*>(data)[i] = round_to_bf16_bits(v); break;
    case DType::f32: static_cast<float*>(data)[i] = round_to_f32(v); break;
    case DType::f8e4m3:
    case DType::f8e5m2: static_cast<uint8_t*>(data)[i] = f8::encode(v, f8_format(t)); break;
    case DType::i32: static_cast<int32_t*>(data)[i] = round_to_i32(v); break;
  }
}

}  // namespace gexec
