// Parsing of dtype and layout names, and the exact f16/bf16 <-> float conversions.
#include "gexec/ir/dtype.hpp"

namespace gexec {

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (s == dtype_name(t)) return t;
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view s) {
  for (Layout l : {Layout::rowmajor, Layout::colmajor})
    if (s == layout_name(l)) return l;
  return std::nullopt;
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (mant << 13));  // inf, NaN keeps payload
  if (exp != 0) return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return f32_from_bits(sign);
  // Subnormal half: normalise the mantissa; every f16 subnormal is a normal float.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return f32_from_bits(sign | uint32_t(112 - e) << 23 | ((mant & 0x3ffu) << 13));
}

uint16_t float_to_f16(float f) {
  const uint32_t x = bits_from_f32(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // quiet NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: infinity
  const int exp = int(abs >> 23) - 127;
  if (exp >= -14) {
    // Normal half: drop 13 mantissa bits with round-to-nearest-even; a carry into the
    // exponent is the correct result (it can reach at most the largest finite half).
    uint32_t v = abs - (112u << 23);
    v += 0xfffu + ((v >> 13) & 1u);
    return uint16_t(sign | (v >> 13));
  }
  if (exp < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // Subnormal half: value = mant * 2^-24 with the implicit bit made explicit.
  const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
  const int shift = -exp - 1;  // 14..24 bits to drop
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return uint16_t(sign | q);
}

uint16_t float_to_bf16(float f) {
  const uint32_t x = bits_from_f32(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u);  // keep NaN a NaN
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(rounded >> 16);
}

}  // namespace gexec
