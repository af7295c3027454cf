// What one `gexec run` did, as plain data: the command renders it as text and as JSON, and
// library callers (tests, bindings, profilers) read it directly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gexec/app/modes.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/kernels/device_caps.hpp"
#include "gexec/kernels/kernel_def.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/status.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

struct RunOptions;

// The graph as loaded.
struct GraphSummary {
  std::string name, file;
  std::string format = "json";  // the file's kind: "json" (a gexec graph) or "onnx"
  std::string source;           // an ONNX model's opset and producer; empty for JSON
  uint64_t seed = 0;  // the seed the inputs were drawn from
  int64_t tensors = 0, ops = 0;
};

struct PassesSummary {
  std::vector<PassRecord> records;  // in the order run
  int64_t ops_before = 0, ops_after = 0;
};

struct DeviceSummary {
  DeviceCaps caps;
  Backend backend = Backend::cuda;
};

// The kernel chosen for one op of the graph after the passes, in execution order.
struct KernelChoice {
  std::string op, type;            // op name and type, e.g. "GEMM_BIAS_ACT"
  std::string kernel;              // the chosen kernel's name
  bool hoisted = false;            // runs once, before the runs
  std::vector<std::string> notes;  // e.g. conversions the kernel makes
  struct Rejected {
    std::string kernel, reason;
  };
  std::vector<Rejected> rejected;  // every kernel tried before it, and why it was turned down
  // Once prepared: how many interchangeable implementations the kernel has (cuBLASLt's heuristic
  // candidates), which one runs, and that one as the kernel describes it (empty: no description).
  int variants = 0, variant = 0;
  std::string algo;
  // A product's `gexec gemm` line that runs it alone (gemm_replay.hpp); once prepared, with the
  // candidate it runs. Empty for other ops.
  std::string gemm_command;
};

struct PlacedBuffer {
  std::string tensor;
  int64_t offset = 0, bytes = 0;
};

struct BufferSummary {
  int64_t arena_bytes = 0;  // the one arena, intermediates reused
  int64_t total_bytes = 0;  // one buffer per tensor
  int64_t alignment = 0;
  bool fits = true;  // BufferPlan::fits: the arena fits in 2^63 - 1 bytes
  std::vector<PlacedBuffer> tensors;
};

struct DumpSummary {
  std::string dir;
  int64_t tensors = 0;                     // files written
  std::vector<std::string> widened_to_f32;  // bf16 and f8 tensors written as f32 (real values)
};

// One output compared with the reference.
struct CheckedOutput {
  OutputCheck check;
  std::vector<int64_t> shape;
};

struct CheckSummary {
  VerifyMode requested = VerifyMode::automatic;  // --verify as given
  VerifyMode mode = VerifyMode::full;           // full, sample (by strata), exact or none
  PrecisionChoice precision = PrecisionChoice::f32;  // the products' arithmetic the bound follows
  int64_t samples = 0;    // sample: at least this many elements per output
  int64_t tile = 0;       // sample: one element in every tile x tile block of each output
  double reference_work = 0;  // multiply-adds of a full reference
  double budget_s = 0;        // --verify-budget: the seconds of CPU reference auto allows
  double estimate_s = -1;     // the CPU reference's estimated seconds where it was estimated, else -1
  ReferenceSite reference = ReferenceSite::cpu;  // where the products are summed (a device named in `device`)
  std::string device;
  std::string why;                 // why auto chose the mode (empty for a mode asked for)
  std::vector<CheckedOutput> outputs;  // empty with mode "none"
  bool compared = false;               // the outputs were compared (mode "none": trivially)
  bool pass() const;                   // every output within its tolerance
};

// --expect DIR: one output compared with a result given in a file (expect.hpp has the rule).
struct ExpectedOutput {
  std::string name;  // the output tensor
  std::string file;  // the file it was compared with
  DType dtype = DType::f32;
  int64_t count = 0, beyond = 0;  // elements compared, and those beyond atol + rtol |expected|
  double max_abs = 0, max_rel = 0;
  double atol = 0, rtol = 0;
  int64_t worst = -1;  // the element furthest beyond (or nearest to) its allowance
  double worst_got = 0, worst_expected = 0;
  bool pass = false;
};

struct ExpectSummary {
  std::string dir;
  std::vector<ExpectedOutput> outputs;
  bool pass() const;
};

struct OpTime {
  std::string name, type;
  double median_us = 0;
};

