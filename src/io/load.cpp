// Loading a graph file: the top level, the outputs, and the checks that need the whole graph.
#include "gexec/io/load.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <unordered_set>

#include "gexec/io/file.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/io/text.hpp"
#include "load_context.hpp"

namespace gexec {

using namespace load_detail;

namespace {

constexpr uint64_t kMaxFileBytes = uint64_t(256) << 20;

void load_header(LoadState& s, const json& root, Graph& g, const std::string& display_name) {
  Problems& p = s.p;
  if (const json* f = require(p, root, "", "format")) {
    if (!f->is_string() || f->get_ref<const std::string&>() != "gexec.graph")
      p.add("/format", "expected \"gexec.graph\", found " + describe(*f));
  }
  if (const json* v = require(p, root, "", "version")) {
    const std::string want = std::to_string(kGraphFormatVersion);
    if (!v->is_number_integer())
      p.add("/version", "expected the integer " + want + ", found " + describe(*v));
    else if (*v != kGraphFormatVersion)
      p.add("/version", "version " + v->dump() + " is not supported; this build reads version " + want);
  }
  if (const json* n = optional_key(root, "name")) {
    if (auto str = get_string(p, *n, "/name")) {
      if (str->empty()) p.add("/name", "the graph name must not be empty");
      g.name = *str;
    }
  } else {
    std::string stem = std::filesystem::path(display_name).filename().string();
    if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
    g.name = stem;
  }
  if (const json* sd = optional_key(root, "seed")) {
    if (sd->is_number_unsigned() || (sd->is_number_integer() && sd->get<int64_t>() >= 0))
      g.seed = sd->get<uint64_t>();
    else
      p.add("/seed", "expected an unsigned 64-bit integer (0 to " +
                         std::to_string(std::numeric_limits<uint64_t>::max()) + "), found " + describe(*sd));
  }
}

void load_outputs(LoadState& s, const json* outputs) {
  Problems& p = s.p;
  Graph& g = s.g;
  if (!outputs) {
    // Default: every tensor that an op writes and no op reads, in declaration order.
    std::vector<bool> read(g.tensors.size(), false);
    for (const Op& op : g.ops)
      for (TensorId t : op_reads(g, op)) read[size_t(t)] = true;  // a block scale's S is read too
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (s.writer_pos[t] >= 0 && !read[t]) g.outputs.push_back(TensorId(t));
    if (g.outputs.empty() && !g.ops.empty())
      p.add("/ops", "no tensor is written by an op and read by none, so there is no default output");
    return;
  }
  if (!outputs->is_array()) {
    p.add("/outputs", "expected an array of tensor names, found " + describe(*outputs));
    return;
  }
  if (outputs->empty()) p.add("/outputs", "outputs must name at least one tensor (leave it out for the default)");
  std::unordered_set<TensorId> seen;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string ptr = ptr_index("/outputs", i);
    const json& v = (*outputs)[i];
    if (!v.is_string()) {
      p.add(ptr, "expected a tensor name (a string), found " + describe(v));
      continue;
    }
    const std::string& name = v.get_ref<const std::string&>();
    auto it = s.tensor_ids.find(name);
    if (it == s.tensor_ids.end()) {
      p.add(ptr, "tensor " + quote(name) + " is not declared");
    } else if (s.writer_pos[size_t(it->second)] < 0) {
      p.add(ptr, "tensor " + quote(name) + " is a graph input (no op writes it); outputs must be written by an op");
    } else if (!seen.insert(it->second).second) {
      p.add(ptr, "tensor " + quote(name) + " is listed twice");
    } else {
      g.outputs.push_back(it->second);
    }
  }
}

// The check reads an f8 output's real values with its S: S of a block-scaled output is an
// output too (where an op writes it; a given S is known to the check without).
void add_block_scale_outputs(Graph& g) {
  const GraphIndex idx(g);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const TensorId st = g.tensor(g.outputs[i]).scale.tensor;
    if (!g.tensor(g.outputs[i]).scale.is_block() || st == kNone || idx.producer[size_t(st)] == kNone) continue;
    if (std::find(g.outputs.begin(), g.outputs.end(), st) == g.outputs.end()) g.outputs.push_back(st);
  }
}

// Shape rules per op and the data-flow order; both need every op well formed.
void check_graph(LoadState& s) {
  Graph& g = s.g;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    bool tensors_ok = true;
    for (TensorId t : op.inputs) tensors_ok = tensors_ok && s.tensor_ok[size_t(t)];
    for (TensorId t : op.outputs) tensors_ok = tensors_ok && s.tensor_ok[size_t(t)];
    if (!tensors_ok) continue;  // the tensor's own problem is already reported
    for (const std::string& msg : check_op(g, op)) s.p.add(ptr_index("/ops", s.op_pos[i]), msg);
  }
  if (auto cycle = topo_sort(g)) {
    // A cycle of 100k ops would be a megabyte line: the first few ops name it, the count sizes it.
    constexpr size_t kShown = 6;
    std::string text;
    auto name = [&g](OpId o) {
      const std::string& n = g.ops[size_t(o)].name;
      return n.size() > kQuoteChars ? n.substr(0, kQuoteChars) + "..." : n;
    };
    for (size_t i = 0; i < cycle->size() && i < kShown; ++i) text += name((*cycle)[i]) + " -> ";
    if (cycle->size() > kShown) text += "... (" + std::to_string(cycle->size()) + " ops in all) -> ";
    text += name(cycle->front());
    s.p.add("/ops", "cycle through " + text);
  }
}

}  // namespace

Result<Graph> load_graph_text(std::string_view text, const std::string& display_name, const std::string& base_dir) {
  Problems p;
  p.file = display_name;
  if (text.size() > kMaxFileBytes) {
    p.add("", "the file is " + std::to_string(text.size()) + " bytes; graph files are limited to " +
                  std::to_string(kMaxFileBytes >> 20) + " MiB");
    return p.error();
  }
  json root;
  if (!parse_json(text, p, &root)) return p.error();
  if (!root.is_object()) {
    p.add("", "the top level must be a JSON object, found " + describe(root));
    return p.error();
  }
  LoadState s{p, base_dir, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  check_keys(p, root, "", {"format", "version", "name", "seed", "tensors", "ops", "outputs"});
  load_header(s, root, s.g, display_name);
  if (const json* t = require(p, root, "", "tensors")) load_tensors(s, *t);
  s.writer_pos.assign(s.g.tensors.size(), -1);
  if (const json* o = require(p, root, "", "ops")) load_ops(s, *o);
  load_inits(s);
  resolve_block_scales(s);
  load_outputs(s, optional_key(root, "outputs"));
  add_block_scale_outputs(s.g);
  check_graph(s);
  if (!p.empty()) return p.error();
  // Every rule was checked above; verify() is the independent statement of the same invariants,
  // so anything it finds here is a loader bug, reported rather than passed on.
  for (const std::string& problem : verify(s.g)) p.add("", "internal: loaded graph fails verify: " + problem);
  if (!p.empty()) return p.error();
  return std::move(s.g);
}

Result<Graph> load_graph_file(const std::string& path) {
  auto f = InputFile::open(path);
  if (!f) return f.error();
  const int64_t size = f->size();
  if (uint64_t(size) > kMaxFileBytes)
    return bad_input(path_text(path) + ": /: the file is " + std::to_string(size) +
                     " bytes; graph files are limited to " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  auto text = f->read_all();
  if (!text) return text.error();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return load_graph_text(*text, path_text(path), dir);
}

}  // namespace gexec
