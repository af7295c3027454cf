// Loading the "tensors" array of a graph file, and the "init" of each graph input.
#include <cmath>
#include <filesystem>
#include <limits>

#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "load_context.hpp"

namespace gexec::load_detail {

namespace {

// Reads "shape"; checks the rank, each dimension, and that the element count and byte size fit.
std::optional<std::vector<int64_t>> load_shape(Problems& p, const json& v, const std::string& ptr, int elem_size) {
  if (!v.is_array()) {
    p.add(ptr, "expected an array of 1 to 4 positive integers, found " + describe(v));
    return std::nullopt;
  }
  if (v.empty() || v.size() > 4) {
    p.add(ptr, "a shape has 1 to 4 dimensions; found " + std::to_string(v.size()));
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  bool ok = true;
  for (size_t i = 0; i < v.size(); ++i) {
    auto d = get_positive_int(p, v[i], ptr_index(ptr, i));
    if (d) shape.push_back(*d);
    ok = ok && d.has_value();
  }
  if (!ok) return std::nullopt;
  // Sizes are signed 64-bit: the limit is 2^63 - 1, for the element count and the bytes.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::string limit = std::to_string(kMax) + " (2^63 - 1)";
  int64_t n = 1;
  for (int64_t d : shape) {
    if (n > kMax / d) {
      p.add(ptr, "the element count of " + shape_str(shape) + " exceeds the largest tensor size, " + limit);
      return std::nullopt;
    }
    n *= d;
  }
  if (n > kMax / elem_size) {
    p.add(ptr, "the byte size of " + shape_str(shape) + " (" + std::to_string(n) + " elements of " +
                   std::to_string(elem_size) + " bytes) exceeds the largest tensor size, " + limit + " bytes");
    return std::nullopt;
  }
  return shape;
}

// An element of init.values: a number, or "nan", "inf", "-inf" (JSON has no non-finite numbers;
// an ONNX constant may hold them, as an attention mask holds -inf).
std::optional<double> get_value(Problems& p, const json& v, const std::string& ptr) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "-inf") return s == "inf" ? std::numeric_limits<double>::infinity()
                                                      : -std::numeric_limits<double>::infinity();
    p.add(ptr, "expected a number or \"nan\", \"inf\", \"-inf\", found " + describe(v));
    return std::nullopt;
  }
  return get_number(p, v, ptr);
}

// Reads a block scale {"block": [BR, BC], "tensor": "S"}: the blocks, and S's name into *s_name
// (resolve_block_scales finds it once every tensor is declared).
std::optional<Scale> load_block_scale(Problems& p, const json& v, const std::string& ptr, std::string* s_name) {
  check_keys(p, v, ptr, {"block", "tensor"});
  const json* block = require(p, v, ptr, "block");
  const json* tensor = require(p, v, ptr, "tensor");
  if (!block || !tensor) return std::nullopt;
  Scale sc;
  sc.values.clear();
  if (!block->is_array() || block->size() != 2) {
    p.add(ptr_key(ptr, "block"), "expected [rows, columns] of one block, two positive integers, found " +
                                     describe(*block));
    return std::nullopt;
  }
  for (size_t i = 0; i < 2; ++i) {
    auto d = get_positive_int(p, (*block)[i], ptr_index(ptr_key(ptr, "block"), i));
    if (!d) return std::nullopt;
    sc.block[i] = *d;
  }
  auto name = get_string(p, *tensor, ptr_key(ptr, "tensor"));
  if (!name) return std::nullopt;
  *s_name = *name;
  return sc;
}

