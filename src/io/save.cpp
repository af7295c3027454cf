// Writing a graph back as a version-1 graph file: one tensor or op per line, keys in a fixed order.
//
// Everything the loader reads is written, so the file loads back to an equal Graph; `hoisted`
// is pass state with no place in the format, and is not written, nor is the `constant` mark that
// fold_constant_casts puts on a hoisted op's output (the format keeps `constant` for graph
// inputs; the pass marks it again when the file runs).
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "gexec/io/file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"

namespace gexec {

namespace {

using ojson = nlohmann::ordered_json;

// Names are bytes to the IR; invalid UTF-8 is replaced rather than thrown on.
std::string dump(const ojson& j) { return dump_json(j, -1); }

// init.values: numbers, and the strings "nan", "inf", "-inf" where JSON has no number.
ojson values_json(const std::vector<double>& values) {
  ojson a = ojson::array();
  for (double v : values) {
    if (std::isnan(v)) a.push_back("nan");
    else if (std::isinf(v)) a.push_back(v > 0 ? "inf" : "-inf");
    else a.push_back(v);
  }
  return a;
}

ojson init_json(const Init& in) {
  ojson j = ojson::object();
  switch (in.kind) {
    case InitKind::normal: j["dist"] = "normal", j["mean"] = in.mean, j["std"] = in.std; break;
    case InitKind::uniform: j["dist"] = "uniform", j["low"] = in.low, j["high"] = in.high; break;
    case InitKind::zeros: j["dist"] = "zeros"; break;
    case InitKind::ones: j["dist"] = "ones"; break;
    case InitKind::values: j["values"] = values_json(in.values); break;
    case InitKind::file: j["file"] = in.file; break;
  }
  return j;
}

ojson tensor_json(const Graph& g, const Tensor& t, bool written) {
  ojson j = ojson::object();
  j["name"] = t.name;
  j["shape"] = t.shape;
  j["dtype"] = dtype_name(t.dtype);
  if (t.layout != Layout::rowmajor) j["layout"] = layout_name(t.layout);
  if (t.init) j["init"] = init_json(*t.init);
  if (t.constant && !written) j["constant"] = true;
  if (t.scale.is_block()) {
    ojson sc = ojson::object();
    sc["block"] = t.scale.block;
    sc["tensor"] = t.scale.tensor >= 0 ? g.tensor(t.scale.tensor).name : std::string();
    j["scale"] = std::move(sc);
  } else if (!t.scale.is_default()) {
    if (t.scale.axis < 0) {
      j["scale"] = t.scale.values[0];
    } else {
      ojson sc = ojson::object();
      sc["axis"] = t.scale.axis;
      sc["values"] = t.scale.values;
      j["scale"] = std::move(sc);
    }
  }
  return j;
}

ojson op_json(const Graph& g, const Op& op) {
  ojson j = ojson::object();
  j["op_type"] = op_type_name(op.type);
  j["name"] = op.name;
  auto names = [&](const std::vector<TensorId>& ids) {
    ojson a = ojson::array();
    for (TensorId t : ids) a.push_back(g.tensor(t).name);
    return a;
  };
  j["inputs"] = names(op.inputs);
  j["outputs"] = names(op.outputs);
  const Attrs def;
  ojson a = ojson::object();
  if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT) {
    if (op.attrs.trans_a) a["trans_a"] = true;
    if (op.attrs.trans_b) a["trans_b"] = true;
    if (op.attrs.alpha != def.alpha) a["alpha"] = op.attrs.alpha;
    if (op.attrs.fast_accum) a["fast_accum"] = true;
  }
  if (op.type == OpType::GROUPED_GEMM) {
    if (op.attrs.trans_b) a["trans_b"] = true;
    if (op.attrs.alpha != def.alpha) a["alpha"] = op.attrs.alpha;
    if (op.attrs.act != def.act) a["act"] = act_name(op.attrs.act);
  }
  if (op.type == OpType::GEMM_BIAS_ACT) {
    if (op.attrs.act != def.act) a["act"] = act_name(op.attrs.act);
    if (op.attrs.mnk) a["mnk"] = *op.attrs.mnk;
    if (op.attrs.residual) a["residual"] = true;
    if (op.attrs.beta != def.beta) a["beta"] = op.attrs.beta;
  }
  if (op.type == OpType::FUSED_ELEMENTWISE) {
    ojson steps = ojson::array();
    for (const GroupStep& st : op.attrs.steps) {
      ojson s = ojson::object();
      s["op"] = op_type_name(st.type);
      s["args"] = st.args;
      s["dtype"] = dtype_name(st.dtype);
      if (st.type == OpType::GELU && st.approximate != GeluApprox::tanh) s["approximate"] = gelu_approx_name(st.approximate);
      if (st.constant) s[std::string(constant_key(st.type))] = *st.constant;
      steps.push_back(std::move(s));
    }
    a["steps"] = std::move(steps);
    a["results"] = op.attrs.results;
  }
  if (is_collective(op.type)) {
    a["ranks"] = op.attrs.ranks;
    if (op.type != OpType::ALL_REDUCE) a["axis"] = op.attrs.axis;
  }
  if (op.type == OpType::GELU && op.attrs.approximate != def.approximate)
    a["approximate"] = gelu_approx_name(op.attrs.approximate);
  if (op.attrs.constant) a[std::string(constant_key(op.type))] = *op.attrs.constant;
  if (!a.empty()) j["attrs"] = std::move(a);
  return j;
}

// "key": [\n    item,\n    item\n  ]
std::string list(const char* key, const std::vector<ojson>& items) {
  std::string s = std::string("  \"") + key + "\": [\n";
  for (size_t i = 0; i < items.size(); ++i) s += "    " + dump(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  return s + "  ]";
}

}  // namespace

std::string save_graph(const Graph& g) {
  std::string s = "{\n  \"format\": \"gexec.graph\",\n  \"version\": " + std::to_string(kGraphFormatVersion) + ",\n";
  s += "  \"name\": " + dump(ojson(g.name)) + ",\n";
  if (g.seed) s += "  \"seed\": " + std::to_string(*g.seed) + ",\n";
  std::vector<ojson> items;
  std::vector<bool> written(g.tensors.size(), false);
  for (const Op& op : g.ops)
    for (TensorId t : op.outputs)
      if (t >= 0 && size_t(t) < written.size()) written[size_t(t)] = true;
  for (size_t t = 0; t < g.tensors.size(); ++t) items.push_back(tensor_json(g, g.tensors[t], written[t]));
  s += list("tensors", items) + ",\n";
  items.clear();
  for (const Op& op : g.ops) items.push_back(op_json(g, op));
  s += list("ops", items) + ",\n";
  ojson outs = ojson::array();
  for (TensorId t : g.outputs) outs.push_back(g.tensor(t).name);
  s += "  \"outputs\": " + dump(outs) + "\n}\n";
  return s;
}

Status save_graph_file(const Graph& g, const std::string& path, const std::string& from_dir) {
  namespace fs = std::filesystem;
  Graph out = g;
  // init.file paths are relative to the file that names them: rewritten for the new folder.
  const fs::path old_dir = fs::absolute(from_dir.empty() ? fs::path(".") : fs::path(from_dir)).lexically_normal();
  const fs::path new_dir = fs::absolute(fs::path(path)).parent_path().lexically_normal();
  for (Tensor& t : out.tensors) {
    if (!t.init || t.init->kind != InitKind::file || fs::path(t.init->file).is_absolute()) continue;
    const fs::path target = (old_dir / t.init->file).lexically_normal();
    const fs::path rel = target.lexically_relative(new_dir);
    t.init->file = rel.empty() ? target.string() : rel.string();
  }
  return write_file_atomic(path, save_graph(out));
}

}  // namespace gexec
