// The judge of one generated graph: through the graph file (saved, loaded), the passes (verified
// after each), a backend and the check, as `gexec run FILE --backend cpu --passes P` does.
#include <cstdio>
#include <memory>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/passes/pipeline.hpp"
#include "graphgen.hpp"

namespace gexec::graphgen {

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::refused: return "refused";
    case Outcome::overflow: return "overflow";
    case Outcome::unsupported: return "unsupported";
    case Outcome::failed: return "failed";
  }
  return "?";
}

namespace {

Verdict failed(std::string kind, std::string message) { return {Outcome::failed, std::move(kind), std::move(message)}; }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Whether every output that failed has a reference that is not finite.
bool overflowed(const RunReport& rep) {
  if (!rep.check) return false;
  for (const CheckedOutput& o : rep.check->outputs)
    if (!o.check.pass && o.check.ref_nonfinite == 0) return false;
  return true;
}

// The outputs over their bound, one line each, as `gexec run` words them.
std::string failed_outputs(const RunReport& rep) {
  std::string s;
  if (!rep.check) return "the check failed";
  for (const CheckedOutput& o : rep.check->outputs) {
    const OutputCheck& c = o.check;
    if (c.pass) continue;
    s += (s.empty() ? "" : "\n") + c.name + ": " + std::to_string(c.beyond) + "/" + std::to_string(c.checked) +
         " beyond, elem_ratio " + num(c.max_ratio) + ", norm_ratio " + num(c.norm_ratio) + "; worst element " +
         std::to_string(c.worst) + ": got " + num(c.worst_got) + ", expected " + num(c.worst_ref) + ", bound " +
         num(c.worst_bound);
  }
  return s.empty() ? "the check failed" : s;
}

// What --emit-graph writes of g after `passes`: the pass state that the format has no place for
// (hoisted, and the constant mark on a hoisted op's result) left out, as save_graph leaves it.
Result<Graph> emitted(Graph g, const std::string& passes) {
  auto names = parse_pass_list(passes);
  if (!names) return names.error();
  PipelineOptions opts;
  opts.passes = *names;
  std::ostringstream sink;
  auto records = run_pipeline(g, opts, sink);
  if (!records) return records.error();
  const GraphIndex idx(g);
  for (Op& op : g.ops) op.hoisted = false;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (idx.producer[t] != kNone) g.tensors[t].constant = false;
  return g;
}

}  // namespace

Verdict judge(const Graph& generated, const RunSpec& run) {
  // The generator's graphs are valid by construction; one that is not is the generator's bug.
  if (auto problems = verify(generated); !problems.empty())
    return failed("generator", "the generated graph fails verify: " + problems[0]);
  Graph g = generated;
  if (!run.emit.empty()) {
    auto e = emitted(generated, run.emit);
    if (!e) return e.error().code == Exit::bad_input ? Verdict{Outcome::refused, "", e.error().message}
                                                    : failed("internal", e.error().message);
    g = std::move(*e);
  }
  const std::string text = save_graph(g);
  auto loaded = load_graph_text(text, "graphgen.json", ".");
  if (!loaded) {
    const Error& e = loaded.error();
    if (!run.emit.empty()) return failed("emitted", e.message);
    if (e.code != Exit::bad_input || e.message.find("internal") != std::string::npos) return failed("loader", e.message);
    return {Outcome::refused, "", e.message};
  }
  if (!(*loaded == g))
    return failed("round trip", "saved and loaded, the graph differs:\n--- saved\n" + print_graph(g) +
                                    "--- loaded\n" + print_graph(*loaded));

  RunOptions opts;
  opts.graph = std::make_shared<const Graph>(std::move(*loaded));
  opts.graph_path = "graphgen.json";
  opts.backend = run.backend;
  opts.passes = run.passes;
  opts.verify = run.verify;
  opts.samples = run.samples;
  opts.tp = run.tp;
  opts.tp_reduce = run.reduce_scatter ? "reduce-scatter" : "all-reduce";
  const RunReport rep = run_graph(opts);
  switch (rep.exit_code()) {
    case Exit::ok: return {};
    case Exit::check_failed:
      if (overflowed(rep)) return {Outcome::overflow, "", failed_outputs(rep)};
      return failed("check", failed_outputs(rep));
    case Exit::bad_input: return {Outcome::refused, "", rep.error ? rep.error->message : "refused"};
    case Exit::runtime: break;
  }
  if (run.backend != "cpu" && rep.error && rep.error->message.starts_with("kernel selection failed"))
    return {Outcome::unsupported, "", rep.error->message};
  return failed("internal", rep.error ? rep.error->message : "exit 3 without a message");
}

}  // namespace gexec::graphgen
