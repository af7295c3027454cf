// --load-inputs DIR: .npy files read and converted to the stored form of their tensors.
#include "load_inputs.hpp"

#include <filesystem>

#include "gexec/io/npy.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec {

Result<std::map<std::string, std::vector<uint8_t>>> load_inputs(const std::string& dir, const Graph& g) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return bad_input("--load-inputs: " + dir + " is not a folder");
  std::map<std::string, std::vector<uint8_t>> out;
  const GraphIndex idx(g);
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    if (!idx.is_input(TensorId(id))) continue;
    const Tensor& t = g.tensors[id];
    const std::string path = (std::filesystem::path(dir) / (t.name + ".npy")).string();
    if (!std::filesystem::exists(path, ec)) continue;
    auto a = read_npy(path);
    if (!a) return a.error().with("--load-inputs");
    if (a->shape != t.shape)
      return bad_input("--load-inputs: " + path + " has shape " + shape_str(a->shape) + ", input " + t.name +
                       " is " + shape_str(t.shape));
    const std::string kind = a->descr.size() >= 2 ? a->descr.substr(1) : a->descr;
    if (kind != "f2" && kind != "f4" && kind != "f8")
      return bad_input("--load-inputs: " + path + " has dtype " + a->descr + "; float16, float32 or float64 expected");
    std::vector<uint8_t> bytes(static_cast<size_t>(t.bytes()));
    const bool colmajor = t.rank() == 2 && t.layout == Layout::colmajor;
    const int64_t n = t.numel();
    for (int64_t l = 0; l < n; ++l) {
      // The array is in C order; a colmajor tensor stores element (r, c) at c * rows + r.
      const int64_t at = colmajor ? (l % t.shape[1]) * t.shape[0] + l / t.shape[1] : l;
      // f8: the file holds real values (a --dump writes them so), stored divided by the scale.
      if (is_f8(t.dtype)) store_real(bytes.data(), t, at, a->values[size_t(l)]);
      else store_from_float(bytes.data(), t.dtype, at, static_cast<float>(a->values[size_t(l)]));
    }
    out[t.name] = std::move(bytes);
  }
  return out;
}

}  // namespace gexec
