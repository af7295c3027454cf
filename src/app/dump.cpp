// --dump DIR: graph inputs and outputs as .npy files.
#include "dump.hpp"

#include <filesystem>

#include "gexec/io/npy.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec {

Result<std::vector<std::string>> dump_tensors(const std::string& dir, const Graph& g,
                                              const std::map<std::string, std::vector<uint8_t>>& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return runtime_error("--dump: cannot create " + dir + ": " + ec.message());
  std::vector<std::string> widened;
  for (const auto& [name, data] : bytes) {
    const TensorId id = g.find_tensor(name);
    if (id == kNone) continue;
    const Tensor& t = g.tensor(id);
    const int64_t n = t.numel();
    const bool transpose = t.layout == Layout::colmajor;
    const int64_t rows = transpose ? t.shape[0] : 0, cols = transpose ? t.shape[1] : 0;
    // Element i of the C-order array is stored at src(i).
    auto src = [&](int64_t i) { return transpose ? (i % cols) * rows + i / cols : i; };
    const std::string path = (std::filesystem::path(dir) / (name + ".npy")).string();
    Status s;
    if (t.dtype == DType::f16) {
      std::vector<uint16_t> out(static_cast<size_t>(n));
      const auto* in = reinterpret_cast<const uint16_t*>(data.data());
      for (int64_t i = 0; i < n; ++i) out[size_t(i)] = in[src(i)];
      s = write_npy_f16(path, t.shape, out.data());
    } else {
      std::vector<float> out(static_cast<size_t>(n));
      // f8 tensors are written as their real values (stored x scale), which load back to the same codes.
      for (int64_t i = 0; i < n; ++i) out[size_t(i)] = float(load_real(data.data(), t, src(i)));
      s = write_npy_f32(path, t.shape, out.data());
      if (t.dtype == DType::bf16 || is_f8(t.dtype)) widened.push_back(name);
    }
    if (!s) return s.error().with("--dump");
  }
  return widened;
}

}  // namespace gexec
