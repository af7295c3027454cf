// A tensor's values read from a .npy file into its stored form (--load-inputs, gexec check).
#include "tensor_files.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "dump.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec {

StoredArray store_array(const NpyArray& a, const Tensor& t, bool keep_infinities) {
  return store_values(a.values, t, keep_infinities);
}

StoredArray store_values(const std::vector<double>& values, const Tensor& t, bool keep_infinities) {
  StoredArray out;
  // f8e5m2's infinity code (S.11111.00: every exponent bit set, no mantissa), for keep_infinities.
  const bool inf_code = keep_infinities && is_f8(t.dtype) && f8_format(t.dtype).has_inf;
  const int mant = f8_format(t.dtype).mant_bits;
  const auto inf_bits = uint8_t(((1 << (7 - mant)) - 1) << mant);
  out.bytes.resize(static_cast<size_t>(t.bytes()));
  uint8_t* data = out.bytes.data();
  const int64_t n = t.numel();
  for (int64_t l = 0; l < n; ++l) {
    const int64_t at = storage_index(t, l);
    const double v = values[size_t(l)];
    if (inf_code && std::isinf(v)) data[at] = uint8_t((v < 0 ? 0x80u : 0u) | inf_bits);
    else store_real(data, t, at, v);
    const double back = load_real(data, t, at);
    // Storing saturates f8 (so only the other dtypes overflow); NaN stays NaN. An f8 real value
    // (code x scale) is exact in double, and --dump writes it rounded to float: either is exact.
    out.overflowed += std::isfinite(v) && !std::isfinite(back);
    const bool exact =
        back == v || (std::isnan(v) && std::isnan(back)) || (is_f8(t.dtype) && double(float(back)) == v);
    if (!exact && out.first_inexact < 0) out.first_inexact = l;
  }
  return out;
}

Result<std::vector<uint8_t>> read_tensor_file(const std::string& dir, const Tensor& t) {
  const std::string path = (std::filesystem::path(dir) / tensor_file_name(t.name)).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return bad_input(path_text(path) + ": no such file (tensor " + printable(t.name) + ")");
  auto a = read_npy(path);
  if (!a) return a.error();
  if (a->shape != t.shape)
    return bad_input(path_text(path) + ": shape " + shape_str(a->shape) + ", tensor " + printable(t.name) + " is " +
                     shape_str(t.shape));
  // The dtypes --load-inputs and init.file read: an i32 tensor int32 or int64, the others floats.
  if (const std::string why = npy_dtype_problem(a->descr, t.dtype); !why.empty())
    return bad_input(path_text(path) + " " + why);
  StoredArray s = store_array(*a, t, /*keep_infinities=*/true);
  if (s.first_inexact >= 0) {
    const int64_t l = s.first_inexact;
    // NaN, and an infinity where the dtype holds one, are checked (and fail); an f8 value must be
    // a code times the scale.
    auto text = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", v);
      return std::string(buf);
    };
    std::string what = "is not exact in " + std::string(dtype_name(t.dtype)) + ", the dtype of " + printable(t.name);
    if (is_f8(t.dtype))
      what = "is not a value of " + printable(t.name) + " (" + std::string(dtype_name(t.dtype)) +
             " codes times its scale, " + (t.scale.axis < 0 ? "" : "here ") +
             text(scale_at_storage(t, storage_index(t, l))) + ", as --dump writes them)";
    return bad_input(path_text(path) + ": element " + std::to_string(l) + " (" + text(a->values[size_t(l)]) + ") " +
                     what);
  }
  return std::move(s.bytes);
}

}  // namespace gexec
