// gexec: parse the command line, call the library, return its exit status.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <new>

#include "gexec/app/commands.hpp"
#include "gexec/app/compare.hpp"
#include "gexec/app/gemm_command.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/app/version.hpp"
#include "openblas_limit.hpp"
#include "option_checks.hpp"

namespace {

// --dim NAME=VALUE, repeatable: a malformed or repeated name is a usage error, said on stderr.
bool parse_dims(const std::vector<std::string>& given, std::map<std::string, int64_t>* out) {
  for (const std::string& d : given)
    if (gexec::Status s = gexec::parse_dim(d, out); !s) {
      std::cerr << "gexec: " << s.error().message << "\n";
      return false;
    }
  return true;
}

// `gexec run`: its options and the locals they are parsed into, then the call.
struct RunCommand {
  gexec::RunOptions opts;
  std::string seed, arch;
  double atol = 0, rtol = 0, peak = 0, expect_atol = 0, expect_rtol = 0;
  bool graph = false, no_graph = false;
  bool run_cold_l2 = false;
  double run_rotating_mb = 0;
  std::vector<std::string> dims;
  CLI::App* cmd = nullptr;
  CLI::Option *seed_opt = nullptr, *arch_opt = nullptr, *atol_opt = nullptr, *rtol_opt = nullptr, *peak_opt = nullptr,
              *expect_atol_opt = nullptr, *expect_rtol_opt = nullptr, *iters_opt = nullptr;

