// The sweep's lists and ranges, their product, and each point's graph.
#include "gexec/app/gemm_sweep.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "gexec/app/routing.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/graph_build.hpp"

namespace gexec {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

Result<int64_t> parse_size(std::string_view part, std::string_view option, bool allow_zero = false) {
  part = trim(part);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
  if (part.empty() || ec != std::errc() || end != part.data() + part.size())
    return bad_input(std::string(option) + ": '" + std::string(part) + "' is not a whole number");
  if (v < (allow_zero ? 0 : 1) || v > kMaxDim)
    return bad_input(std::string(option) + ": " + std::string(part) + " is out of range (1 to " +
                     std::to_string(kMaxDim) + ")");
  return v;
}

// Items of a comma-separated list, each checked by `parse`.
template <class T, class F>
Result<std::vector<T>> parse_list(std::string_view text, std::string_view option, F parse) {
  std::vector<T> out;
  if (trim(text).empty()) return bad_input(std::string(option) + ": empty");
  for (std::string_view part : split(text, ',')) {
    auto v = parse(trim(part));
    if (!v) return v.error();
    out.push_back(*v);
  }
  return out;
}

// The one wording of the cap on a sweep's size, for the whole sweep and for one option's list.
Error too_many_points(double count, std::string_view what = "the sweep") {
  const std::string n = count < 9e18 ? std::to_string(int64_t(count)) : "more than 9e18";
  return bad_input(std::string(what) + " has " + n + " points; a sweep has at most " +
                   std::to_string(kMaxSweepPoints) + " (split it into several sweeps)");
}

Result<DType> parse_ab_dtype(std::string_view s, std::string_view option) {
  const auto t = parse_dtype(s);
  if (!t) return bad_input(std::string(option) + ": unknown dtype '" + std::string(s) + "'");
  return *t;
}

}  // namespace

Result<std::vector<int64_t>> parse_sizes(std::string_view text, std::string_view option) {
  std::vector<int64_t> out;
  if (trim(text).empty()) return bad_input(std::string(option) + ": a size, a list a,b,c or a range start:end:step");
  for (std::string_view part : split(text, ',')) {
    if (part.find(':') == std::string_view::npos) {
      auto v = parse_size(part, option);
      if (!v) return v.error();
      out.push_back(*v);
      continue;
    }
    const auto r = split(part, ':');
    if (r.size() != 3)
      return bad_input(std::string(option) + ": '" + std::string(part) + "' is not a range start:end:step");
    auto a = parse_size(r[0], option), b = parse_size(r[1], option), step = parse_size(r[2], option, true);
    if (!a) return a.error();
    if (!b) return b.error();
    if (!step) return step.error();
    if (*step == 0)
      return bad_input(std::string(option) + ": the range '" + std::string(part) +
                       "' has step 0; the step (after the second ':') is a whole number from 1 to " +
                       std::to_string(kMaxDim));
    if (*b < *a)
      return bad_input(std::string(option) + ": the range '" + std::string(part) + "' ends before it starts");
    if ((*b - *a) / *step >= kMaxSweepPoints)
      return too_many_points(double((*b - *a) / *step + 1),
                             std::string(option) + ": the range '" + std::string(part) + "' alone");
    for (int64_t v = *a; v <= *b; v += *step) out.push_back(v);
  }
  return out;
}

namespace {

// The cartesian product of the M sizes (--m, or --tokens for grouped points), --n and --k.
Result<std::vector<std::array<int64_t, 3>>> sizes_product(const std::string& m_text, const std::string& m_option,
                                                          const GemmSweepText& t) {
  auto ms = parse_sizes(m_text, m_option);
  if (!ms) return ms.error();
  auto ns = parse_sizes(t.n, "--n");
  if (!ns) return ns.error();
  auto ks = parse_sizes(t.k, "--k");
  if (!ks) return ks.error();
  const double shapes = double(ms->size()) * double(ns->size()) * double(ks->size());
  if (shapes > double(kMaxSweepPoints)) return too_many_points(shapes, "the product of " + m_option + ", --n and --k");
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t m : *ms)
    for (int64_t n : *ns)
      for (int64_t k : *ks) out.push_back({m, n, k});
  return out;
}

