// Loading a graph file or an ONNX model, told apart by content (model_file.hpp).
#include "gexec/app/model_file.hpp"

#include <filesystem>
#include <limits>

#include "dump.hpp"
#include "gexec/io/file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"
#include "onnx_data.hpp"
#if GEXEC_HAVE_ONNX
#include "gexec/onnx/onnx_import.hpp"
#endif

namespace gexec {

namespace {

namespace fs = std::filesystem;

// A ModelProto is at most 2 GiB (protobuf's limit); the weights of larger models are external.
constexpr int64_t kMaxOnnxBytes = std::numeric_limits<int>::max();

bool json_text(std::string_view head) {
  for (char c : head) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

}  // namespace

// JSON graphs: every graph input (constants too, which --load-inputs may replace), in tensor order.
ModelFile graph_model(Graph g) {
  ModelFile m;
  m.format = ModelFile::Format::json;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (idx.is_input(TensorId(t))) m.inputs.push_back({g.tensors[t].name, TensorId(t), g.tensors[t].shape});
  for (TensorId t : g.outputs) m.outputs.push_back({g.tensor(t).name, t, g.tensor(t).shape});
  m.graph = std::move(g);
  return m;
}

namespace {

#if GEXEC_HAVE_ONNX
// The shapes of the --load-inputs files, where the model leaves dimensions open.
onnx_import::DimOptions dim_options(const ModelOptions& o, Status* failed) {
  onnx_import::DimOptions d;
  d.dims = o.dims;
  if (o.load_inputs_dir.empty() || !fs::is_directory(o.load_inputs_dir)) return d;
  auto pbs = read_pb_files(o.load_inputs_dir, "input_");
  if (!pbs) {
    *failed = pbs.error();
    return d;
  }
  d.input_shape = [dir = o.load_inputs_dir, files = std::move(*pbs), failed](
                      size_t position, const std::string& onnx_name,
                      const std::string& gexec_name) -> std::optional<std::vector<int64_t>> {
    const std::string npy = (fs::path(dir) / tensor_file_name(gexec_name)).string();
    std::error_code ec;
    if (fs::exists(npy, ec)) {
      auto a = read_npy(npy);
      if (a) return a->shape;
      *failed = a.error().with("--load-inputs");
      return std::nullopt;
    }
    if (const PbTensor* p = match_pb(files, position, onnx_name)) return p->shape;
    return std::nullopt;
  };
  return d;
}

Result<ModelFile> from_onnx(std::string_view bytes, const std::string& display, const std::string& base_dir,
                            const ModelOptions& o) {
  Status failed;
  const onnx_import::DimOptions dims = dim_options(o, &failed);
  if (!failed) return failed.error();
  auto model = onnx_import::load_onnx(bytes, display, base_dir, dims);
  if (!failed) return failed.error();
  if (!model) return model.error();
  ModelFile m;
  m.format = ModelFile::Format::onnx;
  for (const auto& p : model->inputs) m.inputs.push_back({p.name, p.tensor, p.shape});
  for (const auto& p : model->outputs) m.outputs.push_back({p.name, p.tensor, p.shape});
  m.data_files = std::move(model->data_files);
  m.op_types = std::move(model->op_types);
  m.patterns = std::move(model->patterns);
  m.description = "ONNX opset " + std::to_string(model->opset) +
                  (model->producer.empty() ? "" : ", from " + printable(model->producer));
  m.graph = std::move(model->graph);
  return m;
}
#endif

#if !GEXEC_HAVE_ONNX
Error no_onnx(const std::string& display) {
  return bad_input(display + ": an ONNX model; this gexec was built without ONNX input (protobuf, protoc or "
                             "onnx.proto was missing when it was configured: the configure summary says which)");
}
#endif

}  // namespace

std::string_view format_name(ModelFile::Format f) { return f == ModelFile::Format::onnx ? "onnx" : "json"; }

bool onnx_supported() {
#if GEXEC_HAVE_ONNX
  return true;
#else
  return false;
#endif
}

Status parse_dim(const std::string& text, std::map<std::string, int64_t>* dims) {
  const size_t eq = text.find('=');
  const std::string name = eq == std::string::npos ? "" : text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  const std::string want = "--dim " + quote_text(text) + ": expected NAME=VALUE with VALUE an integer from 1 to 2^48";
  if (name.empty() || value.empty() || value.size() > 15 || value.find_first_not_of("0123456789") != std::string::npos)
    return bad_input(want);
  const int64_t v = std::stoll(value);
  if (v < 1 || v > (int64_t(1) << 48)) return bad_input(want);
  if (!dims->emplace(name, v).second) return bad_input("--dim " + quote_text(name) + " is given twice");
  return {};
}

Result<ModelFile> load_onnx_bytes(std::string_view bytes, const std::string& display_name, const std::string& base_dir,
                                  const ModelOptions& opts) {
#if GEXEC_HAVE_ONNX
  return from_onnx(bytes, display_name, base_dir, opts);
#else
  (void)bytes, (void)base_dir, (void)opts;
  return no_onnx(display_name);
#endif
}

Result<ModelFile> load_model_file(const std::string& path, const ModelOptions& opts) {
  const std::string display = path_text(path);
  std::string head;
  int64_t size = 0;
  {
    auto f = InputFile::open(path);
    if (!f) return f.error();
    size = f->size();
    head.resize(size_t(std::min<int64_t>(size, 64)));
    if (Status s = f->read(head.data(), head.size()); !s) return s.error();
  }
  const bool named_onnx = fs::path(path).extension() == ".onnx";
  if (json_text(head) || (head.empty() && !named_onnx)) {
    if (!opts.dims.empty()) return bad_input("--dim applies to ONNX models; " + display + " is a gexec graph (JSON)");
    auto g = load_graph_file(path);
    if (!g) return g.error();
    return graph_model(std::move(*g));
  }
  if (size > kMaxOnnxBytes) {
    if (!named_onnx) return load_graph_file(path).error();  // a JSON file's size limit says it
    return bad_input(display + ": the model is " + std::to_string(size) +
                     " bytes; a ModelProto is limited to 2 GiB (larger weights go in external data files)");
  }
  auto f = InputFile::open(path);
  if (!f) return f.error();
  auto bytes = f->read_all();
  if (!bytes) return bytes.error();
  const std::string dir = fs::path(path).parent_path().string();
#if GEXEC_HAVE_ONNX
  // Content decides: a file that parses as a model is one, whatever its name; one named .onnx that
  // does not is reported as a model that does not parse rather than as JSON.
  if (named_onnx || onnx_import::looks_like_onnx(*bytes)) return from_onnx(*bytes, display, dir, opts);
#else
  // Without the schema, the name and ModelProto's first field (ir_version, tag 0x08) tell.
  if (named_onnx || (*bytes)[0] == '\x08') return no_onnx(display);
#endif
  auto g = load_graph_text(*bytes, display, dir);
  if (!g) return g.error();
  return graph_model(std::move(*g));
}

}  // namespace gexec
