// The pass manager: the list of passes, the default pipeline, and running, checking, timing and
// printing them.
#include "gexec/passes/pipeline.hpp"

#include <algorithm>
#include <chrono>

#include "gexec/ir/printer.hpp"
#include "passes.hpp"
#include "residual_cost.hpp"

namespace gexec {

namespace {

constexpr size_t kMaxProblemsShown = 10;

// Where pass_note() writes while a pass runs under run_passes; null otherwise.
thread_local std::vector<std::string>* g_notes = nullptr;

std::string known_names() {
  std::string s;
  for (const Pass& p : all_passes()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

const Pass* find_pass(const std::string& name) {
  for (const Pass& p : all_passes()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Error unknown_pass(const std::string& name) {
  return bad_input("unknown pass \"" + name + "\"; expected one of " + known_names());
}

// The passes index tensors by id without checking; a loaded graph always passes this, a graph
// built in code might not. (Everything else verify() checks is left to it, after the first pass:
// ops out of data-flow order, for one, are canonicalize's to fix.)
bool ids_in_range(const Graph& g) {
  auto ok = [&](const std::vector<TensorId>& ids) {
    return std::all_of(ids.begin(), ids.end(),
                       [&](TensorId t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); });
  };
  return ok(g.outputs) && std::all_of(g.ops.begin(), g.ops.end(), [&](const Op& op) {
           return ok(op.inputs) && ok(op.outputs);
         });
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

void pass_note(std::string note) {
  if (g_notes) g_notes->push_back(std::move(note));
}

// The order: canonicalize first, since every other pass relies on ops in data-flow order.
// dead_ops next, so that a dead reader of an intermediate does not stop a fusion and no cast
// is hoisted only to be thrown away. fold_constant_casts and fuse_elementwise do not interact
// (fusion never absorbs a CAST, and hoisting changes no reader counts), so their order is free.
// fuse_residual follows fuse_elementwise, extending the GEMM_BIAS_ACT it made from MATMUL ->
// BIAS_ADD (never one with an activation); group_elementwise comes last, so that it takes only
// the elementwise ops no product epilogue absorbed.
// None of the fusions leaves dead ops behind: fusion removes only single-reader links, so
// one round of the pipeline is enough, and a second one changes nothing.
const std::vector<Pass>& all_passes() {
  static const std::vector<Pass> passes = {
      {"canonicalize", "name unnamed ops, fill GEMM_BIAS_ACT's mnk, order ops by data flow", canonicalize},
      {"dead_ops", "remove ops whose results reach no graph output", dead_ops},
      {"fold_constant_casts", "run CASTs of constants once, before the runs", fold_constant_casts},
      {"fuse_elementwise", "fuse MATMUL -> BIAS_ADD -> RELU/GELU(tanh) into GEMM_BIAS_ACT", fuse_elementwise},
      {"fuse_residual", "fuse a residual ADD (and a RELU/GELU after it) into the product, as cuBLASLt's C",
       fuse_residual},
      {"group_elementwise", "run chains of elementwise ops as one FUSED_ELEMENTWISE kernel", group_elementwise},
      {"split_f8_outputs",
       "write an f8 product's f8 C through bf16 (f32 with an amax) and a CAST where per-row/column scales (on A, B or "
       "C) need it",
       split_f8_outputs},
  };
  return passes;
}

std::vector<std::string> default_pipeline() {
  std::vector<std::string> names;
  for (const Pass& p : all_passes()) names.push_back(p.name);
  return names;
}

Result<std::vector<PassRecord>> run_passes(Graph& g, const std::vector<Pass>& passes,
                                           const PipelineOptions& opts, std::ostream& print_to) {
  if (!passes.empty() && !ids_in_range(g)) {
    return bad_input("graph " + g.name + " refers to tensor ids out of range; no pass was run");
  }
  ResidualCosts costs;
  if (!opts.residual_costs.empty()) {
    auto loaded = load_residual_costs(opts.residual_costs);
    if (!loaded) return loaded.error();
    costs = std::move(*loaded);
  }
  const UseResidualCosts use_costs(opts.residual_costs.empty() ? nullptr : &costs);
  std::vector<PassRecord> records;
  records.reserve(passes.size());
  for (const Pass& pass : passes) {
    // One copy per pass tells whether it changed anything; linear in the graph's size.
    const Graph before = g;
    std::vector<std::string> notes;
    g_notes = &notes;
    auto start = std::chrono::steady_clock::now();
    Status st = pass.run(g);
    auto stop = std::chrono::steady_clock::now();
    g_notes = nullptr;
    if (!st.ok()) return st.error().with("pass " + pass.name);
    std::vector<std::string> problems = verify(g);
    if (!problems.empty()) {
      std::string msg = "pass " + pass.name + " left an invalid graph (a bug in the pass):";
      for (size_t i = 0; i < problems.size() && i < kMaxProblemsShown; ++i) msg += "\n  " + problems[i];
      if (problems.size() > kMaxProblemsShown) {
        msg += "\n  ... and " + std::to_string(problems.size() - kMaxProblemsShown) + " more";
      }
      return runtime_error(msg);
    }
    records.push_back({pass.name, std::chrono::duration<double, std::milli>(stop - start).count(),
                       !(g == before), std::move(notes)});
    if (opts.print_after_all || opts.print_after == pass.name) {
      print_to << "// after " << pass.name << "\n" << print_graph(g);
    }
  }
  return records;
}

Result<std::vector<PassRecord>> run_pipeline(Graph& g, const PipelineOptions& opts, std::ostream& print_to) {
  std::vector<Pass> passes;
  passes.reserve(opts.passes.size());
  for (const std::string& name : opts.passes) {
    const Pass* p = find_pass(name);
    if (!p) return unknown_pass(name);
    passes.push_back(*p);
  }
  if (!opts.print_after.empty()) {
    if (!find_pass(opts.print_after)) return unknown_pass(opts.print_after).with("print after");
    bool in_pipeline = false;
    for (const std::string& name : opts.passes) in_pipeline = in_pipeline || name == opts.print_after;
    if (!in_pipeline) {
      std::string list;
      for (const std::string& name : opts.passes) list += (list.empty() ? "" : ", ") + name;
      return bad_input("print after: pass \"" + opts.print_after + "\" is not in the pipeline (" +
                       (list.empty() ? std::string("none") : list) + ")");
    }
  }
  return run_passes(g, passes, opts, print_to);
}

Result<std::vector<std::string>> parse_pass_list(const std::string& spec) {
  const std::string whole = trim(spec);
  if (whole == "none") return std::vector<std::string>{};
  if (whole == "default") return default_pipeline();
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    std::string name = trim(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (name.empty()) {
      return bad_input("empty pass name in \"" + spec + "\"; expected a comma-separated list of " +
                       known_names() + ", or none, or default");
    }
    if (!find_pass(name)) {
      if (name == "none" || name == "default") {
        return bad_input("\"" + name + "\" cannot be combined with other passes in \"" + spec + "\"");
      }
      return unknown_pass(name);
    }
    names.push_back(std::move(name));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

}  // namespace gexec