// The (m, n, k) triples: the product of --m --n --k, the --shapes list, or the --cube sizes.
Result<std::vector<std::array<int64_t, 3>>> sweep_shapes(const GemmSweepText& t) {
  if (!trim(t.groups).empty()) {  // grouped: M is the tokens
    if (!trim(t.m).empty() || !trim(t.shapes).empty() || !trim(t.cube).empty())
      return bad_input("--groups: give the tokens with --tokens and each expert's product with --n --k, not --m, --shapes or --cube");
    return sizes_product(t.tokens, "--tokens", t);
  }
  if (!trim(t.tokens).empty()) return bad_input("--tokens: goes with --groups (a grouped product)");
  const bool mnk = !trim(t.m).empty() || !trim(t.n).empty() || !trim(t.k).empty();
  const int forms = int(mnk) + int(!trim(t.shapes).empty()) + int(!trim(t.cube).empty());
  if (forms != 1)
    return bad_input(forms == 0 ? "give the shapes: --m --n --k, --shapes MxNxK,... or --cube SIZES"
                                : "give the shapes one way only: --m --n --k, --shapes or --cube");
  std::vector<std::array<int64_t, 3>> out;
  if (!trim(t.cube).empty()) {
    auto sizes = parse_sizes(t.cube, "--cube");
    if (!sizes) return sizes.error();
    for (int64_t v : *sizes) out.push_back({v, v, v});
    return out;
  }
  if (!trim(t.shapes).empty()) {
    for (std::string_view part : split(t.shapes, ',')) {
      const auto dims = split(trim(part), 'x');
      if (dims.size() != 3) return bad_input("--shapes: '" + std::string(part) + "' is not MxNxK");
      std::array<int64_t, 3> s{};
      for (size_t i = 0; i < 3; ++i) {
        auto v = parse_size(dims[i], "--shapes");
        if (!v) return v.error();
        s[i] = *v;
      }
      out.push_back(s);
    }
    return out;
  }
  return sizes_product(t.m, "--m", t);
}

// The single-valued options: a point with those fields set, the sweep's axes left to the caller.
struct Extras {
  GemmPoint point;
  bool dtype_b_given = false;
};

