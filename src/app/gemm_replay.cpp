// Products as `gexec gemm` lines, and those lines read back: one option table for both ways.
#include "gexec/app/gemm_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "gexec/exec/executor.hpp"
#include "gexec/exec/tunable.hpp"
#include "gexec/io/file.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/ir/gemm_shape.hpp"

namespace gexec {
namespace {

// One per-axis scale of equal values is written as that value (gemm_graph spreads it again).
Scale compact(Scale s) {
  if (s.axis >= 0 && !s.values.empty() &&
      std::all_of(s.values.begin(), s.values.end(), [&](double v) { return v == s.values[0]; }))
    s.values = std::vector<double>{s.values.front()};
  return s;
}

char layout_letter(Layout l) { return l == Layout::colmajor ? 'c' : 'r'; }

// The options a replay line may give: those of the product (into GemmSweepText) and of its run.
// A flag's setter gets an empty value.
struct LineOption {
  std::string_view name;
  bool flag;
  std::function<Status(GemmLine&, const std::string&)> set;
};

Status set_text(std::string& field, const std::string& v) {
  field = v;
  return {};
}

Result<double> finite(const std::string& v, std::string_view option) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x))
    return bad_input(std::string(option) + ": '" + v + "' is not a finite number");
  return x;
}

const std::vector<LineOption>& line_options() {
  static const std::vector<LineOption> options = {
      {"--m", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.m, v); }},
      {"--n", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.n, v); }},
      {"--k", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.k, v); }},
      {"--groups", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.groups, v); }},
      {"--tokens", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.tokens, v); }},
      {"--routing", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.routing, v); }},
      {"--shapes", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.shapes, v); }},
      {"--cube", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.cube, v); }},
      {"--batch", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.batch, v); }},
      {"--dtype", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.dtype, v); }},
      {"--dtype-b", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.dtype_b, v); }},
      {"--out-dtype", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.out_dtype, v); }},
      {"--bias", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.bias, v); }},
      {"--act", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.act, v); }},
      {"--trans", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.trans, v); }},
      {"--op", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.op, v); }},
      {"--layout", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.layout, v); }},
      {"--residual", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.residual, v); }},
      {"--scale", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.scale, v); }},
      {"--scale-a", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.scale_a, v); }},
      {"--scale-b", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.scale_b, v); }},
      {"--scale-c", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.scale_c, v); }},
      {"--constant", false, [](GemmLine& l, const std::string& v) { return set_text(l.sweep.constant, v); }},
      {"--alpha", false,
       [](GemmLine& l, const std::string& v) -> Status {
         auto x = finite(v, "--alpha");
         if (!x) return x.error();
         l.sweep.alpha = *x;
         return {};
       }},
      {"--beta", false,
       [](GemmLine& l, const std::string& v) -> Status {
         auto x = finite(v, "--beta");
         if (!x) return x.error();
         l.sweep.beta = *x;
         return {};
       }},
      {"--fast-accum", true, [](GemmLine& l, const std::string&) { return (l.sweep.fast_accum = true, Status{}); }},
      {"--shared-b", true, [](GemmLine& l, const std::string&) { return (l.sweep.shared_b = true, Status{}); }},
      {"--amax", true, [](GemmLine& l, const std::string&) { return (l.sweep.amax = true, Status{}); }},
      {"--algo", false,
       [](GemmLine& l, const std::string& v) -> Status {
         char* end = nullptr;
         const long n = std::strtol(v.c_str(), &end, 10);
         if (v.empty() || *end != '\0' || n < 0 || n > 1000000)
           return bad_input("--algo: '" + v + "' is not a whole number from 0 to 1000000");
         l.run.algo = int(n);
         return {};
       }},
      {"--pad", false,
       [](GemmLine& l, const std::string& v) -> Status {
         if (v != "auto" && v != "never" && v != "always") return bad_input("--pad: '" + v + "' is not auto, never or always");
         l.run.pad = v;
         return {};
       }},
      {"--precision", false,
       [](GemmLine& l, const std::string& v) -> Status {
         if (v != "tf32" && v != "f32") return bad_input("--precision: '" + v + "' is not tf32 or f32");
         l.run.precision = v;
         return {};
       }},
  };
  return options;
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::optional<GemmPoint> gemm_point_of(const Graph& g, const Op& op) {
  if (op.type != OpType::MATMUL && op.type != OpType::GEMM_BIAS_ACT) return std::nullopt;
  const auto s = gemm_shape(g, op);
  if (!s) return std::nullopt;
  const Tensor& a = g.tensor(op.inputs[0]);
  const Tensor& b = g.tensor(op.inputs[1]);
  const Tensor& c = g.tensor(op.outputs[0]);
  GemmPoint p;
  p.m = s->m, p.n = s->n, p.k = s->k, p.batch = s->batch;
  p.shared_b = s->batch > 1 && !s->b_batched;
  p.dtype = a.dtype, p.dtype_b = b.dtype, p.out_dtype = c.dtype;
  p.trans_a = s->trans_a, p.trans_b = s->trans_b;
  p.layout_a = s->layout_a, p.layout_b = s->layout_b, p.layout_c = s->layout_c;
  p.alpha = s->alpha;
  p.fast_accum = op.attrs.fast_accum;
  p.matmul = op.type == OpType::MATMUL;
  p.act = p.matmul ? Act::none : op.attrs.act;
  if (s->has_bias) {
    p.bias = g.tensor(op.inputs[2]).dtype;
    p.constant_bias = fixed_before_runs(g, op.inputs[2]);
  }
  if (s->has_residual) {
    p.residual = g.tensor(op.inputs.back()).dtype;
    p.beta = op.attrs.beta;
  }
  p.amax = amax_output(op) != kNone;
  p.block_scales = a.scale.is_block() && b.scale.is_block();
  // gexec gemm --scale block makes A's blocks 1 x 128 along K and B's 128 x 128: any other pair
  // (128 x 128 on A, 1 x 128 on B) is not a point it can replay.
  const std::array<int64_t, 2> a_block = p.trans_a ? std::array<int64_t, 2>{128, 1} : std::array<int64_t, 2>{1, 128};
  if (p.block_scales && (a.scale.block != a_block || b.scale.block != std::array<int64_t, 2>{128, 128}))
    return std::nullopt;
  if (!p.block_scales) p.scale_a = compact(a.scale), p.scale_b = compact(b.scale);
  p.scale_c = compact(c.scale);
  p.constant_a = fixed_before_runs(g, op.inputs[0]);
  p.constant_b = fixed_before_runs(g, op.inputs[1]);
  return p;
}

