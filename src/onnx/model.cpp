// A ModelProto to a gexec graph: the opset and the ops checked up front (every unmapped op named),
// the graph inputs with their dimensions bound, the initializers as constants, each node through
// its mapping function, and the graph outputs as tensors that ops write.
#include <algorithm>
#include <climits>
#include <filesystem>
#include <set>

#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/graph_build.hpp"
#include "context.hpp"
#include "patterns.hpp"

namespace gexec::onnx_import {

namespace {

bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Problems of the whole model, one line each, at most kMaxProblems.
struct Lines {
  std::vector<std::string> lines;
  size_t total = 0;
  void add(std::string s) {
    if (total++ < kMaxProblems) lines.push_back(std::move(s));
  }
  Error error() const {
    std::string s;
    for (const std::string& l : lines) s += (s.empty() ? "" : "\n") + l;
    if (total > lines.size()) s += "\n... and " + std::to_string(total - lines.size()) + " more";
    return bad_input(s);
  }
};

// Every node's op, domain, opset and attributes against the table, before any is mapped: a model
// with ops gexec does not map is refused with each of them named (the first node of each op type).
// A node inside an exporter pattern (`inside`: all but its last node, which is a Mul) was checked
// by the match (ai.onnx, no attributes); the last node is checked here, its opset too.
Status check_ops(const pb::GraphProto& graph, const std::string& file, int64_t opset,
                 const std::map<std::string, int64_t>& opsets, const std::vector<bool>& inside) {
  Lines p;
  std::set<std::string> reported;
  for (int i = 0; i < graph.node_size(); ++i) {
    const pb::NodeProto& node = graph.node(i);
    if (inside[size_t(i)]) continue;
    std::string where = file + ": node " + std::to_string(i);
    if (!node.name().empty()) where.append(" ").append(quote_text(node.name()));
    // The opset of the node's own domain ("opset 1 of ai.onnx.preview.training" outside ai.onnx).
    const bool ai_onnx = default_domain(node.domain());
    const auto own = opsets.find(node.domain());
    const int64_t version = ai_onnx ? opset : own == opsets.end() ? -1 : own->second;
    where.append(" (").append(name_text(node.op_type())).append(", opset ");
    where.append(version < 0 ? std::string("?") : std::to_string(version));
    if (!ai_onnx) where.append(" of ").append(name_text(node.domain()));
    where.append("): ");
    if (!ai_onnx) {
      if (reported.insert(node.domain() + "/" + node.op_type()).second)
        p.add(where + "domain " + quote_text(node.domain()) + " is not ai.onnx; gexec maps ai.onnx ops only");
      continue;
    }
    const OpEntry* e = find_op(node.op_type());
    if (!e) {
      if (reported.insert(node.op_type()).second) {
        std::string known;
        for (const OpEntry& k : op_table()) known += (known.empty() ? "" : ", ") + std::string(k.op);
        p.add(where + "op " + name_text(node.op_type()) + " is not supported (gexec maps " + known + ")");
      }
      continue;
    }
    if (opset < 0) {
      if (reported.insert(node.op_type()).second) p.add(where + "the model imports no opset of ai.onnx (opset_import)");
      continue;
    }
    if (opset < kMinOpset || opset > kMaxOpset) {
      if (reported.insert(node.op_type()).second)
        p.add(where + "opset " + std::to_string(opset) + " of ai.onnx is outside the opsets gexec maps (" +
              std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
      continue;
    }
    if (opset < e->since) {
      if (reported.insert(node.op_type()).second)
        p.add(where + std::string(e->op) + " is in ai.onnx from opset " + std::to_string(e->since) +
              "; this model imports opset " + std::to_string(opset));
      continue;
    }
    if (node.input_size() < e->min_inputs || node.input_size() > e->max_inputs)
      p.add(where + std::string(e->op) + " takes " +
            (e->min_inputs == e->max_inputs ? std::to_string(e->min_inputs)
             : e->max_inputs == OpEntry::kUnbounded ? std::to_string(e->min_inputs) + " or more"
                                            : std::to_string(e->min_inputs) + " to " + std::to_string(e->max_inputs)) +
            (e->max_inputs == 1 ? " input" : " inputs") + "; this node has " + std::to_string(node.input_size()));
    for (const pb::AttributeProto& a : node.attribute()) {
      const auto known = std::find_if(e->attrs.begin(), e->attrs.end(), [&](const OpAttr& k) { return a.name() == k.name; });
      if (known == e->attrs.end()) {
        std::string list;
        for (const OpAttr& k : e->attrs) list += (list.empty() ? "" : ", ") + std::string(k.name);
        p.add(where + "attribute " + quote_text(a.name()) + " is not supported (" + std::string(e->op) +
              (list.empty() ? " takes none)" : " takes " + list + ")"));
      } else if (opset < known->since) {
        p.add(where + "attribute " + quote_text(a.name()) + " of " + std::string(e->op) + " is in ai.onnx from opset " +
              std::to_string(known->since) + "; this model imports opset " + std::to_string(opset));
      } else if (!a.ref_attr_name().empty()) {
        p.add(where + "attribute " + quote_text(a.name()) + " refers to a function's attribute; gexec maps no functions");
      }
    }
  }
  if (p.total > 0) return p.error();
  return {};
}

// The named dimensions a model declares on its inputs and outputs.
std::set<std::string> dim_params(const pb::GraphProto& graph) {
  std::set<std::string> names;
  auto add = [&](const pb::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (const auto& d : vi.type().tensor_type().shape().dim())
      if (d.has_dim_param() && !d.dim_param().empty()) names.insert(d.dim_param());
  };
  for (const auto& vi : graph.input()) add(vi);
  for (const auto& vi : graph.output()) add(vi);
  return names;
}

// Binds the dimensions of the graph inputs: fixed sizes, --dim, and the shapes of given data.
class DimBinder {
 public:
  DimBinder(const std::string& file, const DimOptions& o) : file_(file), opts_(o) {}

  Result<std::vector<int64_t>> shape(const pb::ValueInfoProto& vi, size_t position, const std::string& gexec_name) {
    const std::string who = file_ + ": graph input " + quote_text(vi.name());
    const auto& tt = vi.type().tensor_type();
    std::optional<std::vector<int64_t>> given;
    bool asked = false;
    auto data_shape = [&]() -> const std::optional<std::vector<int64_t>>& {
      if (!asked && opts_.input_shape) given = opts_.input_shape(position, vi.name(), gexec_name);
      asked = true;
      return given;
    };
    if (!tt.has_shape()) {
      if (!data_shape()) return bad_input(who + " has no shape in the model; give its data with --load-inputs");
      return *data_shape();
    }
    const int rank = tt.shape().dim_size();
    std::vector<int64_t> out;
    int64_t count = 1;
    for (int i = 0; i < rank; ++i) {
      const auto& d = tt.shape().dim(i);
      int64_t size = -1;
      std::string why;
      if (d.has_dim_value()) {
        size = d.dim_value();
        if (size < 0) return bad_input(who + " has dimension " + std::to_string(i) + " of size " + std::to_string(size));
      } else {
        const std::string param = d.has_dim_param() ? d.dim_param() : "";
        if (!param.empty()) {
          if (auto it = opts_.dims.find(param); it != opts_.dims.end()) size = it->second;
          else if (auto b = bound_.find(param); b != bound_.end()) size = b->second;
        }
        // Data of another rank (gexec's shape of the input, as --dump writes it: leading dimensions
        // folded) sizes nothing; it is checked against the input once the sizes are known.
        const bool same_rank = data_shape() && int(data_shape()->size()) == rank;
        if (data_shape() && !same_rank && size < 0)
          return bad_input(who + " has rank " + std::to_string(rank) + "; its data has shape " + shape_str(*data_shape()) +
                           (param.empty() ? std::string() : ", which does not say " + quote_text(param) + "; give it with --dim " +
                                                                name_text(param) + "=N"));
        if (same_rank) {
          const int64_t from_data = (*data_shape())[size_t(i)];
          if (size >= 0 && size != from_data)
            return bad_input(who + ": dimension " + quote_text(param) + " is " + std::to_string(size) +
                             (opts_.dims.count(param) ? " (--dim)" : " (from an earlier input)") +
                             " but the data given for this input has " + std::to_string(from_data));
          size = from_data;
        }
        if (size < 0)
          return bad_input(who + ": dimension " + std::to_string(i) +
                           (param.empty() ? " has no size and no name; give the input's data with --load-inputs"
                                          : " " + quote_text(param) + " has no size; give it with --dim " +
                                                name_text(param) + "=N, or give the input's data with --load-inputs"));
        if (size <= 0) return bad_input(who + ": dimension " + std::to_string(i) + " would be " + std::to_string(size));
        if (!param.empty()) bound_[param] = size;
      }
      if (size > 0 && count > 0 && size > kMaxElements / count) return bad_input(who + " has more than 2^48 elements");
      count *= size;
      out.push_back(size);
    }
    return out;
  }

 private:
  std::string file_;
  const DimOptions& opts_;
  std::map<std::string, int64_t> bound_;
};

// The graph inputs that are not initializers, as gexec inputs (drawn from the seed unless loaded).
Status add_inputs(Builder& b, const pb::GraphProto& graph, const DimOptions& dims, Model& m) {
  // A --dim that names no dimension of the model is a typo, not a harmless extra.
  const std::set<std::string> params = dim_params(graph);
  for (const auto& [name, size] : dims.dims)
    if (!params.count(name)) {
      std::string known;
      for (const std::string& p : params) known += (known.empty() ? "" : ", ") + name_text(p);
      return bad_input("--dim " + name_text(name) + "=" + std::to_string(size) + ": " + b.file +
                       " has no dimension named " + quote_text(name) +
                       (known.empty() ? " (it names none)" : " (it names " + known + ")"));
    }
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  DimBinder binder(b.file, dims);
  size_t position = 0;
  for (const pb::ValueInfoProto& vi : graph.input()) {
    if (initializers.count(vi.name())) continue;
    const std::string who = b.file + ": graph input " + quote_text(vi.name());
    if (b.values.count(vi.name())) return bad_input(who + " is declared twice");
    if (!vi.type().has_tensor_type()) {
      // Refused by the node that reads it, which names the op; a model's unread input is harmless.
      Value v;
      v.name = vi.name();
      v.not_tensor = std::string(vi.type().has_sequence_type()        ? "a sequence"
                                 : vi.type().has_map_type()           ? "a map"
                                 : vi.type().has_optional_type()      ? "an optional"
                                 : vi.type().has_sparse_tensor_type() ? "a sparse tensor"
                                                                      : "not a tensor") +
                     " (gexec maps tensors only)";
      m.inputs.push_back({vi.name(), kNone, {}, kUndefined});
      b.values.emplace(vi.name(), std::move(v));
      ++position;
      continue;
    }
    const std::string gname = b.tensor_names.take(sanitize_name(vi.name()));
    auto shape = binder.shape(vi, position, gname);
    if (!shape) return shape.error();
    Value v;
    v.name = vi.name();
    v.type = vi.type().tensor_type().elem_type();
    v.shape = *shape;
    if (numel(v.shape) == 0) {
      v.not_tensor = "empty, " + onnx_shape_str(v.shape) + " (a gexec tensor holds at least one element)";
    } else if (const auto dtype = gexec_dtype(v.type)) {
      v.tensor = add_tensor(b.g, gname, default_gexec_shape(v.shape), *dtype);
      b.reshapeable.push_back(true);
    }
    m.inputs.push_back({vi.name(), v.tensor, v.shape, v.type});
    b.values.emplace(vi.name(), std::move(v));
    ++position;
  }
  return {};
}

Status add_initializers(Builder& b, const pb::GraphProto& graph) {
  if (graph.sparse_initializer_size() > 0)
    return bad_input(b.file + ": sparse initializers (" + quote_text(graph.sparse_initializer(0).values().name()) +
                     ") are not supported");
  for (const pb::TensorProto& t : graph.initializer()) {
    const std::string who = b.file + ": initializer " + quote_text(t.name());
    if (t.name().empty()) return bad_input(b.file + ": an initializer has no name");
    if (b.values.count(t.name())) return bad_input(who + " is declared twice");
    Value v;
    v.name = t.name();
    v.type = t.data_type();
    int64_t count = 1;
    for (int64_t d : t.dims()) {
      if (d < 0 || (d > 0 && count > kMaxElements / d)) return bad_input(who + " has the shape " + shape_str({t.dims().begin(), t.dims().end()}) + ", out of range");
      count *= d;
      v.shape.push_back(d);
    }
    v.proto = &t;
    b.values.emplace(t.name(), std::move(v));
  }
  return {};
}

// Each node through its mapping; a pattern's nodes as one op at its last node (`in_pattern`: per
// node, its pattern's index or -1).
Status map_nodes(Builder& b, const pb::GraphProto& graph, const std::vector<Pattern>& patterns,
                 const std::vector<int>& in_pattern) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const pb::NodeProto& proto = graph.node(i);
    Node n(b, proto, size_t(i));
    if (const int k = in_pattern[size_t(i)]; k >= 0) {
      const Pattern& p = patterns[size_t(k)];
      if (p.root != i) continue;  // its value is read only inside the pattern
      if (b.values.count(proto.output(0)))
        return n.refuse("output " + quote_text(proto.output(0)) + " is already defined; each value is written once");
      GEXEC_TRY(map_pattern(n, p));
      continue;
    }
    for (int k = 0; k < proto.input_size(); ++k)
      if (!proto.input(k).empty() && !b.values.count(proto.input(k)))
        return n.refuse("input " + quote_text(proto.input(k)) +
                        " is not a graph input, an initializer or the output of an earlier node (ONNX lists nodes in data-flow order)");
    for (int k = 0; k < proto.output_size(); ++k)
      if (!proto.output(k).empty() && b.values.count(proto.output(k)))
        return n.refuse("output " + quote_text(proto.output(k)) + " is already defined; each value is written once");
    if (proto.output_size() < 1 || proto.output(0).empty()) return n.refuse("the node has no output");
    if (proto.output_size() > 1) return n.refuse("the node has " + std::to_string(proto.output_size()) + " outputs; " + proto.op_type() + " has one");
    const OpEntry* e = find_op(proto.op_type());
    GEXEC_TRY(e->map(n));
    const auto it = b.values.find(proto.output(0));
    if (it == b.values.end()) return n.refuse("internal: the mapping defined no output");
    if (!checked_numel(it->second.shape))
      return n.refuse("the result " + onnx_shape_str(it->second.shape) + " holds more than 2^48 elements");
  }
  return {};
}

// Each graph output as a tensor an op writes, under the output's name: a computed value's own
// tensor where it is the first output of it, else a copy (a CAST to the same dtype) of an input,
// a constant, or a value another output already names.
Status add_outputs(Builder& b, const pb::GraphProto& graph, Model& m) {
  if (graph.output_size() == 0) return bad_input(b.file + ": the graph has no outputs");
  for (const pb::ValueInfoProto& vi : graph.output()) {
    const std::string who = b.file + ": graph output " + quote_text(vi.name());
    const auto it = b.values.find(vi.name());
    if (it == b.values.end()) return bad_input(who + " is computed by no node and is not an input");
    const Value& v = it->second;
    const auto dtype = gexec_dtype(v.type);
    const std::string from = v.defined_by.empty() ? "" : " (from " + v.defined_by + ")";
    if (!v.not_tensor.empty()) return bad_input(who + from + " is " + v.not_tensor);
    if (!dtype)
      return bad_input(who + from + " is " + type_name(v.type) + "; gexec's outputs are f16, bf16, f32 or f8");
    if (numel(v.shape) == 0)
      return bad_input(who + from + " is empty, " + onnx_shape_str(v.shape) + " (a gexec tensor holds at least one element)");
    if (vi.type().has_tensor_type()) {
      const auto& tt = vi.type().tensor_type();
      if (tt.elem_type() != kUndefined && tt.elem_type() != v.type)
        return bad_input(who + from + " is declared " + type_name(tt.elem_type()) + " but computes " + type_name(v.type));
      if (tt.has_shape()) {
        bool same = tt.shape().dim_size() == int(v.shape.size());
        for (int i = 0; same && i < tt.shape().dim_size(); ++i)
          same = !tt.shape().dim(i).has_dim_value() || tt.shape().dim(i).dim_value() == v.shape[size_t(i)];
        if (!same) return bad_input(who + from + " is declared with another shape than it computes, " + onnx_shape_str(v.shape));
      }
    }
    const GraphIndex idx(b.g);
    TensorId t = v.tensor;
    bool copy = v.constant() || t == kNone || idx.is_input(t) || idx.is_output[size_t(t)];
    if (v.constant()) {
      auto c = b.materialize(v, default_gexec_shape(v.shape), *dtype, who);
      if (!c) return c.error();
      t = *c;
    }
    if (copy) {
      const Tensor& src = b.g.tensor(t);
      const TensorId out = add_tensor(b.g, b.tensor_names.take(sanitize_name(vi.name())), src.shape, src.dtype);
      b.reshapeable.push_back(false);
      add_op(b.g, b.op_names.take(sanitize_name("copy_" + vi.name())), OpType::CAST, {t}, out);
      t = out;
    } else if (const std::string want = sanitize_name(vi.name()); b.g.tensor(t).name != want) {
      b.g.tensor(t).name = b.tensor_names.take(want);
    }
    b.g.outputs.push_back(t);
    m.outputs.push_back({vi.name(), t, v.shape, v.type});
  }
  return {};
}

// "nodes 4 "/act/Div", 5, 6, 7, 8 "/act/Mul_1" (Div, Erf, Add, Mul, Mul): GELU (erf) of "x"".
std::string pattern_line(const pb::GraphProto& graph, const Pattern& p) {
  std::string nodes, ops;
  for (int i : p.nodes) {
    const pb::NodeProto& n = graph.node(i);
    nodes += (nodes.empty() ? "" : ", ") + std::to_string(i);
    if (!n.name().empty()) nodes += " " + quote_text(n.name());
    ops += (ops.empty() ? "" : ", ") + name_text(n.op_type());
  }
  return "nodes " + nodes + " (" + ops + "): " + p.what + " of " + quote_text(p.x);
}

}  // namespace