// --iters N: the statistics of the timed runs and the rates at the median.
struct RunTiming {
  TimingStats stats;
  TimingInfo info;
  TimingOptions options;  // as asked (iterations, warm-up)
  bool graph_used = false;
  double flops = 0, bytes = 0, tflops = 0, gbps = 0;
  std::vector<double> samples;   // every sample (us per iteration), in the order timed
  int rotating_sets = 1;         // operand sets rotated over (cold L2); 1: warm, on the run's buffers
  bool cold_l2 = false;          // timed with a cold L2 cache: rotating sets, or one set larger than their size
  std::string rotation_note;     // why cold-L2 timing was asked for but not done
  std::optional<double> peak_tflops, peak_pct;
  bool noisy = false;            // cv above kNoisyCv
  std::vector<OpTime> profile;   // with --profile: each op timed alone
  bool complete = false;         // everything asked for was timed (else an error stopped it)
};

// --tp N (docs/distributed.md): the sharded run's plan, whether its ranks agree and, with --iters,
// where its time goes (medians, microseconds).
struct TensorParallelSummary {
  int ranks = 1;
  std::vector<int> devices;           // the CUDA devices in rank order; empty on the CPU
  std::string communicator;           // what carries the collectives (NCCL, or the CPU ranks' host memory)
  std::string reduce = "all-reduce";  // --tp-reduce: how row-parallel products are summed
  std::vector<std::string> notes;     // the sharding's decisions, product by product
  std::vector<std::string> sharded_inputs;  // "W1.shard: slice r of W1 along axis 1"
  std::vector<int64_t> arena_bytes;   // per rank
  struct Collective {
    std::string op, type;
    int64_t tensor_bytes = 0;  // the whole tensor reduced or gathered
    int64_t ring_bytes = 0;    // what one rank sends over a ring (collective_ring_bytes)
    double median_us = -1;     // --iters: timed alone; -1 untimed
  };
  std::vector<Collective> collectives;
  bool ranks_compared = false;  // every rank's outputs were compared with rank 0's
  std::string ranks_disagree;   // the first output that differs between ranks, else empty
  bool timed = false;
  double step_us = 0;           // one step of the sharded run, every rank and collective
  double compute_us = 0;        // the slowest rank's ops without the collectives
  double communication_us = 0;  // the collectives alone
  double exposed_us = 0;        // step - compute, at least 0: communication not hidden behind compute
  double overlap = 0;           // 1 - exposed / communication (0 to 1)
  std::vector<double> rank_compute_us;  // per rank
};

struct PhaseTimes {
  double load = 0, passes = 0, device = 0, setup = 0, first_run = 0, check = 0, total = 0;
};

// Something the user should know that did not stop the run.
struct RunWarning {
  enum class Kind { cpu_fallback, noisy_timings, peak_unknown, other };
  Kind kind = Kind::other;
  std::string message;
};
std::string_view warning_kind_name(RunWarning::Kind k);  // "cpu_fallback", ...

// Sections are filled in the order the run reaches them; those after an error or a dry run's
// end stay empty.
struct RunReport {
  enum class Result { pass, fail, dry_run, error };
  Result result = Result::error;
  std::optional<Error> error;  // set when result is error

  std::optional<GraphSummary> graph;
  std::string printed_before;  // dry-run: the graph before the passes, printed
  std::string pass_prints;     // what --print-after(-all) printed
  std::optional<PassesSummary> passes;
  std::string printed_after;   // dry-run: the graph after the passes, printed
  std::string emitted_graph;   // --emit-graph: the file written
  std::string emitted_gemms;   // --emit-gemms: the file written
  std::optional<DeviceSummary> device;
  KernelOptions kernel_options;  // what selection and preparation were given (--pad)
  std::optional<std::vector<KernelChoice>> kernels;
  std::optional<BufferSummary> buffers;
  std::optional<std::vector<std::string>> loaded_inputs;  // set once execution starts
  std::string load_inputs_dir;
  std::optional<int64_t> exact_range;  // --verify exact: inputs are integers in -R..R
  std::string tuning_log;            // --autotune / --tuning-cache: one line per tuned kernel
  std::vector<std::string> notes;    // known once the kernels are prepared (e.g. an unfused epilogue)
  bool executed = false;             // the checked run completed
  std::optional<DumpSummary> dump;
  std::optional<CheckSummary> check;
  std::optional<ExpectSummary> expect;  // --expect DIR
  std::optional<RunTiming> timing;
  std::optional<TensorParallelSummary> tp;  // --tp
  std::optional<PhaseTimes> times_ms;  // set when the run completed
  std::vector<RunWarning> warnings;
  // Options whose output paths were refused before the run (output_paths.hpp): their files are
  // not written, not even the error report.
  std::string refused_outputs;

  // 0 pass (and dry run), 1 check failed, else the error's status.
  Exit exit_code() const;
};
std::string_view result_name(RunReport::Result r);  // "pass", "fail", "dry-run", "error"

// Called after each section is filled, with the report so far: lets the command print as the
// run goes rather than at its end.
using RunObserver = std::function<void(const RunReport&)>;

// The whole run; never throws. An error stops it and is stored in the report with the sections
// reached before it.
RunReport run_graph(const RunOptions& opts, const RunObserver& observer = {});

}  // namespace gexec