  void add(CLI::App& app) {
    cmd = app.add_subcommand("run", "Run a graph and check its outputs against the CPU reference");
    cmd->add_option("graph", opts.graph_path, "Graph file (JSON) or ONNX model, told apart by content")->required();
    cmd->add_option("--dim", dims, "NAME=VALUE: the size of an ONNX model's open dimension (repeatable)")
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_option("--expect", opts.expect_dir,
                    "Also compare each output with DIR/<name>.npy or DIR/output_N.pb (ONNX test data)")
        ->check(gexec::cli::non_empty_path());
    expect_atol_opt = cmd->add_option("--expect-atol", expect_atol, "--expect's absolute allowance (default per dtype)")
                          ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    expect_rtol_opt = cmd->add_option("--expect-rtol", expect_rtol, "--expect's relative allowance (default per dtype)")
                          ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    // Unsigned 64-bit and checked as text: CLI11 would wrap -1 and saturate 2^64.
    seed_opt = cmd->add_option("--seed", seed, "Seed for the inputs (overrides the graph's; default 0)")
                         ->check(gexec::cli::integer_in(0, std::numeric_limits<uint64_t>::max()));
    cmd->add_flag("--dry-run", opts.dry_run, "Load, run the passes, select kernels and plan buffers; touch no device");
    arch_opt = cmd->add_option("--arch", arch, "Device to assume in a dry-run, e.g. sm_90 (default: detected, else sm_90)");
    cmd->add_option("--device", opts.device, "CUDA device ordinal")->check(gexec::cli::integer_in(0, 1023));
    cmd->add_option("--backend", opts.backend, "auto, cuda or cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
    atol_opt = cmd->add_option("--atol", atol, "Absolute allowance near zero (default per output dtype)")
                         ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    rtol_opt = cmd->add_option("--rtol", rtol, "Extra allowance, times each element's scale (default 0)")
                         ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    cmd->add_option("--passes", opts.passes, "Pass pipeline: default, none, or a comma-separated list");
    cmd->add_flag("--print-after-all", opts.print_after_all, "Print the graph after every pass");
    cmd->add_option("--print-after", opts.print_after, "Print the graph after the named pass");
    cmd->add_option("--emit-graph", opts.emit_graph, "Write the graph after the passes to this file")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--emit-gemms", opts.emit_gemms,
                    "Write each product as the 'gexec gemm' command that runs it alone (gexec gemm --from FILE runs them)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--residual-costs", opts.residual_costs,
                        "fuse_residual keeps the product and a separate ADD where this table (M N K DTYPE FUSED_US "
                        "UNFUSED_US lines, from scripts/bench_blocks.py) measured fusing to lose")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--dump", opts.dump_dir, "Write every graph input and output as .npy into this folder")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--verify", opts.verify,
                        "Check the outputs: auto (in full: on the CUDA backend with a float64 reference on the device, "
                        "on the CPU within --verify-budget, else sampled by strata), full, sample (by strata), exact "
                        "(integer inputs, bit equality) or none")
        ->check(CLI::IsMember(gexec::run_verify_modes()));
    cmd->add_option("--verify-budget", opts.verify_budget,
                        "Seconds of CPU reference --verify auto allows (estimated from its rate on this machine) before "
                        "it samples instead (default 5)")
        ->check(gexec::cli::number_in(0, 1e9));
    cmd->add_option("--samples", opts.samples,
                        "Output elements a sampled check compares at least, per output, beside one in every tile "
                        "(default 4096)")
        ->check(gexec::cli::integer_in(gexec::kMinCheckSamples, uint64_t(std::numeric_limits<int64_t>::max())));
    cmd->add_option("--report", opts.report_path, "Write a JSON report of the run to this file")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--load-inputs", opts.load_inputs_dir,
                    "Replace graph inputs by DIR/<name>.npy, or DIR/input_N.pb (ONNX test data), where present")
        ->check(gexec::cli::non_empty_path());
    // Bounded so that the per-iteration samples always fit in memory (16 bytes each).
    iters_opt = cmd->add_option("--iters", opts.timing.iters, "Time this many iterations after the checked run (at most 10^7)")
        ->check(gexec::cli::integer_in(0, 10000000));
    cmd->add_option("--warmup", opts.timing.warmup_iters, "Untimed iterations before timing (default 10)")
        ->check(gexec::cli::integer_in(0, 10000000));
    cmd->add_option("--warmup-ms", opts.timing.warmup_ms, "Also warm up for this many milliseconds")
        ->check(gexec::cli::number_in(0, 3600000));
    auto* graph_flag = cmd->add_flag("--cuda-graph", graph, "Replay a captured CUDA graph when timing (the default)");
    cmd->add_flag("--no-cuda-graph", no_graph, "Time direct launches instead of a graph replay")->excludes(graph_flag);
    cmd->add_flag("--profile", opts.timing.profile, "Also time each op on its own");
    cmd->add_flag("--profile-range", opts.timing.profile_range,
                  "Exactly --iters timed iterations (no calibration), alone between cudaProfilerStart and "
                  "cudaProfilerStop: the capture range of nsys --capture-range=cudaProfilerApi and ncu "
                  "--profile-from-start off (docs/profiling.md)");
    cmd->add_flag("--autotune", opts.autotune,
                      "Time the top cuBLASLt candidates of each GEMM and keep the fastest that passes the check");
    cmd->add_option("--autotune-top", opts.autotune_top, "How many candidates --autotune times (default 16)")
        ->check(gexec::cli::integer_in(1, 2048));
    cmd->add_option("--tuning-cache", opts.tuning_cache,
                        "Save the tuned choices to this file and reload them (same device and versions only)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--pad", opts.pad,
                        "Copy GEMM operands with misaligned rows into 16-byte-aligned buffers: auto (by a cost "
                        "estimate), never or always")
        ->check(CLI::IsMember({"auto", "never", "always"}));
    cmd->add_option("--precision", opts.precision,
                    "f32 products on CUDA: tf32 (TF32 tensor cores, the default) or f32 (full f32, as ONNX specifies)")
        ->check(CLI::IsMember({"tf32", "f32"}));
    cmd->add_option("--kernel", opts.kernels,
                    "OP=NAME: run op OP on kernel NAME of `gexec kernels` (OP * or left out: every op it is declared "
                    "for), past the selector's cost model (repeatable)");
    cmd->add_option("--algo-space", opts.algo_space,
                    "What --autotune times of cuBLASLt: heuristic (its candidates, the default) or all (every "
                    "algorithm id, tile and split-K count cublasLtMatmulAlgoCheck accepts)")
        ->check(CLI::IsMember({"heuristic", "all"}));
    cmd->add_flag("--cold-l2", run_cold_l2, "Time on rotating operand sets (128 MB in all): a cold L2 cache");
    cmd->add_option("--rotating", run_rotating_mb, "Rotating operand sets of this many MB in all (implies cold L2)")
        ->check(gexec::cli::number_in(0, 1048576, true));
    cmd->add_flag("--force", opts.force,
                      "Let an output overwrite one of the run's inputs (the graph, an init.file, a --load-inputs file, "
                      "a file --tuning-cache names that is not a tuning cache)");
    peak_opt = cmd->add_option("--peak-tflops", peak, "The device's peak for '% of peak' (default: measured once, cached)")
        ->check(gexec::cli::number_in(0, 1e9, true));
    cmd->add_option("--tp", opts.tp,
                    "Tensor parallelism: cut the graph into N ranks' programs (column- and row-parallel products, "
                    "collectives between them) and run them, over NCCL on CUDA, as N ranks in one process on the CPU "
                    "(docs/distributed.md)")
        ->check(gexec::cli::integer_in(1, 64));
    cmd->add_option("--devices", opts.devices, "The CUDA device of each rank of --tp, comma-separated (default: --device, "
                    "--device + 1, ...); alone, it sets --tp to their count")
        ->delimiter(',')
        ->check(gexec::cli::integer_in(0, 1023));
    cmd->add_option("--tp-reduce", opts.tp_reduce,
                    "How --tp sums row-parallel products: all-reduce (the default) or reduce-scatter (each rank keeps "
                    "its rows, gathered where needed)")
        ->check(CLI::IsMember({"all-reduce", "reduce-scatter"}));
  }

  gexec::Exit run(const std::string& command_line) {
    opts.command_line = command_line;
    opts.timing.count_iterations = true;
    opts.timing_progress = true;  // drawn only on a terminal, never under -q (progress.hpp)
    if (seed_opt->count()) opts.seed = std::stoull(seed);  // checked above: digits, in range
    if (arch_opt->count()) opts.arch = arch;
    if (atol_opt->count()) opts.atol = atol;
    if (rtol_opt->count()) opts.rtol = rtol;
    if (peak_opt->count()) opts.peak_tflops = peak;
    if (expect_atol_opt->count()) opts.expect_atol = expect_atol;
    if (expect_rtol_opt->count()) opts.expect_rtol = expect_rtol;
    if (!parse_dims(dims, &opts.dims)) return gexec::Exit::bad_input;
    // The profiler captures a count of iterations the user chose, never a calibrated one.
    if (opts.timing.profile_range && (!iters_opt->count() || opts.timing.iters < 1)) {
      std::cerr << "gexec: --profile-range needs a fixed --iters N (N >= 1): the iterations the profiler captures\n";
      return gexec::Exit::bad_input;
    }
    opts.timing.cuda_graph = !no_graph;
    opts.timing.rotate_bytes = gexec::rotation_bytes(run_cold_l2, run_rotating_mb);
    if (!opts.devices.empty() && opts.tp == 0) opts.tp = int(opts.devices.size());
    if (opts.tp > 0 && opts.devices.empty())
      for (int r = 0; r < opts.tp; ++r) opts.devices.push_back(opts.device + r);
    return gexec::run_command(opts, std::cout, std::cerr);
  }
};

