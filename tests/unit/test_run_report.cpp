// run_graph(options) -> RunReport: the struct a library caller reads, and the text and JSON the
// command renders from that one struct.
#include <sstream>
#include <string>

#include "catch.hpp"
#include "gexec/app/commands.hpp"
#include "process.hpp"
#include "skip.hpp"

using namespace gexec;

TEST_CASE("run_graph: a dry run fills the sections up to the plan, with no device", "[run-report]") {
  RunOptions opts;
  opts.graph_path = gexec::test::source_path("graphs/mlp3.json");
  opts.dry_run = true;
  opts.arch = "sm_90";
  int calls = 0;
  const RunReport r = run_graph(opts, [&calls](const RunReport&) { ++calls; });
  CHECK(calls >= 2);  // told as the sections fill
  CHECK(r.result == RunReport::Result::dry_run);
  CHECK(r.exit_code() == Exit::ok);
  CHECK_FALSE(r.error);
  REQUIRE(r.graph);
  CHECK(r.graph->name == "mlp3");
  REQUIRE(r.passes);
  CHECK(r.passes->ops_before >= r.passes->ops_after);
  CHECK_FALSE(r.printed_before.empty());
  CHECK_FALSE(r.printed_after.empty());
  REQUIRE(r.kernels);
  REQUIRE(int64_t(r.kernels->size()) == r.passes->ops_after);
  for (const KernelChoice& k : *r.kernels) {
    CHECK_FALSE(k.op.empty());
    CHECK((k.kernel.rfind("cublaslt.", 0) == 0 || k.kernel.rfind("cuda.", 0) == 0));
  }
  REQUIRE(r.buffers);
  CHECK(r.buffers->arena_bytes > 0);
  CHECK_FALSE(r.check);
  CHECK_FALSE(r.times_ms);
}

TEST_CASE("run_graph: an error is a value in the report, with what was reached", "[run-report]") {
  RunOptions opts;
  opts.graph_path = gexec::test::source_path("graphs/mlp3.json");
  opts.passes = "no_such_pass";
  const RunReport r = run_graph(opts);
  CHECK(r.result == RunReport::Result::error);
  REQUIRE(r.error);
  CHECK(r.exit_code() == Exit::bad_input);
  CHECK(r.error->message.find("no_such_pass") != std::string::npos);
  CHECK(r.graph);         // loaded before the error
  CHECK_FALSE(r.passes);  // not reached

  // The command prints the error once, on stderr only.
  std::ostringstream out, err;
  CHECK(run_command(opts, out, err) == Exit::bad_input);
  CHECK(out.str().find("no_such_pass") == std::string::npos);
  const std::string e = err.str();
  CHECK(e.find("gexec: ") == 0);
  CHECK(e.find("no_such_pass") != std::string::npos);
  CHECK(e.find("gexec: ", 1) == std::string::npos);
}

#if GEXEC_HAVE_CPU
TEST_CASE("run_graph: a CPU run's checks per output, times, and a report that carries warnings", "[run-report][cpu]") {
  RunOptions opts;
  opts.graph_path = gexec::test::source_path("graphs/gemm_bias_relu.json");
  opts.backend = "cpu";
  opts.timing.iters = 2;
  opts.timing.warmup_iters = 1;
  opts.peak_tflops = 1.0;
  const RunReport r = run_graph(opts);
  INFO((r.error ? r.error->message : std::string()));
  REQUIRE(r.result == RunReport::Result::pass);
  REQUIRE(r.check);
  CHECK(r.check->compared);
  REQUIRE_FALSE(r.check->outputs.empty());
  for (const CheckedOutput& o : r.check->outputs) {
    CHECK(o.check.pass);
    CHECK_FALSE(o.shape.empty());
  }
  REQUIRE(r.timing);
  CHECK(r.timing->complete);
  CHECK(r.timing->stats.samples == 2);
  CHECK(r.timing->peak_pct);
  REQUIRE(r.times_ms);
  CHECK(r.times_ms->total >= r.times_ms->load);
  REQUIRE(r.device);
  CHECK(r.device->backend == Backend::cpu);
  // Without a peak and on a backend that measures none, the report says so as a warning.
  opts.peak_tflops.reset();
  const RunReport u = run_graph(opts);
  bool unknown = false;
  for (const RunWarning& w : u.warnings) unknown = unknown || w.kind == RunWarning::Kind::peak_unknown;
  CHECK(unknown);
  CHECK(warning_kind_name(RunWarning::Kind::peak_unknown) == "peak_unknown");
}
#else
GEXEC_SKIPPED_TEST("run_graph: a CPU run's report", "[run-report][cpu]", GEXEC_NO_CPU_BACKEND)
#endif

TEST_CASE("--pad: one option read once, carried to selection, shown in the dry-run and the report", "[run-report][pad]") {
  RunOptions opts;
  opts.graph_path = gexec::test::source_path("graphs/gemm_misaligned.json");
  opts.dry_run = true;
  opts.arch = "sm_90";
  auto notes_of = [](const RunReport& r) {
    std::string all;
    REQUIRE(r.kernels);
    for (const KernelChoice& k : *r.kernels)
      for (const std::string& n : k.notes) all += n + "\n";
    return all;
  };
  opts.pad = "never";
  const RunReport never = run_graph(opts);
  REQUIRE(never.result == RunReport::Result::dry_run);
  CHECK(never.kernel_options.pad == PadPolicy::never);
  CHECK(notes_of(never).find("not padded (--pad never)") != std::string::npos);
  opts.pad = "always";
  const RunReport always = run_graph(opts);
  CHECK(always.kernel_options.pad == PadPolicy::always);
  CHECK(notes_of(always).find("padding (--pad always)") != std::string::npos);

  opts.pad = "sideways";
  const RunReport bad = run_graph(opts);
  REQUIRE(bad.error);
  CHECK(bad.exit_code() == Exit::bad_input);
  CHECK(bad.error->message.find("--pad: unknown value \"sideways\"") != std::string::npos);
  CHECK(parse_pad_policy("auto").ok());
  CHECK_FALSE(parse_pad_policy("1").ok());

  const auto cli = gexec::test::run_gexec("run '" + opts.graph_path + "' --dry-run --arch sm_90 --pad always");
  CHECK(cli.status == 0);
  CHECK(cli.output.find("options: --pad always") != std::string::npos);
  CHECK(gexec::test::run_gexec("run '" + opts.graph_path + "' --dry-run --pad sideways").status == 2);
}
