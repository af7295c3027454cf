// libFuzzer target: arbitrary bytes through loading, checking, the passes, kernel selection,
// buffer planning, printing and a save/load round trip, aborting on any broken invariant.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/passes/pipeline.hpp"

namespace {

using namespace gexec;

// The file name every problem line must start with.
constexpr std::string_view kName = "fuzz.json";
// `init.file` paths resolve under a directory that does not exist, so a relative path never
// reads a file of the machine running the fuzzer.
const std::string kBaseDir = "/nonexistent-dir";

[[noreturn]] void fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_graph: invariant broken: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

void check(bool ok, const std::string& what, const std::string& detail = {}) {
  if (!ok) fail(what, detail);
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// A refused file: status 2, and one "fuzz.json: /pointer: ..." or "fuzz.json:L:C: ..." line per
// problem (a raw newline inside a message would break that), plus the "... and N more" line.
void check_refusal(const Error& e) {
  check(e.code == Exit::bad_input, "a refused file must be bad_input", e.message);
  check(!e.message.empty(), "a refusal must say why");
  size_t start = 0;
  while (start <= e.message.size()) {
    size_t end = e.message.find('\n', start);
    if (end == std::string::npos) end = e.message.size();
    const std::string_view line = std::string_view(e.message).substr(start, end - start);
    const bool located = line.starts_with(std::string(kName) + ": /") ||
                         (line.starts_with(std::string(kName) + ":") && line.size() > kName.size() + 1 &&
                          line[kName.size() + 1] >= '0' && line[kName.size() + 1] <= '9');
    check(located || line.starts_with("... and "), "every problem line names the file and a location",
          e.message);
    // One bounded line of valid UTF-8, which the JSON report takes without throwing.
    check(printable(line) == line, "every problem line is printable UTF-8", e.message);
    check(line.size() <= 8192, "every problem line is bounded", std::string(line.substr(0, 300)));
    start = end + 1;
  }
  const std::string report = dump_json(nlohmann::json{{"result", "error"}, {"error", e.message}});
  check(nlohmann::json::accept(report), "the report of a refusal is valid JSON", report);
}

// Offsets are aligned and inside the arena, every tensor an op touches has one, and no two
// tensors whose lifetimes meet share a byte.
void check_plan(const Graph& g, const BufferPlan& plan) {
  check(plan.offset.size() == g.tensors.size(), "one offset per tensor");
  if (!plan.fits) return;  // beyond 2^63 - 1 bytes the offsets are clamped: moot
  check(plan.arena_bytes <= plan.total_bytes, "the arena is never larger than one buffer per tensor");

  const GraphIndex idx(g);
  const int64_t end_of_run = int64_t(g.ops.size());
  std::vector<int64_t> first(g.tensors.size(), -1), last(g.tensors.size(), -1);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const OpId p = idx.producer[t];
    const bool used = p != kNone || !idx.consumers[t].empty() || idx.is_output[t];
    check(used == (plan.offset[t] >= 0), "exactly the used tensors have an offset", g.tensors[t].name);
    if (!used) continue;
    const int64_t off = plan.offset[t];
    check(off % kArenaAlignment == 0, "offsets are aligned", g.tensors[t].name);
    check(off + g.tensors[t].bytes() <= plan.arena_bytes, "a tensor lies inside the arena", g.tensors[t].name);
    const bool whole = p == kNone || idx.is_output[t] || g.ops[size_t(p)].hoisted;
    first[t] = whole ? -1 : p;
    last[t] = whole ? end_of_run : (idx.consumers[t].empty() ? p : idx.consumers[t].back());
  }
  // A sweep over op positions keeps the live tensors by offset; a new one must not overlap
  // its neighbours there.
  std::vector<std::vector<size_t>> born(g.ops.size() + 2), dies(g.ops.size() + 2);
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (plan.offset[t] >= 0) {
      born[size_t(first[t] + 1)].push_back(t);
      dies[size_t(last[t] + 1)].push_back(t);
    }
  std::map<int64_t, size_t> live;  // offset -> tensor
  for (size_t step = 0; step <= g.ops.size(); ++step) {
    for (size_t t : born[step]) {
      const int64_t lo = plan.offset[t], hi = lo + g.tensors[t].bytes();
      auto next = live.lower_bound(lo);
      if (next != live.end())
        check(next->first >= hi, "live tensors do not overlap",
              g.tensors[t].name + " and " + g.tensors[next->second].name);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        check(prev->first + g.tensors[prev->second].bytes() <= lo, "live tensors do not overlap",
              g.tensors[t].name + " and " + g.tensors[prev->second].name);
      }
      live.emplace(lo, t);
    }
    for (size_t t : dies[step]) live.erase(plan.offset[t]);
  }
}

// Saving and loading gives the same graph back, except the passes' marks that the format does
// not hold: `hoisted` on ops and `constant` on the tensors they write.
void check_round_trip(const Graph& g, const char* when) {
  const std::string text = save_graph(g);
  auto back = load_graph_text(text, std::string(kName), kBaseDir);
  if (!back) fail(std::string("a saved graph loads back (") + when + ")", back.error().message + "\n" + text);
  Graph want = g;
  for (Op& op : want.ops) {
    op.hoisted = false;
    for (TensorId t : op.outputs) want.tensor(t).constant = false;
  }
  check(*back == want, std::string("a saved graph loads back equal (") + when + ")",
        print_graph(want) + "---\n" + print_graph(*back));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto loaded = load_graph_text(text, std::string(kName), kBaseDir);
  if (!loaded) {
    check_refusal(loaded.error());
    return 0;
  }
  Graph& g = *loaded;
  check(verify(g).empty(), "a loaded graph verifies", join_lines(verify(g)));
  check_round_trip(g, "as loaded");

  std::ostream null_out(nullptr);  // --print-after-all's text, thrown away
  PipelineOptions opts;
  opts.passes = default_pipeline();
  opts.print_after_all = true;
  auto records = run_pipeline(g, opts, null_out);
  if (!records) fail("the default pipeline runs on every loaded graph", records.error().message);
  check(verify(g).empty(), "the pipeline leaves a valid graph", join_lines(verify(g)));
  check(!g.ops.empty() && !g.outputs.empty(), "the pipeline keeps the outputs and what writes them");

  const std::string printed = print_graph(g);
  check(printed.starts_with("graph "), "print_graph starts with the graph line", printed);
  check_round_trip(g, "after the passes");

  auto caps = caps_for_arch("sm_90");
  check(caps.ok(), "sm_90 is an architecture");
  auto sel = select_kernels(g, *caps, Backend::cuda);
  if (sel) {
    check(sel->ops.size() == g.ops.size(), "one choice per op");
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const KernelDef* k = sel->ops[i].kernel;
      check(k && k->op == g.ops[i].type && k->backend == Backend::cuda, "each op gets a kernel of its type",
            g.ops[i].name);
    }
    (void)print_selection(g, *sel);
  } else {
    check(!sel.error().message.empty(), "a failed selection says why");
  }

  check_plan(g, plan_buffers(g));
  return 0;
}