// `gexec validate FILE...`.
struct ValidateCommand {
  std::vector<std::string> files, dims;
  CLI::App* cmd = nullptr;

  void add(CLI::App& app) {
    cmd = app.add_subcommand("validate", "Check graph files and ONNX models and report every problem");
    cmd->add_option("files", files, "Graph files (JSON) or ONNX models")->required();
    cmd->add_option("--dim", dims, "NAME=VALUE: the size of an ONNX model's open dimension (repeatable)")
        ->allow_extra_args(false)
        ->take_all();
  }
  gexec::Exit run() {
    std::map<std::string, int64_t> sizes;
    if (!parse_dims(dims, &sizes)) return gexec::Exit::bad_input;
    return gexec::validate_command(files, std::cout, std::cerr, sizes);
  }
};

// `gexec import MODEL.onnx -o GRAPH.json`.
struct ImportCommand {
  gexec::ImportOptions opts;
  std::vector<std::string> dims;
  CLI::App* cmd = nullptr;

  void add(CLI::App& app) {
    cmd = app.add_subcommand("import", "Write an ONNX model as the gexec graph it maps to, with its weights as .npy");
    cmd->add_option("model", opts.model_path, "ONNX model")->required();
    cmd->add_option("-o,--output", opts.graph_path, "The graph file to write (JSON)")
        ->required()
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--weights", opts.weights_dir,
                    "Folder for the initializers' .npy files (default: the graph file's folder)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--dim", dims, "NAME=VALUE: the size of an open dimension (repeatable)")
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_flag("--force", opts.force, "Let an output overwrite one of the model's own files");
  }
  gexec::Exit run() {
    if (!parse_dims(dims, &opts.dims)) return gexec::Exit::bad_input;
    return gexec::import_command(opts, std::cout, std::cerr);
  }
};