// Reads "scale": a number, {"axis": 0 | 1, "values": [...]} or a block scale; the rules on its
// values are check_scale's, applied once the shape is known.
std::optional<Scale> load_scale(Problems& p, const json& v, const std::string& ptr, std::string* s_name) {
  Scale sc;
  if (v.is_number()) {
    sc.values = {v.get<double>()};
    return sc;
  }
  if (!v.is_object()) {
    p.add(ptr, "expected a positive number, {\"axis\": 0 | 1, \"values\": [...]} or {\"block\": [rows, columns], "
               "\"tensor\": \"S\"}, found " + describe(v));
    return std::nullopt;
  }
  if (v.contains("block") || v.contains("tensor")) return load_block_scale(p, v, ptr, s_name);
  check_keys(p, v, ptr, {"axis", "values"});
  const json* axis = require(p, v, ptr, "axis");
  const json* values = require(p, v, ptr, "values");
  if (!axis || !values) return std::nullopt;
  if (!axis->is_number_integer() || (axis->get<int64_t>() != 0 && axis->get<int64_t>() != 1)) {
    p.add(ptr_key(ptr, "axis"), "expected 0 (one scale per row) or 1 (one per column), found " + describe(*axis));
    return std::nullopt;
  }
  sc.axis = int(axis->get<int64_t>());
  if (!values->is_array() || values->empty()) {
    p.add(ptr_key(ptr, "values"), "expected a non-empty array of positive numbers, found " + describe(*values));
    return std::nullopt;
  }
  sc.values.clear();
  bool ok = true;
  for (size_t i = 0; i < values->size(); ++i) {
    auto d = get_number(p, (*values)[i], ptr_index(ptr_key(ptr, "values"), i));
    ok = ok && d.has_value();
    if (d) sc.values.push_back(*d);
  }
  if (!ok) return std::nullopt;
  return sc;
}

void load_tensor(LoadState& s, const json& v, size_t index) {
  Problems& p = s.p;
  const std::string ptr = ptr_index("/tensors", index);
  if (!v.is_object()) {
    p.add(ptr, "expected a tensor object, found " + describe(v));
    return;
  }
  check_keys(p, v, ptr, {"name", "shape", "dtype", "layout", "device", "init", "constant", "scale"});
  Tensor t;
  bool ok = true;

  std::optional<std::string> name;
  if (const json* n = require(p, v, ptr, "name")) {
    name = get_string(p, *n, ptr_key(ptr, "name"));
    if (name && !check_name(p, *name, ptr_key(ptr, "name"))) name.reset();
  }

  std::optional<DType> dtype;
  if (const json* d = require(p, v, ptr, "dtype")) {
    if (auto str = get_string(p, *d, ptr_key(ptr, "dtype"))) {
      dtype = parse_dtype(*str);
      if (!dtype)
        p.add(ptr_key(ptr, "dtype"), "unknown dtype " + quote(*str) + "; expected one of " + std::string(kDTypeList));
    }
  }
  ok = ok && dtype.has_value();
  if (dtype) t.dtype = *dtype;

  if (const json* sh = require(p, v, ptr, "shape")) {
    // Without a valid dtype, check the size against the largest element.
    auto shape = load_shape(p, *sh, ptr_key(ptr, "shape"), dtype ? dtype_size(*dtype) : 4);
    if (shape) t.shape = std::move(*shape);
    ok = ok && shape.has_value();
  } else {
    ok = false;
  }

  if (const json* l = optional_key(v, "layout")) {
    std::optional<Layout> layout;
    if (auto str = get_string(p, *l, ptr_key(ptr, "layout"))) {
      layout = parse_layout(*str);
      if (!layout)
        p.add(ptr_key(ptr, "layout"), "unknown layout " + quote(*str) + "; expected one of rowmajor, colmajor");
    }
    if (layout == Layout::colmajor && !t.shape.empty() && t.rank() != 2) {
      p.add(ptr_key(ptr, "layout"), "colmajor needs a rank-2 tensor; the shape is " + shape_str(t.shape));
      layout.reset();
    }
    ok = ok && layout.has_value();
    if (layout) t.layout = *layout;
  }

  if (const json* d = optional_key(v, "device")) {
    if (auto str = get_string(p, *d, ptr_key(ptr, "device")); str && *str != "cuda")
      p.add(ptr_key(ptr, "device"), "unknown device " + quote(*str) + "; expected one of cuda");
  }
  if (const json* c = optional_key(v, "constant")) {
    if (auto b = get_bool(p, *c, ptr_key(ptr, "constant"))) t.constant = *b;
  }

  std::string scale_name;  // S of a block scale
  if (const json* sc = optional_key(v, "scale")) {
    const std::string sptr = ptr_key(ptr, "scale");
    if (!dtype || !is_f8(*dtype)) {
      if (dtype)
        p.add(sptr, "a scale is allowed only on f8 tensors (f8e4m3, f8e5m2); this one is " +
                        std::string(dtype_name(*dtype)));
      ok = false;
    } else if (auto scale = load_scale(p, *sc, sptr, &scale_name)) {
      t.scale = std::move(*scale);
      if (!t.shape.empty())
        for (const std::string& why : check_scale(t)) {
          p.add(sptr, why);
          ok = false;
        }
    } else {
      ok = false;
    }
  }

  if (!name) return;
  auto [it, fresh] = s.tensor_ids.emplace(*name, TensorId(s.g.tensors.size()));
  if (!fresh) {
    p.add(ptr_key(ptr, "name"), "tensor " + quote(*name) + " is already declared at /tensors/" +
                                    std::to_string(s.tensor_pos[size_t(it->second)]));
    return;
  }
  t.name = *name;
  s.g.tensors.push_back(std::move(t));
  s.tensor_ok.push_back(ok);
  s.tensor_pos.push_back(index);
  s.tensor_init.push_back(optional_key(v, "init"));
  s.scale_name.push_back(std::move(scale_name));
}