std::string gemm_command_line(const GemmPoint& p, const ReplayRun& run) {
  // A grouped point is T tokens routed to G experts: --tokens stands for --m.
  std::string out = "gexec gemm " +
                    (p.groups > 0 ? "--groups " + std::to_string(p.groups) + " --tokens " : std::string("--m ")) +
                    std::to_string(p.m) + " --n " + std::to_string(p.n) + " --k " + std::to_string(p.k);
  const auto add = [&](std::string_view option, const std::string& value) {
    out += " " + std::string(option) + (value.empty() ? "" : " " + value);
  };
  if (p.groups > 0 && p.routing != "uniform") add("--routing", p.routing);
  if (p.batch > 1) add("--batch", std::to_string(p.batch));
  if (p.shared_b) add("--shared-b", "");
  add("--dtype", std::string(dtype_name(p.dtype)));
  if (p.dtype_b != p.dtype) add("--dtype-b", std::string(dtype_name(p.dtype_b)));
  add("--out-dtype", std::string(dtype_name(p.out_dtype)));
  if (p.matmul) add("--op", "matmul");
  if (p.bias) add("--bias", std::string(dtype_name(*p.bias)));
  if (p.act != Act::none) add("--act", std::string(act_name(p.act)));
  if (p.trans_a || p.trans_b) add("--trans", trans_name(p));
  const std::string layout = {layout_letter(p.layout_a), layout_letter(p.layout_b), layout_letter(p.layout_c)};
  if (layout != "rrr") add("--layout", layout);
  if (p.alpha != 1.0) add("--alpha", number_text(p.alpha));
  if (p.residual) add("--residual", std::string(dtype_name(*p.residual)));
  if (p.residual && p.beta != 1.0) add("--beta", number_text(p.beta));
  if (p.fast_accum) add("--fast-accum", "");
  if (p.amax) add("--amax", "");
  if (p.block_scales) add("--scale", "block");
  if (!p.scale_a.is_default()) add("--scale-a", scale_text(p.scale_a));
  if (!p.scale_b.is_default()) add("--scale-b", scale_text(p.scale_b));
  if (!p.scale_c.is_default()) add("--scale-c", scale_text(p.scale_c));
  // Bias is a constant by default; a bias that is not (or none) leaves the bias out of the list.
  std::string constant;
  for (const auto& [is, name] : {std::pair{p.constant_a, "a"}, {p.constant_b, "b"}, {p.constant_bias && p.bias, "bias"}})
    if (is) constant += (constant.empty() ? "" : ",") + std::string(name);
  if (constant != (p.bias ? "bias" : "")) add("--constant", constant.empty() ? "none" : constant);
  if (run.algo) add("--algo", std::to_string(*run.algo));
  if (run.pad && *run.pad != "auto") add("--pad", *run.pad);
  if (run.precision && *run.precision != "tf32") add("--precision", *run.precision);
  return out;
}

