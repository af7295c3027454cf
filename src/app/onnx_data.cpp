// input_N.pb / output_N.pb files (onnx_data.hpp).
#include "onnx_data.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "gexec/io/text.hpp"
#if GEXEC_HAVE_ONNX
#include "gexec/onnx/onnx_import.hpp"
#endif

namespace gexec {

namespace {

std::vector<std::pair<size_t, std::string>> find_pb(const std::string& dir, const std::string& prefix) {
  namespace fs = std::filesystem;
  std::vector<std::pair<size_t, std::string>> found;
  if (dir.empty()) return found;
  std::error_code ec;
  const std::regex pattern(prefix + "([0-9]{1,6})\\.pb");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, pattern)) found.emplace_back(std::stoul(m[1].str()), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<std::string> pb_file_paths(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& [index, path] : find_pb(dir, prefix)) out.push_back(std::move(path));
  return out;
}

Result<std::vector<PbTensor>> read_pb_files(const std::string& dir, const std::string& prefix) {
  const auto found = find_pb(dir, prefix);
  std::vector<PbTensor> out;
#if GEXEC_HAVE_ONNX
  for (const auto& [index, path] : found) {
    auto t = onnx_import::read_tensor_file(path);
    if (!t) return t.error();
    PbTensor p;
    p.path = path;
    p.index = index;
    p.name = t->name;
    p.shape = t->shape;
    p.dtype = onnx_import::gexec_dtype(t->type);
    p.type = onnx_import::type_name(t->type);
    p.values = std::move(t->values).take();
    p.ints = std::move(t->ints);
    out.push_back(std::move(p));
  }
#else
  if (!found.empty())
    return bad_input(path_text(found.front().second) + ": an ONNX TensorProto file; this gexec was built without ONNX "
                     "support (the configure summary says why)");
#endif
  return out;
}

Result<std::vector<double>> pb_values(const PbTensor& p, DType want, const std::string& who) {
  if (p.dtype == want || p.type == "FLOAT" || p.type == "DOUBLE") return p.values;
  if (want == DType::bf16 && p.type == "UINT16") {
    std::vector<double> v;
    v.reserve(p.ints.size());
    for (int64_t bits : p.ints) v.push_back(bf16_to_float(uint16_t(bits)));
    return v;
  }
  return bad_input(path_text(p.path) + " is " + p.type + "; " + who + " is " + std::string(dtype_name(want)) +
                   " (its own type, FLOAT or DOUBLE data, or UINT16 bf16 bits are read)");
}

const PbTensor* match_pb(const std::vector<PbTensor>& files, size_t position, const std::string& name) {
  for (const PbTensor& f : files)
    if (!f.name.empty() && f.name == name) return &f;
  for (const PbTensor& f : files)
    if (f.name.empty() && f.index == position) return &f;
  return nullptr;
}

}  // namespace gexec