// Reads an init.file array and puts its values in the tensor's storage order.
void load_init_file(LoadState& s, const Tensor& t, const std::string& ptr, Init& init) {
  std::filesystem::path path(init.file);
  if (path.is_relative() && !s.base_dir.empty()) path = std::filesystem::path(s.base_dir) / path;
  auto arr = read_npy(path.string());
  if (!arr) {
    // read_npy starts its message with the path it opened; the problem line shows the path as
    // written instead, quoted, so that a path with a newline or of megabytes stays one short line.
    std::string why = arr.error().message;
    const std::string shown = path_text(path.string());
    if (why.starts_with(shown)) why = quote(init.file) + why.substr(shown.size());
    else why = quote(init.file) + ": " + why;
    s.p.add(ptr, why);
    return;
  }
  if (const std::string why = npy_dtype_problem(arr->descr, t.dtype); !why.empty()) {
    s.p.add(ptr, quote(init.file) + " " + why);
    return;
  }
  if (arr->shape != t.shape) {
    s.p.add(ptr, quote(init.file) + " has shape " + shape_str(arr->shape) + "; tensor " + quote(t.name) + " is " +
                     shape_str(t.shape));
    return;
  }
  if (t.layout == Layout::colmajor) {
    init.values = to_colmajor(arr->values, t.shape[0], t.shape[1]);
  } else {
    init.values = std::move(arr->values);
  }
}