// `gexec check GRAPH --inputs DIR --outputs DIR`.
struct CheckCommand {
  gexec::CheckOptions opts;
  std::string seed;
  double atol = 0, rtol = 0;
  std::vector<std::string> dims;
  CLI::App* cmd = nullptr;
  CLI::Option *seed_opt = nullptr, *atol_opt = nullptr, *rtol_opt = nullptr;

  void add(CLI::App& app) {
    cmd = app.add_subcommand("check", "Check outputs from .npy files against the reference of a graph");
    cmd->add_option("graph", opts.graph_path, "Graph file (JSON) or ONNX model, told apart by content")->required();
    cmd->add_option("--dim", dims,
                    "NAME=VALUE: the size of an ONNX model's open dimension (repeatable; else from the --inputs files)")
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_option("--inputs", opts.inputs_dir, "Folder with <name>.npy for every graph input")->required();
    cmd->add_option("--outputs", opts.outputs_dir, "Folder with <name>.npy for every graph output")->required();
    cmd->add_option("--verify", opts.verify,
                          "full (the default), auto (full within --verify-budget, else sampled by strata), sample or "
                          "exact (bit equality)")
        ->check(CLI::IsMember(gexec::check_verify_modes()));
    cmd->add_option("--verify-budget", opts.verify_budget,
                          "Seconds of CPU reference --verify auto allows before it samples (default 5)")
        ->check(gexec::cli::number_in(0, 1e9));
    cmd->add_option("--backend", opts.backend,
                          "Where the reference's products are summed: auto (a CUDA device where there is one, in "
                          "float64, cross-checked on the CPU), cuda or cpu")
        ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
    cmd->add_option("--device", opts.device, "CUDA device ordinal")->check(gexec::cli::integer_in(0, 1023));
    cmd->add_option("--samples", opts.samples, "Output elements a sampled check compares (default 4096)")
        ->check(gexec::cli::integer_in(gexec::kMinCheckSamples, uint64_t(std::numeric_limits<int64_t>::max())));
    seed_opt = cmd->add_option("--seed", seed, "Seed choosing the sampled elements")
                               ->check(gexec::cli::integer_in(0, std::numeric_limits<uint64_t>::max()));
    atol_opt = cmd->add_option("--atol", atol, "Absolute allowance near zero")
                               ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    rtol_opt = cmd->add_option("--rtol", rtol, "Extra allowance times each element's scale")
                               ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    cmd->add_option("--precision", opts.precision, "The products' arithmetic: f32, or tf32 (f32 operands rounded to TF32)")
        ->check(CLI::IsMember({"f32", "tf32"}));
    cmd->add_option("--report", opts.report_path, "Write a JSON report of the check to this file ('-': stdout)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_flag("--force", opts.force,
                        "Let --report overwrite one of the check's inputs (the graph, an init.file, an --inputs or "
                        "--outputs file)");

  }

  gexec::Exit run() {
    if (seed_opt->count()) opts.seed = std::stoull(seed);  // checked above
    if (atol_opt->count()) opts.atol = atol;
    if (rtol_opt->count()) opts.rtol = rtol;
    if (!parse_dims(dims, &opts.dims)) return gexec::Exit::bad_input;
    return gexec::check_command(opts, std::cout, std::cerr);
  }
};

// `gexec gemm`: the sweep's options and every point's run options.
struct GemmCommand {
  gexec::GemmOptions opts;
  std::string seed;
  double atol = 0, rtol = 0, peak = 0, beta = 1;
  int algo = 0;
  bool no_graph = false;
  CLI::App* cmd = nullptr;
  CLI::Option *seed_opt = nullptr, *atol_opt = nullptr, *rtol_opt = nullptr, *iters_opt = nullptr,
              *algo_opt = nullptr, *peak_opt = nullptr, *beta_opt = nullptr;

