// --dump DIR: graph inputs and outputs as .npy files.
#include "dump.hpp"

#include <cstdio>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include "gexec/io/npy.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/real_value.hpp"
#include "gexec/io/text.hpp"

namespace gexec {

std::string tensor_file_name(const std::string& name) {
  constexpr size_t kNameMax = 255;  // NAME_MAX of Linux file systems
  if (name.size() + 4 <= kNameMax) return name + ".npy";
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and builds
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return name.substr(0, 200) + "~" + hex + ".npy";
}

Result<std::vector<std::string>> dump_tensors(const std::string& dir, const Graph& g,
                                              const std::map<std::string, std::vector<uint8_t>>& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return runtime_error("--dump: cannot create " + path_text(dir) + ": " + ec.message());
  std::vector<std::string> widened;
  std::unordered_map<std::string_view, TensorId> ids;  // find_tensor is a linear search
  for (size_t t = 0; t < g.tensors.size(); ++t) ids.emplace(g.tensors[t].name, TensorId(t));
  for (const auto& [name, data] : bytes) {
    const auto found = ids.find(name);
    if (found == ids.end()) continue;
    const TensorId id = found->second;
    // An f8 tensor with a block scale is read with its S, dumped beside it.
    const std::optional<Tensor> read_as = with_scale_from(g, g.tensor(id), bytes);
    if (!read_as) return runtime_error("--dump: no values of the block scale of " + name + " to write it with");
    const Tensor& t = *read_as;
    const int64_t n = t.numel();
    // Element i of the C-order array is stored at src(i).
    auto src = [&t](int64_t i) { return storage_index(t, i); };
    const std::string path = (std::filesystem::path(dir) / tensor_file_name(name)).string();
    Status s;
    if (t.dtype == DType::f16) {
      std::vector<uint16_t> out(static_cast<size_t>(n));
      const auto* in = reinterpret_cast<const uint16_t*>(data.data());
      for (int64_t i = 0; i < n; ++i) out[size_t(i)] = in[src(i)];
      s = write_npy_f16(path, t.shape, out.data());
    } else if (t.dtype == DType::i32) {
      std::vector<int32_t> out(static_cast<size_t>(n));
      const auto* in = reinterpret_cast<const int32_t*>(data.data());
      for (int64_t i = 0; i < n; ++i) out[size_t(i)] = in[src(i)];
      s = write_npy_i32(path, t.shape, out.data());
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