Result<Extras> product_extras(const GemmSweepText& t) {
  Extras e;
  GemmPoint& p = e.point;
  if (!trim(t.dtype_b).empty()) {
    auto d = parse_ab_dtype(trim(t.dtype_b), "--dtype-b");
    if (!d) return d.error();
    p.dtype_b = *d;
    e.dtype_b_given = true;
  }
  if (t.op != "gemm_bias_act" && t.op != "matmul")
    return bad_input("--op: '" + t.op + "' is not gemm_bias_act or matmul");
  p.matmul = t.op == "matmul";
  p.shared_b = t.shared_b;
  if (t.layout.size() != 3 || t.layout.find_first_not_of("rc") != std::string::npos)
    return bad_input("--layout: '" + t.layout + "' is not three letters r (rowmajor) or c (colmajor), for A, B and C");
  const auto layout = [&](size_t i) { return t.layout[i] == 'c' ? Layout::colmajor : Layout::rowmajor; };
  p.layout_a = layout(0), p.layout_b = layout(1), p.layout_c = layout(2);
  if (trim(t.residual) != "none") {
    auto d = parse_ab_dtype(trim(t.residual), "--residual");
    if (!d || is_f8(*d)) return bad_input("--residual: '" + t.residual + "' is not none, f16, bf16 or f32");
    p.residual = *d;
  }
  if (t.beta && !p.residual) return bad_input("--beta: applies to a residual only (--residual DTYPE)");
  if (t.beta && !std::isfinite(*t.beta)) return bad_input("--beta: " + std::to_string(*t.beta) + " is not a finite number");
  p.beta = t.beta.value_or(1.0);
  p.amax = t.amax;
  const std::pair<const std::string*, Scale*> scales[] = {{&t.scale_a, &p.scale_a}, {&t.scale_b, &p.scale_b},
                                                          {&t.scale_c, &p.scale_c}};
  const char* names[] = {"--scale-a", "--scale-b", "--scale-c"};
  for (size_t i = 0; i < 3; ++i) {
    if (trim(*scales[i].first).empty()) continue;
    auto s = parse_scale(*scales[i].first, names[i]);
    if (!s) return s.error();
    *scales[i].second = *s;
  }
  const std::string mode(trim(t.scale));
  if (mode != "tensor" && mode != "row" && mode != "block")
    return bad_input("--scale: '" + t.scale + "' is not tensor, row or block");
  if (mode != "tensor") {
    if (!trim(t.scale_a).empty() || !trim(t.scale_b).empty())
      return bad_input("--scale " + mode + ": gives A's and B's scales; leave out --scale-a and --scale-b");
    if (mode == "row") {
      // One scale per row of op(A) and per column of op(B): the rows (columns) as stored.
      p.scale_a.axis = t.trans.size() == 2 && t.trans[0] == 't' ? 1 : 0;
      p.scale_b.axis = t.trans.size() == 2 && t.trans[1] == 't' ? 0 : 1;
    } else {
      if (!trim(t.scale_c).empty()) return bad_input("--scale block: C is f16, bf16 or f32; leave out --scale-c");
      p.block_scales = true;
    }
  }
  p.constant_bias = false;
  for (std::string_view part : split(t.constant, ',')) {
    part = trim(part);
    if (part == "a") p.constant_a = true;
    else if (part == "b") p.constant_b = true;
    else if (part == "bias") p.constant_bias = true;
    else if (part != "none" || t.constant != "none")
      return bad_input("--constant: '" + std::string(part) + "' is not none or a list of a, b, bias");
  }
  return e;
}

}  // namespace

Result<Scale> parse_scale(std::string_view text, std::string_view option) {
  text = trim(text);
  Scale s;
  std::string_view values = text;
  if (text.rfind("row:", 0) == 0 || text.rfind("col:", 0) == 0) {
    s.axis = text[0] == 'r' ? 0 : 1;
    values = text.substr(4);
  }
  s.values.clear();
  for (std::string_view part : split(values, '/')) {
    const std::string v(trim(part));
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x) || x <= 0)
      return bad_input(std::string(option) + ": '" + v + "' is not a positive number; a scale is X, row:X/Y/... or col:X/Y/...");
    s.values.push_back(x);
  }
  if (s.axis < 0 && s.values.size() != 1)
    return bad_input(std::string(option) + ": several values need row: or col: before them");
  return s;
}

std::string scale_text(const Scale& s) {
  std::string out = s.axis == 0 ? "row:" : s.axis == 1 ? "col:" : "";
  for (size_t i = 0; i < s.values.size(); ++i) out += (i ? "/" : "") + number_text(s.values[i]);
  return out;
}

std::string ab_name(const GemmPoint& p) {
  return std::string(dtype_name(p.dtype)) + (p.dtype_b == p.dtype ? "" : "x" + std::string(dtype_name(p.dtype_b)));
}

