// libFuzzer target: arbitrary bytes as an ONNX model through the front end, then the mapped graph
// through verify(), a save/load round trip as a graph file (its names must be valid there), the
// passes, selection and planning; aborting on a crash or any broken invariant.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <string_view>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/onnx/onnx_import.hpp"
#include "gexec/passes/pipeline.hpp"

namespace {

using namespace gexec;

constexpr std::string_view kName = "fuzz.onnx";
// External data resolves under a folder that does not exist: no file of the machine is read.
const std::string kBaseDir = "/nonexistent-dir";

void check(bool ok, const std::string& what, const std::string& detail = {}) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_onnx: invariant broken: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

// Whether the message says "internal:" outside the quoted names and texts it repeats from the
// model (which may say anything).
bool internal_error(const std::string& message) {
  std::string outside;
  bool quoted = false;
  for (size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (quoted && c == '\\') {
      ++i;  // an escaped character inside quotes
      continue;
    }
    if (c == '"') quoted = !quoted;
    else if (!quoted) outside += c;
  }
  return outside.find("internal:") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  onnx_import::DimOptions dims;
  dims.input_shape = [](size_t, const std::string&, const std::string&) -> std::optional<std::vector<int64_t>> {
    return std::vector<int64_t>{2, 3};  // open dimensions get sizes, so that more models map
  };
  auto model = onnx_import::load_onnx(bytes, std::string(kName), kBaseDir, dims);
  if (!model) {
    const Error& e = model.error();
    check(e.code == Exit::bad_input, "a refused model is bad_input", e.message);
    check(!internal_error(e.message), "no internal error", e.message);
    size_t start = 0;
    while (start <= e.message.size()) {
      size_t end = e.message.find('\n', start);
      if (end == std::string::npos) end = e.message.size();
      const std::string_view line = std::string_view(e.message).substr(start, end - start);
      check(line.starts_with(std::string(kName) + ": ") || line.starts_with("--dim ") || line.starts_with("... and "),
            "every problem line names the model", e.message);
      check(printable(line) == line, "every problem line is printable UTF-8", e.message);
      start = end + 1;
    }
    return 0;
  }
  Graph& g = model->graph;
  check(verify(g).empty(), "a mapped graph verifies");
  for (const auto& p : model->inputs)
    check(p.tensor == kNone || g.tensor(p.tensor).numel() == [&] {
      int64_t n = 1;
      for (int64_t d : p.shape) n *= d;
      return n;
    }(), "an input's tensor holds its elements", p.name);
  // The graph saves as a graph file that loads back: names, attributes and values all valid there.
  auto back = load_graph_text(save_graph(g), "fuzz.json", kBaseDir);
  check(back.ok(), "the mapped graph saves as a valid graph file", back ? "" : back.error().message);

  std::ostream null_out(nullptr);
  PipelineOptions opts;
  opts.passes = default_pipeline();
  auto records = run_pipeline(g, opts, null_out);
  check(records.ok(), "the default pipeline runs on every mapped graph", records ? "" : records.error().message);
  auto caps = caps_for_arch("sm_90");
  check(caps.ok(), "sm_90 is an architecture");
  auto sel = select_kernels(g, *caps, Backend::cuda);
  if (!sel) check(!sel.error().message.empty(), "a failed selection says why");
  (void)plan_buffers(g);
  return 0;
}