  void add(CLI::App& app) {
    cmd = app.add_subcommand("gemm", "Profile GEMM + epilogue over a sweep of shapes and types, each point checked");
    cmd->add_option("--m", opts.sweep.m, "M: a value, a list a,b,c or a range start:end:step");
    cmd->add_option("--n", opts.sweep.n, "N: as --m");
    cmd->add_option("--k", opts.sweep.k, "K: as --m");
    cmd->add_option("--shapes", opts.sweep.shapes, "Instead of --m --n --k: shapes MxNxK,...");
    cmd->add_option("--cube", opts.sweep.cube, "Instead of --m --n --k: M = N = K, sizes as --m");
    cmd->add_option("--batch", opts.sweep.batch, "Batch count(s), as --m (default 1)");
    cmd->add_option("--groups", opts.sweep.groups,
                    "Grouped products (mixture of experts): G experts, as --m; each point is a GROUPED_GEMM of --tokens "
                    "rows routed to G products of --n x --k");
    cmd->add_option("--tokens", opts.sweep.tokens, "With --groups: the tokens T (rows of X), as --m");
    cmd->add_option("--routing", opts.sweep.routing, "With --groups: uniform (default), zipf:S or file:F (a JSON list of G counts); a list");
    cmd->add_option("--dtype", opts.sweep.dtype, "Input dtype(s) of A and B: f16, bf16, f32, f8e4m3 (a list; default f16)");
    cmd->add_option("--out-dtype", opts.sweep.out_dtype, "Output dtype (default: the input's; bf16 for f8e4m3)");
    cmd->add_option("--bias", opts.sweep.bias, "Bias: none, f16, bf16 or f32 (a list; default none)");
    cmd->add_option("--act", opts.sweep.act, "Activation(s): none, relu, gelu (tanh), gelu_erf, silu (a list; default none)");
    cmd->add_option("--trans", opts.sweep.trans, "Transposes of A and B: nn, nt, tn, tt (a list; default nn)");
    cmd->add_option("--alpha", opts.sweep.alpha, "Scale of the product (default 1)")
        ->check(gexec::cli::finite_number());
    cmd->add_flag("--fast-accum", opts.sweep.fast_accum, "FP8 fast accumulation on the f8e4m3 points");
    // One value each: what a graph's product may have beyond the sweep's axes (docs/gemm.md).
    cmd->add_option("--dtype-b", opts.sweep.dtype_b, "B's dtype when it differs from A's (f8e4m3 x f8e5m2)");
    cmd->add_option("--op", opts.sweep.op, "The op: gemm_bias_act (the default) or matmul")
        ->check(CLI::IsMember({"gemm_bias_act", "matmul"}));
    cmd->add_flag("--shared-b", opts.sweep.shared_b, "Batched A and C with one B (rank 2) for every batch entry");
    cmd->add_option("--layout", opts.sweep.layout, "Storage of A, B and C: r (rowmajor) or c (colmajor), e.g. rcr");
    cmd->add_option("--residual", opts.sweep.residual, "A residual R of C's shape, added inside the activation: none, f16, bf16, f32");
    beta_opt = cmd->add_option("--beta", beta, "The residual's factor (default 1)")->check(gexec::cli::finite_number());
    cmd->add_flag("--amax", opts.sweep.amax, "An amax output after the f8 C");
    cmd->add_option("--scale", opts.sweep.scale,
                    "f8 operands' scaling: tensor (one each, or --scale-a/-b), row (A per row, B per column) or block "
                    "(A 1x128 along K, B 128x128, as DeepSeek-V3)")
        ->check(CLI::IsMember({"tensor", "row", "block"}));
    cmd->add_option("--scale-a", opts.sweep.scale_a, "A's f8 scale: X, row:X/Y/... or col:X/Y/... (row:X: X for every row)");
    cmd->add_option("--scale-b", opts.sweep.scale_b, "B's f8 scale, as --scale-a");
    cmd->add_option("--scale-c", opts.sweep.scale_c, "C's f8 scale, as --scale-a");
    cmd->add_option("--constant", opts.sweep.constant, "The operands that are weights: a list of a, b, bias, or none (default bias)");
    cmd->add_option("--from", opts.from, "Run the products of this file (one 'gexec gemm ...' line each, as run --emit-gemms writes)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--backend", opts.run.backend, "auto, cuda or cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
    cmd->add_option("--device", opts.run.device, "CUDA device ordinal")->check(gexec::cli::integer_in(0, 1023));
    seed_opt = cmd->add_option("--seed", seed, "Seed for the inputs (default 0)")
                          ->check(gexec::cli::integer_in(0, std::numeric_limits<uint64_t>::max()));
    cmd->add_option("--pad", opts.run.pad, "Pad misaligned GEMM operands: auto, never or always")
        ->check(CLI::IsMember({"auto", "never", "always"}));
    cmd->add_option("--verify", opts.run.verify, "auto, full, sample, exact or none (as for run)")
        ->check(CLI::IsMember(gexec::run_verify_modes()));
    cmd->add_option("--verify-budget", opts.run.verify_budget, "As for run (default 5)")
        ->check(gexec::cli::number_in(0, 1e9));
    atol_opt = cmd->add_option("--atol", atol, "Absolute tolerance (default per output dtype)")
                          ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    rtol_opt = cmd->add_option("--rtol", rtol, "Relative tolerance (default per output dtype)")
                          ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
    iters_opt = cmd->add_option("--iters", opts.run.timing.iters, "Timed iterations per point (default 100, at most 10^7)")
                           ->check(gexec::cli::integer_in(1, 10000000));
    cmd->add_option("--warmup", opts.run.timing.warmup_iters, "Untimed iterations first (default 10)")
        ->check(gexec::cli::integer_in(0, 10000000));
    cmd->add_option("--warmup-ms", opts.run.timing.warmup_ms, "Also warm up for this many milliseconds")
        ->check(gexec::cli::number_in(0, 3600000));
    cmd->add_option("--duration", opts.run.timing.duration_s, "Keep timing until S seconds of samples per point")
        ->check(gexec::cli::number_in(0, 86400));
    cmd->add_flag("--no-cuda-graph", no_graph, "Time direct launches instead of a graph replay");
    cmd->add_flag("--cold-l2", opts.cold_l2, "Time on rotating operand sets (128 MB in all): a cold L2 cache");
    cmd->add_option("--rotating", opts.rotating_mb, "Rotating operand sets of this many MB in all (implies cold L2)")
        ->check(gexec::cli::number_in(0, 1048576, true));
    cmd->add_option("--percentile", opts.percentiles, "Percentiles for the table (default 50,90,99)");
    cmd->add_option("--algo-space", opts.run.algo_space, "heuristic or all: the cuBLASLt configurations --autotune times")
        ->check(CLI::IsMember({"heuristic", "all"}));
    cmd->add_option("--kernel", opts.run.kernels,
                    "NAME, or OP=NAME: run the product on kernel NAME of `gexec kernels`, past the cost model");
    cmd->add_flag("--autotune", opts.run.autotune, "Tune each point's cuBLASLt candidates first");
    cmd->add_option("--autotune-top", opts.run.autotune_top, "Candidates --autotune times (default 16)")
        ->check(gexec::cli::integer_in(1, 2048));
    cmd->add_option("--tuning-cache", opts.run.tuning_cache,
                    "Save each point's tuned choice to this file (with --autotune) and reload it; gexec run reads it")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--precision", opts.run.precision, "f32 products on CUDA: tf32 (the default) or f32")
        ->check(CLI::IsMember({"tf32", "f32"}));
    algo_opt = cmd->add_option("--algo", algo, "Run cuBLASLt candidate N (the table's algo index)")
                              ->check(gexec::cli::integer_in(0, 1000000));
    peak_opt = cmd->add_option("--peak-tflops", peak, "The device's peak for '% of peak'")
                          ->check(gexec::cli::number_in(0, 1e9, true));
    cmd->add_option("--csv", opts.csv_path, "Write the rows as CSV to this file")
        ->check(gexec::cli::non_empty_path());
    cmd->add_flag("--append", opts.append, "Append to the --csv file (same columns) instead of replacing it");
    cmd->add_option("--tags", opts.tags, "Extra CSV columns: key:value,...");
    cmd->add_option("--json", opts.json_path, "Write the points, options and environment as JSON ('-': stdout)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--dump", opts.run.dump_dir, "Write the inputs and output as .npy here (each point overwrites the last)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--export-times", opts.export_times, "Write every timed sample as CSV to this file")
        ->check(gexec::cli::non_empty_path());

  }

  gexec::Exit run(const std::string& command_line, bool quiet) {
    opts.run.command_line = command_line;
    opts.run.timing.count_iterations = true;
    if (seed_opt->count()) opts.run.seed = std::stoull(seed);  // checked above
    if (peak_opt->count()) opts.run.peak_tflops = peak;
    if (atol_opt->count()) opts.run.atol = atol;
    if (rtol_opt->count()) opts.run.rtol = rtol;
    if (algo_opt->count()) opts.run.algo = algo;
    if (beta_opt->count()) opts.sweep.beta = beta;
    if (!iters_opt->count()) opts.run.timing.iters = 100;
    opts.run.timing.cuda_graph = !no_graph;
    opts.progress = !quiet;
    return gexec::gemm_command(opts, std::cout, std::cerr);
  }
};

// `gexec compare BASE NEW...`.
struct CompareCommand {
  gexec::CompareOptions opts;
  CLI::App* cmd = nullptr;