Result<std::vector<GemmPoint>> expand_sweep(const GemmSweepText& t) {
  // A NaN or infinite alpha makes every point's output non-finite: nothing to check or time.
  if (!std::isfinite(t.alpha)) return bad_input("--alpha: " + std::to_string(t.alpha) + " is not a finite number");
  auto shapes = sweep_shapes(t);
  if (!shapes) return shapes.error();
  auto batches = parse_sizes(t.batch, "--batch");
  if (!batches) return batches.error();
  auto dtypes = parse_list<DType>(t.dtype, "--dtype", [&t](std::string_view s) -> Result<DType> {
    auto d = parse_ab_dtype(s, "--dtype");
    if (d && *d == DType::f8e5m2 && trim(t.dtype_b).empty())
      return bad_input("--dtype: f8e5m2 for both A and B is not supported (f8e5m2 x f8e5m2); use f8e4m3");
    return d;
  });
  if (!dtypes) return dtypes.error();
  const bool any_f8 = std::any_of(dtypes->begin(), dtypes->end(), [](DType d) { return is_f8(d); });
  const bool all_f8 = std::all_of(dtypes->begin(), dtypes->end(), [](DType d) { return is_f8(d); });
  std::optional<DType> out_dtype;
  if (!trim(t.out_dtype).empty()) {
    auto o = parse_ab_dtype(trim(t.out_dtype), "--out-dtype");
    if (!o) return o.error();
    if (is_f8(*o) && !all_f8) return bad_input("--out-dtype: an f8 output needs f8 inputs (--dtype f8e4m3)");
    if (*o == DType::f8e5m2 && trim(t.dtype_b).empty()) return bad_input("--out-dtype: an f8e5m2 output needs an f8e5m2 operand; use f8e4m3");
    out_dtype = *o;
  }
  if (t.fast_accum && !any_f8) return bad_input("--fast-accum: applies to FP8 products only (--dtype f8e4m3)");
  auto biases = parse_list<std::optional<DType>>(t.bias, "--bias", [](std::string_view s) -> Result<std::optional<DType>> {
    if (s == "none") return std::optional<DType>{};
    auto d = parse_ab_dtype(s, "--bias");
    if (!d || is_f8(*d)) return bad_input("--bias: '" + std::string(s) + "' is not none, f16, bf16 or f32");
    return std::optional<DType>(*d);
  });
  if (!biases) return biases.error();
  const bool grouped = !trim(t.groups).empty();
  auto acts = parse_list<Act>(t.act, "--act", [](std::string_view s) -> Result<Act> {
    const auto a = parse_act(s);
    if (!a) return bad_input("--act: '" + std::string(s) + "' is not none, relu, gelu, gelu_erf or silu");
    return *a;
  });
  if (!acts) return acts.error();
  // --routing is a list as the sizes are (a file's path with a comma cannot be one of its items).
  auto routings = parse_list<std::string>(t.routing, "--routing", [](std::string_view s) -> Result<std::string> {
    if (s.empty()) return bad_input("--routing: an empty item");
    return std::string(s);
  });
  if (!routings) return routings.error();
  std::vector<int64_t> group_counts = {0};
  if (grouped) {
    auto gs = parse_sizes(t.groups, "--groups");
    if (!gs) return gs.error();
    group_counts = *gs;
    if (t.trans.find('t') == 0 || t.trans.find(",t") != std::string::npos)
      return bad_input("--trans: a grouped product reads X as stored (nn or nt: W [G, K, N] or [G, N, K])");
    if (trim(t.batch) != "1") return bad_input("--batch: a grouped product has no batch (its groups are its experts)");
    if (t.op != "gemm_bias_act" || (!trim(t.residual).empty() && trim(t.residual) != "none") || t.amax || t.layout != "rrr" ||
        t.scale != "tensor" || t.shared_b || !trim(t.scale_a).empty() || !trim(t.scale_b).empty() ||
        !trim(t.scale_c).empty() || t.fast_accum)
      return bad_input("--groups: a grouped product takes no --op matmul, --residual, --amax, --layout, --scale, "
                       "--scale-a/-b/-c, --fast-accum or --shared-b (f8 experts run with scale 1)");
  } else {
    for (const std::string& r : *routings)
      if (r != "uniform") return bad_input("--routing: goes with --groups (a grouped product)");
    *routings = {"uniform"};
  }
  auto trans = parse_list<std::pair<bool, bool>>(t.trans, "--trans", [](std::string_view s) -> Result<std::pair<bool, bool>> {
    if (s.size() != 2 || (s[0] != 'n' && s[0] != 't') || (s[1] != 'n' && s[1] != 't'))
      return bad_input("--trans: '" + std::string(s) + "' is not nn, nt, tn or tt");
    return std::pair<bool, bool>{s[0] == 't', s[1] == 't'};
  });
  if (!trans) return trans.error();

  auto extra = product_extras(t);
  if (!extra) return extra.error();

  const double count = double(group_counts.size()) * double(routings->size()) * double(shapes->size()) *
                       double(batches->size()) * double(dtypes->size()) * double(biases->size()) *
                       double(acts->size()) * double(trans->size());
  if (count > double(kMaxSweepPoints)) return too_many_points(count);
  std::vector<GemmPoint> out;
  for (int64_t groups : group_counts)
    for (const std::string& routing : *routings)
      for (const auto& [m, n, k] : *shapes)
        for (int64_t b : *batches)
          for (DType d : *dtypes)
            for (const auto& bias : *biases)
              for (Act a : *acts)
                for (const auto& [ta, tb] : *trans) {
                  GemmPoint p = extra->point;
                  p.m = m, p.n = n, p.k = k, p.batch = b, p.dtype = d, p.bias = bias, p.act = a, p.trans_a = ta,
                  p.trans_b = tb, p.alpha = t.alpha;
                  if (!extra->dtype_b_given) p.dtype_b = d;
                  p.out_dtype = out_dtype.value_or(is_f8(d) ? DType::bf16 : d);
                  p.fast_accum = t.fast_accum && is_f8(d);
                  // What does not apply keeps its default, so that equal products are equal points.
                  if (!p.bias) p.constant_bias = true;
                  if (b == 1) p.shared_b = false;
                  if (groups > 0) {
                    auto ends = routing_ends(routing, groups, m);
                    if (!ends) return ends.error();
                    p.groups = groups, p.routing = routing, p.ends = std::move(*ends);
                  }
                  out.push_back(p);
                }
  for (const GemmPoint& p : out)
    if (p.matmul && (p.bias || p.act != Act::none || p.residual))
      return bad_input("--op matmul: a MATMUL has no bias, activation or residual (--op gemm_bias_act has)");
  // The graph format's rules for what the single-valued options combine into (a residual with a
  // MATMUL, a per-row scale of the wrong count): each point's graph checked as a loaded one is.
  for (const GemmPoint& p : out)
    if (const auto problems = verify(gemm_graph(p)); !problems.empty())
      return bad_input("the product " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                       " is not one the graph format allows: " + problems.front());
  return out;
}