void load_init(LoadState& s, TensorId id) {
  Problems& p = s.p;
  const json& v = *s.tensor_init[size_t(id)];
  Tensor& t = s.g.tensor(id);
  const std::string ptr = ptr_key(ptr_index("/tensors", s.tensor_pos[size_t(id)]), "init");
  if (const long w = s.writer_pos[size_t(id)]; w >= 0) {
    p.add(ptr, "tensor " + quote(t.name) + " is written by " + s.op_ref(w) + "; only graph inputs take an init");
    return;
  }
  if (!v.is_object()) {
    p.add(ptr, "expected an init object, found " + describe(v));
    return;
  }
  const bool has_dist = v.contains("dist"), has_values = v.contains("values"), has_file = v.contains("file");
  const int forms = int(has_dist) + int(has_values) + int(has_file);
  if (forms != 1) {
    p.add(ptr, forms == 0 ? "an init needs one of the keys dist, values, file"
                          : "an init takes only one of the keys dist, values, file");
    return;
  }
  Init init;
  bool ok = true;
  if (has_dist) {
    auto dist = get_string(p, v["dist"], ptr_key(ptr, "dist"));
    if (!dist) return;
    auto number = [&](const char* key, double& field) {
      if (const json* n = optional_key(v, key)) {
        auto d = get_number(p, *n, ptr_key(ptr, key));
        ok = ok && d.has_value();
        if (d) field = *d;
      }
    };
    if (*dist == "normal") {
      init.kind = InitKind::normal;
      check_keys(p, v, ptr, {"dist", "mean", "std"});
      number("mean", init.mean);
      number("std", init.std);
      if (ok && init.std < 0) {
        p.add(ptr_key(ptr, "std"), "std must not be negative; found " + v["std"].dump());
        ok = false;
      }
    } else if (*dist == "uniform") {
      init.kind = InitKind::uniform;
      check_keys(p, v, ptr, {"dist", "low", "high"});
      number("low", init.low);
      number("high", init.high);
      if (ok && !(init.low < init.high)) {
        p.add(ptr, "uniform needs low < high; found low " + json(init.low).dump() + ", high " +
                       json(init.high).dump());
        ok = false;
      }
    } else if (*dist == "zeros" || *dist == "ones") {
      init.kind = *dist == "zeros" ? InitKind::zeros : InitKind::ones;
      check_keys(p, v, ptr, {"dist"});
    } else {
      p.add(ptr_key(ptr, "dist"),
            "unknown distribution " + quote(*dist) + "; expected one of normal, uniform, zeros, ones");
      return;
    }
  } else if (has_values) {
    init.kind = InitKind::values;
    check_keys(p, v, ptr, {"values"});
    const json& vals = v["values"];
    const std::string vptr = ptr_key(ptr, "values");
    if (!vals.is_array()) {
      p.add(vptr, "expected an array of numbers, found " + describe(vals));
      return;
    }
    std::vector<double>& v = init.values.edit();
    v.reserve(vals.size());
    for (size_t i = 0; i < vals.size(); ++i) {
      auto d = get_value(p, vals[i], ptr_index(vptr, i));
      ok = ok && d.has_value();
      if (d) v.push_back(*d);
    }
    if (s.tensor_ok[size_t(id)] && int64_t(vals.size()) != t.numel()) {
      p.add(vptr, std::to_string(vals.size()) + " values for tensor " + quote(t.name) + " of shape " +
                      shape_str(t.shape) + ", which has " + std::to_string(t.numel()) + " elements");
      ok = false;
    }
  } else {
    init.kind = InitKind::file;
    check_keys(p, v, ptr, {"file"});
    auto file = get_string(p, v["file"], ptr_key(ptr, "file"));
    if (!file) return;
    if (file->empty()) {
      p.add(ptr_key(ptr, "file"), "the file path is empty");
      return;
    }
    init.file = *file;
    if (s.tensor_ok[size_t(id)]) load_init_file(s, t, ptr_key(ptr, "file"), init);
  }
  // i32 data is stored as given: a value that is not an integer of i32's range is refused, not
  // rounded; a line for each of the first few such values (a file may hold millions).
  if (ok && t.dtype == DType::i32 && (init.kind == InitKind::values || init.kind == InitKind::file)) {
    constexpr int64_t kShown = 8;
    int64_t bad = 0;
    for (size_t i = 0; i < init.values.size(); ++i) {
      const double d = init.values[i];
      if (d == std::floor(d) && d >= -2147483648.0 && d <= 2147483647.0) continue;
      if (++bad <= kShown)
        p.add(init.kind == InitKind::values ? ptr_index(ptr_key(ptr, "values"), i) : ptr_key(ptr, "file"),
              "element " + std::to_string(i) + " of i32 tensor " + quote(t.name) + " is " + number_text(d) +
                  "; an i32 value is an integer from -2147483648 to 2147483647");
    }
    if (bad > kShown)
      p.add(ptr, std::to_string(bad - kShown) + " more elements of i32 tensor " + quote(t.name) +
                     " are not integers from -2147483648 to 2147483647");
    ok = bad == 0;
  }
  if (ok) t.init = std::move(init);
}

}  // namespace

void load_tensors(LoadState& s, const json& tensors) {
  if (!tensors.is_array()) {
    s.p.add("/tensors", "expected an array of tensors, found " + describe(tensors));
    return;
  }
  if (tensors.empty()) s.p.add("/tensors", "a graph needs at least one tensor");
  s.g.tensors.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) load_tensor(s, tensors[i], i);
}