  void add(CLI::App& app) {
    cmd = app.add_subcommand("compare", "Compare gemm --json or run --report files with a baseline, point by point");
    cmd->add_option("base", opts.base, "The baseline results")->required();
    cmd->add_option("new", opts.news, "The results to judge (one or more files)")->required();
    cmd->add_option("--threshold", opts.threshold,
                    "Slower by more than this fraction (and than the noise) is a regression (default 0.05)")
        ->check(gexec::cli::number_in(0, 1e9));
    cmd->add_option("--markdown", opts.markdown_path, "Write the comparison as Markdown to this file (- for stdout)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--json", opts.json_path, "Write the comparison as JSON to this file (- for stdout)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_option("--plot", opts.plot_path, "Draw the ratios and noise bands into this PNG (python3 with matplotlib)")
        ->check(gexec::cli::non_empty_path());
    cmd->add_flag("--force", opts.force, "Let an output file replace one of the files compared");
  }
  gexec::Exit run() { return gexec::compare_command(opts, std::cout, std::cerr); }
};

}  // namespace

int main(int argc, char** argv) {
  gexec::cli::restart_with_one_openblas_thread(argv);
  CLI::App app{"gexec: runs graphs of GEMM and elementwise ops (JSON, or ONNX models) on NVIDIA GPUs and checks them against a CPU reference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", gexec::version_text, "Print the version, build and library versions, and exit");
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "More diagnostics on stderr (pass timings, choices)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");