namespace {

// A grouped point's graph: one GROUPED_GEMM over its routing.
Graph grouped_gemm_graph(const GemmPoint& p) {
  Graph g;
  g.name = "grouped_gemm_g" + std::to_string(p.groups) + "_t" + std::to_string(p.m) + "_" + std::to_string(p.n) + "x" +
           std::to_string(p.k);
  std::vector<TensorId> inputs;
  inputs.push_back(add_tensor(g, "X", {p.m, p.k}, p.dtype, p.constant_a));
  inputs.push_back(add_tensor(g, "W", p.trans_b ? std::vector<int64_t>{p.groups, p.n, p.k} : std::vector<int64_t>{p.groups, p.k, p.n},
                              p.dtype_b, p.constant_b));
  inputs.push_back(add_tensor(g, "offsets", {p.groups}, DType::i32, true));
  Init init;
  init.kind = InitKind::values;
  init.values = SharedValues(std::vector<double>(p.ends.begin(), p.ends.end()));
  g.tensor(inputs.back()).init = init;
  if (p.bias) inputs.push_back(add_tensor(g, "Bias", {p.groups, p.n}, *p.bias, p.constant_bias));
  const TensorId y = add_tensor(g, "Y", {p.m, p.n}, p.out_dtype);
  Op& op = add_op(g, "grouped_gemm", OpType::GROUPED_GEMM, std::move(inputs), y);
  op.attrs.trans_b = p.trans_b;
  op.attrs.alpha = p.alpha;
  op.attrs.act = p.act;
  g.outputs = {y};
  return g;
}

}  // namespace