void load_inits(LoadState& s) {
  for (size_t t = 0; t < s.g.tensors.size(); ++t) {
    if (s.tensor_init[t]) load_init(s, TensorId(t));
    // Kernels convert constants once, before the runs: a value an op writes in every run is not one.
    if (const long w = s.writer_pos[t]; w >= 0 && s.g.tensors[t].constant)
      s.p.add(ptr_key(ptr_index("/tensors", s.tensor_pos[t]), "constant"),
              "tensor " + quote(s.g.tensors[t].name) + " is written by " + s.op_ref(w) +
                  "; only graph inputs (weights, biases) can be constant");
  }
}

void resolve_block_scales(LoadState& s) {
  Graph& g = s.g;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (s.scale_name[t].empty() || !s.tensor_ok[t]) continue;
    const std::string ptr = ptr_key(ptr_key(ptr_index("/tensors", s.tensor_pos[t]), "scale"), "tensor");
    auto it = s.tensor_ids.find(s.scale_name[t]);
    if (it == s.tensor_ids.end()) {
      s.p.add(ptr, "tensor " + quote(s.scale_name[t]) + " is not declared");
      s.tensor_ok[t] = false;
      continue;
    }
    if (it->second == TensorId(t) || g.tensor(it->second).scale.is_block() || is_f8(g.tensor(it->second).dtype)) {
      s.p.add(ptr, "tensor " + quote(s.scale_name[t]) + " cannot hold block scales: S is an f32 tensor of its own");
      s.tensor_ok[t] = false;
      continue;
    }
    g.tensors[t].scale.tensor = it->second;
  }
  // A CAST to a block-scaled tensor whose S nothing else gives (no writer, no init, not constant)
  // computes S: S becomes its second output.
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (op.type != OpType::CAST || op.outputs.size() != 1) continue;
    const Scale& sc = g.tensor(op.outputs[0]).scale;
    if (!sc.is_block() || sc.tensor == kNone) continue;
    const size_t st = size_t(sc.tensor);
    if (s.writer_pos[st] >= 0 || s.tensor_init[st] || g.tensors[st].constant) continue;
    op.outputs.push_back(sc.tensor);
    s.writer_pos[st] = long(s.op_pos[i]);
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const TensorId st = g.tensors[t].scale.tensor;
    if (!g.tensors[t].scale.is_block() || st == kNone) continue;
    // A graph input is stored (drawn, given, loaded) with its S before any op runs.
    if (s.writer_pos[t] < 0 && s.writer_pos[size_t(st)] >= 0)
      s.p.add(ptr_key(ptr_key(ptr_index("/tensors", s.tensor_pos[t]), "scale"), "tensor"),
              "graph input " + quote(g.tensors[t].name) + " is stored with the block scale " +
                  quote(g.tensor(st).name) + ", which " + s.op_ref(s.writer_pos[size_t(st)]) +
                  " writes; the S of a graph input is a graph input too");
    // A given S without an init would be drawn from normal(0, 1), half of it negative.
    else if (s.writer_pos[size_t(st)] < 0 && !s.tensor_init[size_t(st)])
      s.p.add(ptr_key(ptr_key(ptr_index("/tensors", s.tensor_pos[t]), "scale"), "tensor"),
              "block scale " + quote(g.tensor(st).name) + " is a graph input without an init (it would be drawn from "
              "normal(0, 1)); give it values, a file, ones or uniform with low > 0, or quantize " +
                  quote(g.tensors[t].name) + " with a CAST, which computes it");
    // S written by an op other than the one writing the tensor: the two would disagree.
    else if (s.writer_pos[t] >= 0 && s.writer_pos[size_t(st)] >= 0 && s.writer_pos[t] != s.writer_pos[size_t(st)])
      s.p.add(ptr_key(ptr_key(ptr_index("/tensors", s.tensor_pos[t]), "scale"), "tensor"),
              "block scale " + quote(g.tensor(st).name) + " is written by " + s.op_ref(s.writer_pos[size_t(st)]) +
                  ", not by the CAST that writes " + quote(g.tensors[t].name) + " as its second output");
  }
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (s.tensor_ok[t])
      for (const std::string& why : check_block_scale(g, g.tensors[t]))
        s.p.add(ptr_key(ptr_index("/tensors", s.tensor_pos[t]), "scale"), why);
}

}  // namespace gexec::load_detail
