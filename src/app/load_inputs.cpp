// --load-inputs DIR: .npy files read and converted to the stored form of their tensors.
#include "load_inputs.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "dump.hpp"
#include "onnx_data.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/io/text.hpp"
#include "tensor_files.hpp"

namespace gexec {

namespace {

// The shape a file may have for tensor `id`: the tensor's, or its port's (an ONNX input's shape,
// which holds the same elements).
bool fits(const Tensor& t, TensorId id, const std::vector<int64_t>& shape, const std::vector<ModelPort>& ports) {
  if (shape == t.shape) return true;
  for (const ModelPort& p : ports)
    if (p.tensor == id && p.shape == shape) return true;
  return false;
}

void warn_overflow(const std::string& path, int64_t overflowed, DType dtype) {
  if (overflowed > 0)
    spdlog::warn("--load-inputs: {}: {} finite value{} beyond the range of {} became {}", path_text(path), overflowed,
                 overflowed == 1 ? "" : "s", dtype_name(dtype), is_f8(dtype) ? "NaN or infinite" : "infinite");
}

}  // namespace

Result<std::map<std::string, std::vector<uint8_t>>> load_inputs(const std::string& dir, const Graph& g,
                                                                const std::vector<ModelPort>& ports) {
  std::error_code ec;
  if (dir.empty()) return bad_input("--load-inputs: the folder path is empty");
  if (!std::filesystem::is_directory(dir, ec))
    return bad_input("--load-inputs: " + path_text(dir) + (ec ? ": " + ec.message() : std::string(" is not a folder")));
  std::map<std::string, std::vector<uint8_t>> out;
  const GraphIndex idx(g);
  // Block-scaled f8 inputs last: they are stored with their S, read first.
  std::vector<size_t> order;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t id = 0; id < g.tensors.size(); ++id)
      if (g.tensors[id].scale.is_block() == (pass == 1)) order.push_back(id);
  for (size_t id : order) {
    if (!idx.is_input(TensorId(id))) continue;
    const Tensor& graph_t = g.tensors[id];
    const std::string path = (std::filesystem::path(dir) / tensor_file_name(graph_t.name)).string();
    // A dangling symlink or a FIFO by that name is there: read_npy says what it is.
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
    auto a = read_npy(path);
    if (!a) return a.error().with("--load-inputs");
    const std::optional<Tensor> with_s = with_scale_from(g, graph_t, out);
    if (!with_s)
      return bad_input("--load-inputs: " + path_text(path) + " holds real values of " + graph_t.name +
                       ", stored with its block scale " + g.tensor(graph_t.scale.tensor).name +
                       ", which the folder must hold too");
    const Tensor& t = *with_s;
    if (!fits(t, TensorId(id), a->shape, ports))
      return bad_input("--load-inputs: " + path_text(path) + " has shape " + shape_str(a->shape) + ", input " +
                       t.name + " is " + shape_str(t.shape));
    // The same dtype rule as init.file.
    if (const std::string why = npy_dtype_problem(a->descr, t.dtype); !why.empty())
      return bad_input("--load-inputs: " + path_text(path) + " " + why);
    // f8: the file holds real values (a --dump writes them so), stored divided by the scale.
    StoredArray stored = store_array(*a, t);
    // i32 data is taken as it is or refused (as init.file does), never rounded or clamped.
    if (t.dtype == DType::i32 && stored.first_inexact >= 0)
      return bad_input("--load-inputs: " + path_text(path) + ": element " + std::to_string(stored.first_inexact) +
                       " is " + number_text(a->values[size_t(stored.first_inexact)]) +
                       "; an i32 value is an integer from -2147483648 to 2147483647");
    // S as the graph's values and files are: every value a positive, finite f32.
    if (is_block_scale(g, TensorId(id)))
      if (const std::string why = block_scale_values_problem(a->values); !why.empty())
        return bad_input("--load-inputs: " + path_text(path) + ": block scale " + quote_text(t.name) + " " + why);
    warn_overflow(path, stored.overflowed, t.dtype);
    out[t.name] = std::move(stored.bytes);
  }
  // ONNX test data: input_N.pb, matched by its name where it has one, else by position N.
  auto pbs = read_pb_files(dir, "input_");
  if (!pbs) return pbs.error().with("--load-inputs");
  for (size_t i = 0; i < ports.size(); ++i) {
    const ModelPort& port = ports[i];
    const PbTensor* p = match_pb(*pbs, i, port.name);
    if (!p || port.tensor == kNone) continue;
    const Tensor& t = g.tensor(port.tensor);
    if (out.count(t.name)) continue;  // its .npy was read
    // An input no op reads (CastLike's target, say) needs no data: one of another shape is left
    // out with a warning rather than refused (ONNX's own test data has such files).
    if (!fits(t, port.tensor, p->shape, ports) && idx.consumers[size_t(port.tensor)].empty()) {
      spdlog::warn("--load-inputs: {} has shape {}, input {} is {}; not loaded (no op reads it)", path_text(p->path),
                   shape_str(p->shape), quote_text(port.name), shape_str(port.shape));
      continue;
    }
    if (!fits(t, port.tensor, p->shape, ports))
      return bad_input("--load-inputs: " + path_text(p->path) + " has shape " + shape_str(p->shape) + ", input " +
                       quote_text(port.name) + " is " + shape_str(port.shape));
    // Its own dtype, or FLOAT or DOUBLE data rounded to it (as float32 and float64 .npy files are).
    auto values = pb_values(*p, t.dtype, "input " + quote_text(port.name));
    if (!values) return values.error().with("--load-inputs");
    StoredArray stored = store_values(*values, t);
    warn_overflow(p->path, stored.overflowed, t.dtype);
    out[t.name] = std::move(stored.bytes);
  }
  return out;
}

std::vector<std::string> load_inputs_warnings(const std::string& dir, const Graph& g,
                                              const std::map<std::string, std::vector<uint8_t>>& loaded,
                                              const std::vector<ModelPort>& ports) {
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
  // input_N.pb files that match no input (output_N.pb are --expect's, not strays).
  if (auto pbs = read_pb_files(dir, "input_"))
    for (const PbTensor& p : *pbs) {
      bool used = false;
      for (size_t i = 0; i < ports.size() && !used; ++i) used = match_pb(*pbs, i, ports[i].name) == &p && ports[i].tensor != kNone;
      if (!used)
        strays.push_back(printable(std::filesystem::path(p.path).filename().string()) +
                         (p.name.empty() ? " (no input at position " + std::to_string(p.index) + ")"
                                         : " (no input " + printable(p.name) + ")"));
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