Graph gemm_graph(const GemmPoint& p) {
  if (p.groups > 0) return grouped_gemm_graph(p);
  Graph g;
  g.name = "gemm_" + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
           (p.batch > 1 ? "_b" + std::to_string(p.batch) : "");
  const auto dims = [&](int64_t r, int64_t c, bool batched = true) {
    return p.batch > 1 && batched ? std::vector<int64_t>{p.batch, r, c} : std::vector<int64_t>{r, c};
  };
  // A per-axis scale given as one value holds it for every row (column).
  const auto scaled = [&](TensorId id, const Scale& s) {
    Tensor& t = g.tensor(id);
    t.scale = s;
    if (s.axis >= 0 && s.values.size() == 1 && t.rank() == 2)
      t.scale.values.assign(size_t(t.shape[size_t(s.axis)]), s.values[0]);
  };
  // A block scale: S a graph input of the blocks' shape, drawn positive (1/128 to 1/64: normal
  // values of up to 4.5 stay within e4m3's 448).
  const auto block_scaled = [&](TensorId id, std::array<int64_t, 2> block, const std::string& s_name) {
    Tensor& t = g.tensor(id);
    t.scale = Scale{};
    t.scale.values.clear();
    t.scale.block = block;
    const std::vector<int64_t> shape = t.rank() == 2 ? block_scale_shape(g.tensor(id)) : std::vector<int64_t>{1, 1};
    const bool constant = t.constant;
    const TensorId s = add_tensor(g, s_name, shape, DType::f32, constant);
    Init init;
    init.kind = InitKind::uniform, init.low = 1.0 / 128, init.high = 1.0 / 64;
    g.tensor(s).init = init;
    g.tensor(id).scale.tensor = s;
  };
  std::vector<TensorId> inputs;
  inputs.push_back(add_tensor(g, "A", p.trans_a ? dims(p.k, p.m) : dims(p.m, p.k), p.dtype, p.constant_a, p.layout_a));
  scaled(inputs.back(), p.scale_a);
  if (p.block_scales) block_scaled(inputs.back(), p.trans_a ? std::array<int64_t, 2>{128, 1} : std::array<int64_t, 2>{1, 128}, "SA");
  inputs.push_back(add_tensor(g, "B", p.trans_b ? dims(p.n, p.k, !p.shared_b) : dims(p.k, p.n, !p.shared_b), p.dtype_b,
                              p.constant_b, p.layout_b));
  scaled(inputs.back(), p.scale_b);
  if (p.block_scales) block_scaled(inputs.back(), {128, 128}, "SB");
  if (p.bias) inputs.push_back(add_tensor(g, "Bias", {p.n}, *p.bias, p.constant_bias));  // a layer's bias: a weight
  if (p.residual) inputs.push_back(add_tensor(g, "R", dims(p.m, p.n), *p.residual));
  const TensorId c = add_tensor(g, "C", dims(p.m, p.n), p.out_dtype, false, p.layout_c);
  scaled(c, p.scale_c);
  Op& op = add_op(g, "gemm", p.matmul ? OpType::MATMUL : OpType::GEMM_BIAS_ACT, std::move(inputs), c);
  op.attrs.trans_a = p.trans_a;
  op.attrs.trans_b = p.trans_b;
  op.attrs.alpha = p.alpha;
  op.attrs.fast_accum = p.fast_accum;
  if (!p.matmul) {
    op.attrs.act = p.act;
    op.attrs.mnk = std::array<int64_t, 3>{p.m, p.n, p.k};
    op.attrs.residual = p.residual.has_value();
    if (p.residual) op.attrs.beta = p.beta;
  }
  g.outputs = {c};
  if (p.amax) {
    const TensorId amax = add_tensor(g, "C_amax", {1}, DType::f32);
    g.ops.back().outputs.push_back(amax);
    g.outputs.push_back(amax);
  }
  return g;
}

std::string trans_name(const GemmPoint& p) {
  return std::string(p.trans_a ? "t" : "n") + (p.trans_b ? "t" : "n");
}

std::string bias_name(const GemmPoint& p) { return p.bias ? std::string(dtype_name(*p.bias)) : "none"; }

}  // namespace gexec
