// --expect DIR: outputs against given results (expect.hpp).
#include "expect.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "dump.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/real_value.hpp"
#include "json_report.hpp"
#include "onnx_data.hpp"
#include "report.hpp"

namespace gexec {

namespace fs = std::filesystem;

ExpectTolerance expect_tolerance(DType t) {
  switch (t) {
    case DType::f32: return {1e-5, 1e-4};
    case DType::f16: return {1e-3, 0x1p-9};
    case DType::bf16: return {1e-2, 0x1p-6};
    case DType::f8e4m3: return {0x1p-8, 0x1p-2};
    case DType::f8e5m2: return {0x1p-15, 0x1p-1};
    case DType::i32: return {0.0, 0.0};  // integers: exact
  }
  return {};
}

double expect_scale(const std::vector<double>& values) {
  double largest = 1;
  for (double v : values)
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  return largest;
}

Result<std::map<std::string, ExpectedValues>> read_expected(const std::string& dir, const ModelFile& model,
                                                            std::vector<std::string>* files) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return bad_input("--expect: " + path_text(dir) + " is not a folder");
  auto pbs = read_pb_files(dir, "output_");
  if (!pbs) return pbs.error().with("--expect");
  std::map<std::string, ExpectedValues> out;
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const ModelPort& port = model.outputs[i];
    const Tensor& t = model.graph.tensor(port.tensor);
    const std::string npy = (fs::path(dir) / tensor_file_name(t.name)).string();
    ExpectedValues e;
    std::vector<int64_t> shape;
    if (fs::exists(fs::symlink_status(npy, ec))) {
      auto a = read_npy(npy);
      if (!a) return a.error().with("--expect");
      e.file = npy;
      shape = a->shape;
      e.values = std::move(a->values);
    } else if (const PbTensor* p = match_pb(*pbs, i, port.name)) {
      auto values = pb_values(*p, t.dtype, "output " + quote_text(port.name));
      if (!values) return values.error().with("--expect");
      e.file = p->path;
      shape = p->shape;
      e.values = std::move(*values);
    } else {
      return bad_input("--expect: " + path_text(dir) + " has no result for output " + quote_text(port.name) + " (" +
                       printable(tensor_file_name(t.name)) + " or output_" + std::to_string(i) + ".pb)");
    }
    // The output's shape as the model declares it, or as its tensor holds it (the same elements).
    if (shape != port.shape && shape != t.shape)
      return bad_input("--expect: " + path_text(e.file) + " has shape " + shape_str(shape) + "; output " +
                       quote_text(port.name) + " is " + shape_str(port.shape));
    if (files) files->push_back(e.file);
    out[t.name] = std::move(e);
  }
  return out;
}

ExpectSummary compare_expected(const std::string& dir, const Graph& g, const std::map<std::string, std::vector<uint8_t>>& got,
                               const std::map<std::string, ExpectedValues>& expected, std::optional<double> atol,
                               std::optional<double> rtol) {
  ExpectSummary s;
  s.dir = dir;
  for (TensorId id : g.outputs) {
    const Tensor& t = g.tensor(id);
    const auto e = expected.find(t.name);
    const auto bytes = got.find(t.name);
    if (e == expected.end() || bytes == got.end()) continue;
    const std::optional<Tensor> read_as = with_scale_from(g, t, got);  // a block scale's S, an output too
    if (!read_as) continue;
    ExpectedOutput o;
    o.name = t.name;
    o.file = e->second.file;
    o.dtype = t.dtype;
    const ExpectTolerance def = expect_tolerance(t.dtype);
    o.count = t.numel();
    o.atol = atol.value_or(def.atol * expect_scale(e->second.values));  // read_expected checked its shape
    o.rtol = rtol.value_or(def.rtol);
    double worst_excess = -INFINITY;
    for (int64_t l = 0; l < o.count; ++l) {
      const double want = e->second.values[size_t(l)];
      const double have = load_real(bytes->second.data(), *read_as, storage_index(t, l));
      const double allowed = o.atol + o.rtol * std::fabs(want);
      double diff = std::fabs(have - want);
      bool ok = diff <= allowed;
      if (std::isnan(want) || std::isnan(have)) {
        ok = std::isnan(want) && std::isnan(have);
        diff = ok ? 0 : INFINITY;
      } else if (std::isinf(want) || std::isinf(have)) {
        ok = have == want;
        diff = ok ? 0 : INFINITY;
      }
      o.max_abs = std::max(o.max_abs, diff);
      if (diff > 0) o.max_rel = std::max(o.max_rel, want != 0 ? diff / std::fabs(want) : INFINITY);
      o.beyond += !ok;
      const double excess = diff - allowed;
      if (excess > worst_excess || o.worst < 0) {
        worst_excess = excess;
        o.worst = l;
        o.worst_got = have;
        o.worst_expected = want;
      }
    }
    o.pass = o.beyond == 0;
    s.outputs.push_back(std::move(o));
  }
  return s;
}

void print_expect(std::ostream& out, const ExpectSummary& e) {
  out << "expect: against " << path_text(e.dir) << ", pass when every |got - expected| <= atol + rtol |expected|\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-16s %-5s %10s %10s %9s %9s %12s  %s\n", "output", "dtype", "max_abs", "max_rel",
                "atol", "rtol", "beyond", "result");
  out << line;
  for (const ExpectedOutput& o : e.outputs) {
    const std::string beyond = std::to_string(o.beyond) + "/" + std::to_string(o.count);
    std::snprintf(line, sizeof line, "  %-16s %-5s %10.3e %10.3e %9.2e %9.2e %12s  %s\n", printable(o.name).c_str(),
                  std::string(dtype_name(o.dtype)).c_str(), o.max_abs, o.max_rel, o.atol, o.rtol, beyond.c_str(),
                  o.pass ? "pass" : "FAIL");
    out << line;
    if (o.worst >= 0)
      out << "      worst element " << o.worst << ": got " << value_text(o.worst_got) << ", expected "
          << value_text(o.worst_expected) << " (" << path_text(fs::path(o.file).filename().string()) << ")\n";
  }
}

nlohmann::json expect_json(const ExpectSummary& e) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const ExpectedOutput& o : e.outputs)
    outputs.push_back({{"name", o.name},
                       {"file", o.file},
                       {"dtype", std::string(dtype_name(o.dtype))},
                       {"count", o.count},
                       {"max_abs", finite_or_null(o.max_abs)},
                       {"max_rel", finite_or_null(o.max_rel)},
                       {"atol", o.atol},
                       {"rtol", o.rtol},
                       {"beyond", o.beyond},
                       {"worst", o.worst < 0 ? nlohmann::json(nullptr)
                                             : nlohmann::json{{"index", o.worst},
                                                              {"got", finite_or_null(o.worst_got)},
                                                              {"expected", finite_or_null(o.worst_expected)}}},
                       {"pass", o.pass}});
  return {{"dir", e.dir}, {"outputs", outputs}, {"pass", e.pass()}};
}

}  // namespace gexec
