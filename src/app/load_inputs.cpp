// --load-inputs DIR: .npy files read and converted to the stored form of their tensors.
#include "load_inputs.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "dump.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"
#include "tensor_files.hpp"

namespace gexec {

Result<std::map<std::string, std::vector<uint8_t>>> load_inputs(const std::string& dir, const Graph& g) {
  std::error_code ec;
  if (dir.empty()) return bad_input("--load-inputs: the folder path is empty");
  if (!std::filesystem::is_directory(dir, ec))
    return bad_input("--load-inputs: " + path_text(dir) + (ec ? ": " + ec.message() : std::string(" is not a folder")));
  std::map<std::string, std::vector<uint8_t>> out;
  const GraphIndex idx(g);
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    if (!idx.is_input(TensorId(id))) continue;
    const Tensor& t = g.tensors[id];
    const std::string path = (std::filesystem::path(dir) / tensor_file_name(t.name)).string();
    // A dangling symlink or a FIFO by that name is there: read_npy says what it is.
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
    auto a = read_npy(path);
    if (!a) return a.error().with("--load-inputs");
    if (a->shape != t.shape)
      return bad_input("--load-inputs: " + path_text(path) + " has shape " + shape_str(a->shape) + ", input " +
                       t.name + " is " + shape_str(t.shape));
    // The same dtype rule as init.file.
    if (const std::string why = npy_dtype_problem(a->descr, t.dtype); !why.empty())
      return bad_input("--load-inputs: " + path_text(path) + " " + why);
    // f8: the file holds real values (a --dump writes them so), stored divided by the scale.
    StoredArray stored = store_array(*a, t);
    const int64_t overflowed = stored.overflowed;
    if (overflowed > 0)
      spdlog::warn("--load-inputs: {}: {} finite value{} beyond the range of {} became inf", path_text(path),
                   overflowed, overflowed == 1 ? "" : "s", dtype_name(t.dtype));
    out[t.name] = std::move(stored.bytes);
  }
  return out;
}

std::vector<std::string> load_inputs_warnings(const std::string& dir, const Graph& g,
                                              const std::map<std::string, std::vector<uint8_t>>& loaded) {
  std::vector<std::string> out;
  const GraphIndex idx(g);
  // The tensor each file name stands for (the names load_inputs reads, long names hashed).
  std::map<std::string, TensorId> by_file;
  for (size_t t = 0; t < g.tensors.size(); ++t) by_file[tensor_file_name(g.tensors[t].name)] = TensorId(t);
  std::error_code ec;
  std::vector<std::string> strays;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".npy") continue;
    const std::string file = entry.path().filename().string();
    const auto it = by_file.find(file);
    if (it == by_file.end())
      strays.push_back(printable(file) + " (no tensor " + printable(entry.path().stem().string()) + ")");
    else if (!idx.is_input(it->second))
      strays.push_back(printable(file) + " (" + printable(g.tensors[size_t(it->second)].name) +
                       " is computed by the graph)");
  }
  std::sort(strays.begin(), strays.end());
  for (const std::string& s : strays) out.push_back("--load-inputs: " + path_text(dir) + "/" + s + " was not loaded");
  if (loaded.empty()) {
    std::string names;
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (idx.is_input(TensorId(t))) names += (names.empty() ? "" : ", ") + printable(tensor_file_name(g.tensors[t].name));
    out.push_back("--load-inputs: no input was loaded from " + path_text(dir) + " (the graph's inputs would be " + names +
                  "); all were drawn from the seed");
  }
  return out;
}

}  // namespace gexec