  RunCommand run;
  run.add(app);
  ValidateCommand validate;
  validate.add(app);
  ImportCommand import;
  import.add(app);
  auto* kernels_cmd = app.add_subcommand("kernels", "Print the kernel table");
  CheckCommand check;
  check.add(app);
  GemmCommand gemm;
  gemm.add(app);
  CompareCommand compare;
  compare.add(app);

  // -v and -q work after the subcommand too.
  for (CLI::App* sub : {run.cmd, validate.cmd, import.cmd, kernels_cmd, check.cmd, gemm.cmd, compare.cmd}) {
    sub->add_flag("-v,--verbose", verbose, "More diagnostics on stderr");
    sub->add_flag("-q,--quiet", quiet, "Only errors on stderr");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help and --version exit 0; usage errors are bad input
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("gexec"));
  spdlog::set_pattern("gexec: %l: %v");
  spdlog::set_level(quiet ? spdlog::level::err : verbose ? spdlog::level::debug : spdlog::level::info);

  // A test aid (fault.hpp): only this entry point passes GEXEC_FAULT on to the CUDA backend.
  if (const char* faults = std::getenv("GEXEC_FAULT"); faults && *faults)
    if (gexec::Status s = gexec::install_test_faults(faults); !s)
      std::cerr << "gexec: " << s.error().message << "; no fault is injected\n";
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  gexec::Exit status = gexec::Exit::ok;
  // The library turns errors into values; what escapes (std::bad_alloc above all) still ends
  // as exit 3 with a message, not an abort.
  try {
    if (*run.cmd) status = run.run(command_line);
    else if (*validate.cmd) status = validate.run();
    else if (*import.cmd) status = import.run();
    else if (*check.cmd) status = check.run();
    else if (*gemm.cmd) status = gemm.run(command_line, quiet);
    else if (*compare.cmd) status = compare.run();
    else if (*kernels_cmd) status = gexec::kernels_command(std::cout);
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "gexec: out of host memory (an allocation failed); nothing more was done\n";
    return static_cast<int>(gexec::Exit::runtime);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "gexec: internal error: " << e.what() << "\n";
    return static_cast<int>(gexec::Exit::runtime);
  }
  return static_cast<int>(status);
}
