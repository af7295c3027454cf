// `gexec import MODEL.onnx -o GRAPH.json [--weights DIR]`: an ONNX model written as the gexec
// graph it maps to, its initializers as .npy files that the graph's init.file names.
#include <filesystem>

#include "dump.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"
#include "output_paths.hpp"

namespace gexec {

namespace {

namespace fs = std::filesystem;

// The constants' values as .npy files: f16 as float16, the others as float32 (bf16 and f8 values
// are exact in it, f8 as their real values, which init.file reads back to the same codes).
Status write_weight(const Tensor& t, const std::string& path) {
  // A .npy file holds the logical (row-major) array; init.values are in the tensor's storage order.
  std::vector<double> transposed;  // only for a colmajor tensor: the others' values are read in place
  if (t.layout == Layout::colmajor && t.rank() == 2) transposed = from_colmajor(t.init->values, t.shape[0], t.shape[1]);
  const std::vector<double>& v = transposed.empty() ? t.init->values.get() : transposed;
  if (t.dtype == DType::f16) {
    std::vector<uint16_t> bits(v.size());
    for (size_t i = 0; i < v.size(); ++i) bits[i] = float_to_f16(float(v[i]));
    return write_npy_f16(path, t.shape, bits.data());
  }
  std::vector<float> f(v.begin(), v.end());
  return write_npy_f32(path, t.shape, f.data());
}

Status import_into(const ImportOptions& o, std::ostream& out) {
  auto model = load_model_file(o.model_path, {o.dims, {}});
  if (!model) return model.error();
  if (model->format != ModelFile::Format::onnx)
    return bad_input(path_text(o.model_path) + " is a gexec graph already; import reads ONNX models");
  Graph g = std::move(model->graph);
  const fs::path graph_dir = fs::path(o.graph_path).parent_path();
  const fs::path weights = o.weights_dir.empty() ? graph_dir : fs::path(o.weights_dir);

  // Every file written is checked first, as `run` checks its outputs: a regular file or nothing,
  // in a folder that can be written, none of them the model or its data.
  std::vector<std::pair<std::string, std::string>> outputs{{"-o", o.graph_path}};
  std::vector<std::pair<std::string, std::string>> inputs{{"the model", o.model_path}};
  for (const std::string& f : model->data_files) inputs.push_back({"an external data file of the model", f});
  std::vector<std::pair<TensorId, std::string>> files;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& ten = g.tensors[t];
    if (!ten.init || ten.init->kind != InitKind::values) continue;
    const std::string path = (weights / tensor_file_name(ten.name)).string();
    outputs.push_back({"--weights (tensor " + quote_text(ten.name) + ")", path});
    files.emplace_back(TensorId(t), path);
  }
  std::error_code ec;
  if (!files.empty() && !weights.empty() && !fs::exists(weights, ec) && !fs::create_directories(weights, ec) && ec)
    return bad_input("--weights: cannot create " + path_text(weights.string()) + ": " + ec.message());
  GEXEC_TRY(check_output_files(outputs, inputs, o.force));

  for (const auto& [id, path] : files) {
    Tensor& t = g.tensor(id);
    if (Status s = write_weight(t, path); !s) return s.error().with("--weights");
    // Relative to the graph's folder, where init.file paths start.
    const fs::path abs = fs::absolute(path).lexically_normal();
    const fs::path rel = abs.lexically_relative(fs::absolute(graph_dir.empty() ? fs::path(".") : graph_dir).lexically_normal());
    t.init->kind = InitKind::file;
    t.init->file = rel.empty() ? abs.string() : rel.string();
  }
  GEXEC_TRY(save_graph_file(g, o.graph_path, graph_dir.string()));
  out << "wrote " << o.graph_path << " (" << g.tensors.size() << " tensors, " << g.ops.size() << " ops; "
      << model->description << ")";
  if (!files.empty())
    out << " and " << files.size() << " weight file" << (files.size() == 1 ? "" : "s") << " in "
        << (weights.empty() ? std::string(".") : weights.string());
  out << "\n";
  return {};
}

}  // namespace

Exit import_command(const ImportOptions& opts, std::ostream& out, std::ostream& err) {
  const Status s = import_into(opts, out);
  if (s) return Exit::ok;
  err << "gexec: " << printable(s.error().message, true) << "\n";
  return s.error().code;
}

}  // namespace gexec
