// `gexec check`: a tensor's values read from DIR/<name>.npy into its stored form, losslessly.
#include "tensor_files.hpp"

#include <cmath>
#include <filesystem>

#include "gexec/io/npy.hpp"

namespace gexec {

Result<std::vector<uint8_t>> read_tensor_file(const std::string& dir, const Tensor& t) {
  const std::string path = (std::filesystem::path(dir) / (t.name + ".npy")).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return bad_input(path + ": no such file (tensor " + t.name + ")");
  auto a = read_npy(path);
  if (!a) return a.error();
  if (a->shape != t.shape)
    return bad_input(path + ": shape " + shape_str(a->shape) + ", tensor " + t.name + " is " + shape_str(t.shape));
  const std::string kind = a->descr.size() >= 2 ? a->descr.substr(1) : a->descr;
  if (kind != "f2" && kind != "f4" && kind != "f8")
    return bad_input(path + ": dtype " + a->descr + "; float16, float32 or float64 expected");
  std::vector<uint8_t> bytes(static_cast<size_t>(t.bytes()));
  const bool colmajor = t.rank() == 2 && t.layout == Layout::colmajor;
  const int64_t n = t.numel();
  for (int64_t l = 0; l < n; ++l) {
    // The array is in C order; a colmajor tensor stores element (r, c) at c * rows + r.
    const int64_t at = colmajor ? (l % t.shape[1]) * t.shape[0] + l / t.shape[1] : l;
    const double v = a->values[size_t(l)];
    store_from_float(bytes.data(), t.dtype, at, static_cast<float>(v));
    const double back = load_as_float(bytes.data(), t.dtype, at);
    // NaN stays NaN (a kernel's NaN is checked, and fails); anything else must round trip.
    if (!(std::isnan(v) && std::isnan(back)) && back != v)
      return bad_input(path + ": element " + std::to_string(l) + " (" + std::to_string(v) + ") is not exact in " +
                       std::string(dtype_name(t.dtype)) + ", the dtype of " + t.name);
  }
  return bytes;
}

}  // namespace gexec