bool looks_like_onnx(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > size_t(INT_MAX)) return false;
  pb::ModelProto m;
  return m.ParseFromArray(bytes.data(), int(bytes.size())) && m.has_graph();
}

Result<Model> load_onnx(std::string_view bytes, const std::string& display_name, const std::string& base_dir,
                        const DimOptions& dims) {
  const std::string& file = display_name;
  if (bytes.size() > size_t(INT_MAX))
    return bad_input(file + ": the model is " + std::to_string(bytes.size()) +
                     " bytes; a ModelProto is limited to 2 GiB (larger weights go in external data files)");
  pb::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), int(bytes.size())))
    return bad_input(file + ": not an ONNX model: the protobuf does not parse as a ModelProto (a truncated or damaged file?)");
  if (!proto.has_graph()) return bad_input(file + ": the ONNX model has no graph");
  int64_t opset = -1;
  std::map<std::string, int64_t> opsets;
  for (const auto& o : proto.opset_import()) {
    if (default_domain(o.domain())) opset = o.version();
    opsets[o.domain()] = o.version();
  }
  const pb::GraphProto& graph = proto.graph();
  const std::vector<Pattern> patterns = find_patterns(graph, base_dir);
  std::vector<int> in_pattern(size_t(graph.node_size()), -1);
  std::vector<bool> inside(size_t(graph.node_size()), false);
  for (size_t k = 0; k < patterns.size(); ++k)
    for (int i : patterns[k].nodes) {
      in_pattern[size_t(i)] = int(k);
      inside[size_t(i)] = i != patterns[k].root;
    }
  GEXEC_TRY(check_ops(graph, file, opset, opsets, inside));
  if (opset < 0) return bad_input(file + ": the model imports no opset of ai.onnx (opset_import)");

  Model m;
  m.opset = opset;
  m.producer = proto.producer_name() + (proto.producer_version().empty() ? "" : " " + proto.producer_version());
  Builder b;
  b.file = file;
  b.base_dir = base_dir;
  b.opset = opset;
  for (const auto& vi : graph.output()) b.output_names.insert(vi.name());
  GEXEC_TRY(add_initializers(b, graph));
  GEXEC_TRY(add_inputs(b, graph, dims, m));
  GEXEC_TRY(map_nodes(b, graph, patterns, in_pattern));
  GEXEC_TRY(add_outputs(b, graph, m));
  std::string stem = std::filesystem::path(file).filename().string();
  if (stem.size() > 5 && stem.ends_with(".onnx")) stem.resize(stem.size() - 5);
  b.g.name = graph.name().empty() ? stem : graph.name();
  m.graph = std::move(b.g);
  for (const std::string& problem : verify(m.graph))
    return bad_input(file + ": internal: the mapped graph fails verify: " + problem);
  m.data_files = std::move(b.data_files);
  std::map<std::string, int> ops;
  for (const pb::NodeProto& node : graph.node()) ++ops[node.op_type()];
  for (const auto& [op, count] : ops) m.op_types.push_back(count > 1 ? std::to_string(count) + " " + op : op);
  for (const Pattern& p : patterns) m.patterns.push_back(pattern_line(graph, p));
  return m;
}

}  // namespace gexec::onnx_import
