// Parsing of dtype and layout names.
#include "gexec/ir/dtype.hpp"

namespace gexec {

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes)
    if (s == dtype_name(t)) return t;
  if (s == dtype_name(DType::i32)) return DType::i32;
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view s) {
  for (Layout l : {Layout::rowmajor, Layout::colmajor})
    if (s == layout_name(l)) return l;
  return std::nullopt;
}

}  // namespace gexec