std::vector<ProductCommand> product_commands(const Graph& g, const Executor* ex, const ReplayRun& run) {
  std::vector<ProductCommand> out;
  for (const Op& op : g.ops) {
    const auto p = gemm_point_of(g, op);
    if (!p) continue;
    ReplayRun r = run;
    if (ex)
      for (size_t k = 0; k < ex->kernel_count(); ++k) {
        const Tunable* t = ex->kernel(k).tunable();
        if (ex->op_of_kernel(k).name == op.name && t && t->variant_count() > 1) r.algo = t->selected_variant();
      }
    out.push_back({op.name, gemm_command_line(*p, r)});
  }
  return out;
}

Result<GemmLine> parse_gemm_line(std::string_view line) {
  const std::vector<std::string> w = words(line);
  const auto program = [](const std::string& s) {
    return s == "gexec" || (s.size() > 6 && s.compare(s.size() - 6, 6, "/gexec") == 0);
  };
  if (w.size() < 2 || !program(w[0]) || w[1] != "gemm")
    return bad_input("expected a command 'gexec gemm OPTIONS'");
  GemmLine out;
  for (size_t i = 2; i < w.size(); ++i) {
    std::string name = w[i], value;
    bool inline_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos && name.rfind("--", 0) == 0) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    const auto& table = line_options();
    const auto it = std::find_if(table.begin(), table.end(), [&](const LineOption& o) { return o.name == name; });
    if (it == table.end())
      return bad_input(name.rfind("--", 0) == 0
                           ? name + " is not an option of a replay line (only the product's options, --algo, --pad and "
                                    "--precision; give the others to 'gexec gemm --from')"
                           : "'" + name + "' is not an option");
    if (it->flag && inline_value) return bad_input(name + " takes no value");
    if (!it->flag && !inline_value) {
      if (i + 1 >= w.size()) return bad_input(name + " needs a value");
      value = w[++i];
    }
    if (Status s = it->set(out, value); !s) return s.error();
  }
  return out;
}

Result<std::vector<GemmJob>> read_gemm_file(const std::string& path) {
  auto f = InputFile::open(path);
  if (!f) return bad_input("--from: " + f.error().message);
  auto text = f->read_all();
  if (!text) return bad_input("--from: " + text.error().message);
  std::vector<GemmJob> out;
  size_t start = 0;
  int number = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string_view line(text->data() + start, end - start);
    start = end + 1;
    ++number;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (words(line).empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    auto parsed = parse_gemm_line(line);
    if (!parsed) return bad_input(where + ": " + parsed.error().message);
    auto points = expand_sweep(parsed->sweep);
    if (!points) return bad_input(where + ": " + points.error().message);
    if (out.size() + points->size() > size_t(kMaxSweepPoints))
      return bad_input(where + ": the file has more than " + std::to_string(kMaxSweepPoints) +
                       " points; a sweep has at most that many (split the file)");
    for (GemmPoint& p : *points) out.push_back({std::move(p), parsed->run, where});
  }
  if (out.empty()) return bad_input("--from: " + path + " holds no command (one 'gexec gemm ...' per line)");
  return out;
}

}  // namespace gexec
