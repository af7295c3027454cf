// gexec: parse the command line, call the library, return its exit status.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <new>

#include "gexec/app/commands.hpp"
#include "gexec/app/gemm_command.hpp"
#include "gexec/app/version.hpp"
#include "openblas_limit.hpp"
#include "option_checks.hpp"

int main(int argc, char** argv) {
  gexec::cli::restart_with_one_openblas_thread(argv);
  CLI::App app{"gexec: runs JSON graphs of GEMM and elementwise ops on NVIDIA GPUs and checks them against a CPU reference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", gexec::version_text, "Print the version, build and library versions, and exit");
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "More diagnostics on stderr (pass timings, choices)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");

  gexec::RunOptions run;
  std::string seed;
  std::string arch;
  double atol = 0, rtol = 0;
  auto* run_cmd = app.add_subcommand("run", "Run a graph and check its outputs against the CPU reference");
  run_cmd->add_option("graph", run.graph_path, "Graph file (JSON)")->required();
  // Unsigned 64-bit and checked as text: CLI11 would wrap -1 and saturate 2^64.
  auto* seed_opt = run_cmd->add_option("--seed", seed, "Seed for the inputs (overrides the graph's; default 0)")
                       ->check(gexec::cli::integer_in(0, std::numeric_limits<uint64_t>::max()));
  run_cmd->add_flag("--dry-run", run.dry_run, "Load, run the passes, select kernels and plan buffers; touch no device");
  auto* arch_opt = run_cmd->add_option("--arch", arch, "Device to assume in a dry-run, e.g. sm_90 (default: detected, else sm_90)");
  run_cmd->add_option("--device", run.device, "CUDA device ordinal")->check(gexec::cli::integer_in(0, 1023));
  run_cmd->add_option("--backend", run.backend, "auto, cuda or cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  auto* atol_opt = run_cmd->add_option("--atol", atol, "Absolute allowance near zero (default per output dtype)")
                       ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
  auto* rtol_opt = run_cmd->add_option("--rtol", rtol, "Extra allowance, times each element's scale (default 0)")
                       ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
  run_cmd->add_option("--passes", run.passes, "Pass pipeline: default, none, or a comma-separated list");
  run_cmd->add_flag("--print-after-all", run.print_after_all, "Print the graph after every pass");
  run_cmd->add_option("--print-after", run.print_after, "Print the graph after the named pass");
  run_cmd->add_option("--emit-graph", run.emit_graph, "Write the graph after the passes to this file")
      ->check(gexec::cli::non_empty_path());
  run_cmd->add_option("--residual-costs", run.residual_costs,
                      "fuse_residual keeps the product and a separate ADD where this table (M N K DTYPE FUSED_US "
                      "UNFUSED_US lines, from scripts/bench_blocks.py) measured fusing to lose")
      ->check(gexec::cli::non_empty_path());
  run_cmd->add_option("--dump", run.dump_dir, "Write every graph input and output as .npy into this folder")
      ->check(gexec::cli::non_empty_path());
  run_cmd->add_option("--verify", run.verify,
                      "Check the outputs: auto (in full: on the CUDA backend with a float64 reference on the device, "
                      "on the CPU within --verify-budget, else sampled by strata), full, sample (by strata), exact "
                      "(integer inputs, bit equality) or none")
      ->check(CLI::IsMember(gexec::run_verify_modes()));
  run_cmd->add_option("--verify-budget", run.verify_budget,
                      "Seconds of CPU reference --verify auto allows (estimated from its rate on this machine) before "
                      "it samples instead (default 5)")
      ->check(gexec::cli::number_in(0, 1e9));
  run_cmd->add_option("--samples", run.samples,
                      "Output elements a sampled check compares at least, per output, beside one in every tile "
                      "(default 4096)")
      ->check(gexec::cli::integer_in(gexec::kMinCheckSamples, uint64_t(std::numeric_limits<int64_t>::max())));
  run_cmd->add_option("--report", run.report_path, "Write a JSON report of the run to this file")
      ->check(gexec::cli::non_empty_path());
  run_cmd->add_option("--load-inputs", run.load_inputs_dir, "Replace graph inputs by DIR/<name>.npy where present")
      ->check(gexec::cli::non_empty_path());
  // Bounded so that the per-iteration samples always fit in memory (16 bytes each).
  run_cmd->add_option("--iters", run.timing.iters, "Time this many iterations after the checked run (at most 10^7)")
      ->check(gexec::cli::integer_in(0, 10000000));
  run_cmd->add_option("--warmup", run.timing.warmup_iters, "Untimed iterations before timing (default 10)")
      ->check(gexec::cli::integer_in(0, 10000000));
  run_cmd->add_option("--warmup-ms", run.timing.warmup_ms, "Also warm up for this many milliseconds")
      ->check(gexec::cli::number_in(0, 3600000));
  bool graph = false, no_graph = false;
  auto* graph_flag = run_cmd->add_flag("--cuda-graph", graph, "Replay a captured CUDA graph when timing (the default)");
  run_cmd->add_flag("--no-cuda-graph", no_graph, "Time direct launches instead of a graph replay")->excludes(graph_flag);
  run_cmd->add_flag("--profile", run.timing.profile, "Also time each op on its own");
  run_cmd->add_flag("--autotune", run.autotune,
                    "Time the top cuBLASLt candidates of each GEMM and keep the fastest that passes the check");
  run_cmd->add_option("--autotune-top", run.autotune_top, "How many candidates --autotune times (default 16)")
      ->check(gexec::cli::integer_in(1, 1000));
  run_cmd->add_option("--tuning-cache", run.tuning_cache,
                      "Save the tuned choices to this file and reload them (same device and versions only)")
      ->check(gexec::cli::non_empty_path());
  run_cmd->add_option("--pad", run.pad,
                      "Copy GEMM operands with misaligned rows into 16-byte-aligned buffers: auto (by a cost "
                      "estimate), never or always")
      ->check(CLI::IsMember({"auto", "never", "always"}));
  run_cmd->add_flag("--force", run.force,
                    "Let an output overwrite one of the run's inputs (the graph, an init.file, a --load-inputs file, "
                    "a file --tuning-cache names that is not a tuning cache)");
  double peak = 0;
  auto* peak_opt = run_cmd->add_option("--peak-tflops", peak, "The device's peak for '% of peak' (default: measured once, cached)")
      ->check(gexec::cli::number_in(0, 1e9, true));

  std::vector<std::string> files;
  auto* validate_cmd = app.add_subcommand("validate", "Check graph files and report every problem");
  validate_cmd->add_option("files", files, "Graph files")->required();

  auto* kernels_cmd = app.add_subcommand("kernels", "Print the kernel table");

  gexec::CheckOptions check;
  std::string check_seed;
  double check_atol = 0, check_rtol = 0;
  auto* check_cmd = app.add_subcommand("check", "Check outputs from .npy files against the reference of a graph");
  check_cmd->add_option("graph", check.graph_path, "Graph file (JSON)")->required();
  check_cmd->add_option("--inputs", check.inputs_dir, "Folder with <name>.npy for every graph input")->required();
  check_cmd->add_option("--outputs", check.outputs_dir, "Folder with <name>.npy for every graph output")->required();
  check_cmd->add_option("--verify", check.verify,
                        "full (the default), auto (full within --verify-budget, else sampled by strata), sample or "
                        "exact (bit equality)")
      ->check(CLI::IsMember(gexec::check_verify_modes()));
  check_cmd->add_option("--verify-budget", check.verify_budget,
                        "Seconds of CPU reference --verify auto allows before it samples (default 5)")
      ->check(gexec::cli::number_in(0, 1e9));
  check_cmd->add_option("--backend", check.backend,
                        "Where the reference's products are summed: auto (a CUDA device where there is one, in "
                        "float64, cross-checked on the CPU), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  check_cmd->add_option("--device", check.device, "CUDA device ordinal")->check(gexec::cli::integer_in(0, 1023));
  check_cmd->add_option("--samples", check.samples, "Output elements a sampled check compares (default 4096)")
      ->check(gexec::cli::integer_in(gexec::kMinCheckSamples, uint64_t(std::numeric_limits<int64_t>::max())));
  auto* check_seed_opt = check_cmd->add_option("--seed", check_seed, "Seed choosing the sampled elements")
                             ->check(gexec::cli::integer_in(0, std::numeric_limits<uint64_t>::max()));
  auto* check_atol_opt = check_cmd->add_option("--atol", check_atol, "Absolute allowance near zero")
                             ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
  auto* check_rtol_opt = check_cmd->add_option("--rtol", check_rtol, "Extra allowance times each element's scale")
                             ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
  check_cmd->add_option("--precision", check.precision, "The products' arithmetic: f32, or tf32 (f32 operands rounded to TF32)")
      ->check(CLI::IsMember({"f32", "tf32"}));
  check_cmd->add_option("--report", check.report_path, "Write a JSON report of the check to this file ('-': stdout)")
      ->check(gexec::cli::non_empty_path());
  check_cmd->add_flag("--force", check.force,
                      "Let --report overwrite one of the check's inputs (the graph, an init.file, an --inputs or "
                      "--outputs file)");

  gexec::GemmOptions gemm;
  auto* gemm_cmd = app.add_subcommand("gemm", "Profile GEMM + epilogue over a sweep of shapes and types, each point checked");
  gemm_cmd->add_option("--m", gemm.sweep.m, "M: a value, a list a,b,c or a range start:end:step");
  gemm_cmd->add_option("--n", gemm.sweep.n, "N: as --m");
  gemm_cmd->add_option("--k", gemm.sweep.k, "K: as --m");
  gemm_cmd->add_option("--shapes", gemm.sweep.shapes, "Instead of --m --n --k: shapes MxNxK,...");
  gemm_cmd->add_option("--cube", gemm.sweep.cube, "Instead of --m --n --k: M = N = K, sizes as --m");
  gemm_cmd->add_option("--batch", gemm.sweep.batch, "Batch count(s), as --m (default 1)");
  gemm_cmd->add_option("--dtype", gemm.sweep.dtype, "Input dtype(s) of A and B: f16, bf16, f32, f8e4m3 (a list; default f16)");
  gemm_cmd->add_option("--out-dtype", gemm.sweep.out_dtype, "Output dtype (default: the input's; bf16 for f8e4m3)");
  gemm_cmd->add_option("--bias", gemm.sweep.bias, "Bias: none, f16, bf16 or f32 (a list; default none)");
  gemm_cmd->add_option("--act", gemm.sweep.act, "Activation(s): none, relu, gelu (a list; default none)");
  gemm_cmd->add_option("--trans", gemm.sweep.trans, "Transposes of A and B: nn, nt, tn, tt (a list; default nn)");
  gemm_cmd->add_option("--alpha", gemm.sweep.alpha, "Scale of the product (default 1)")
      ->check(gexec::cli::finite_number());
  gemm_cmd->add_flag("--fast-accum", gemm.sweep.fast_accum, "FP8 fast accumulation on the f8e4m3 points");
  gemm_cmd->add_option("--backend", gemm.run.backend, "auto, cuda or cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  gemm_cmd->add_option("--device", gemm.run.device, "CUDA device ordinal")->check(gexec::cli::integer_in(0, 1023));
  auto* gemm_seed = gemm_cmd->add_option("--seed", seed, "Seed for the inputs (default 0)")
                        ->check(gexec::cli::integer_in(0, std::numeric_limits<uint64_t>::max()));
  gemm_cmd->add_option("--pad", gemm.run.pad, "Pad misaligned GEMM operands: auto, never or always")
      ->check(CLI::IsMember({"auto", "never", "always"}));
  gemm_cmd->add_option("--verify", gemm.run.verify, "auto, full, sample, exact or none (as for run)")
      ->check(CLI::IsMember(gexec::run_verify_modes()));
  gemm_cmd->add_option("--verify-budget", gemm.run.verify_budget, "As for run (default 5)")
      ->check(gexec::cli::number_in(0, 1e9));
  auto* gemm_atol = gemm_cmd->add_option("--atol", atol, "Absolute tolerance (default per output dtype)")
                        ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
  auto* gemm_rtol = gemm_cmd->add_option("--rtol", rtol, "Relative tolerance (default per output dtype)")
                        ->check(gexec::cli::number_in(0, gexec::kMaxAllowance));
  auto* gemm_iters = gemm_cmd->add_option("--iters", gemm.run.timing.iters, "Timed iterations per point (default 100, at most 10^7)")
                         ->check(gexec::cli::integer_in(1, 10000000));
  gemm_cmd->add_option("--warmup", gemm.run.timing.warmup_iters, "Untimed iterations first (default 10)")
      ->check(gexec::cli::integer_in(0, 10000000));
  gemm_cmd->add_option("--warmup-ms", gemm.run.timing.warmup_ms, "Also warm up for this many milliseconds")
      ->check(gexec::cli::number_in(0, 3600000));
  gemm_cmd->add_option("--duration", gemm.run.timing.duration_s, "Keep timing until S seconds of samples per point")
      ->check(gexec::cli::number_in(0, 86400));
  bool gemm_no_graph = false;
  gemm_cmd->add_flag("--no-cuda-graph", gemm_no_graph, "Time direct launches instead of a graph replay");
  gemm_cmd->add_flag("--cold-l2", gemm.cold_l2, "Time on rotating operand sets (128 MB in all): a cold L2 cache");
  gemm_cmd->add_option("--rotating", gemm.rotating_mb, "Rotating operand sets of this many MB in all (implies cold L2)")
      ->check(gexec::cli::number_in(0, 1048576, true));
  gemm_cmd->add_option("--percentile", gemm.percentiles, "Percentiles for the table (default 50,90,99)");
  gemm_cmd->add_flag("--autotune", gemm.run.autotune, "Tune each point's cuBLASLt candidates first");
  gemm_cmd->add_option("--autotune-top", gemm.run.autotune_top, "Candidates --autotune times (default 16)")
      ->check(gexec::cli::integer_in(1, 1000));
  int gemm_algo = 0;
  auto* gemm_algo_opt = gemm_cmd->add_option("--algo", gemm_algo, "Run cuBLASLt candidate N (the table's algo index)")
                            ->check(gexec::cli::integer_in(0, 1000000));
  auto* gemm_peak = gemm_cmd->add_option("--peak-tflops", peak, "The device's peak for '% of peak'")
                        ->check(gexec::cli::number_in(0, 1e9, true));
  gemm_cmd->add_option("--csv", gemm.csv_path, "Write the rows as CSV to this file")
      ->check(gexec::cli::non_empty_path());
  gemm_cmd->add_flag("--append", gemm.append, "Append to the --csv file (same columns) instead of replacing it");
  gemm_cmd->add_option("--tags", gemm.tags, "Extra CSV columns: key:value,...");
  gemm_cmd->add_option("--json", gemm.json_path, "Write the points, options and environment as JSON ('-': stdout)")
      ->check(gexec::cli::non_empty_path());
  gemm_cmd->add_option("--dump", gemm.run.dump_dir, "Write the inputs and output as .npy here (each point overwrites the last)")
      ->check(gexec::cli::non_empty_path());
  gemm_cmd->add_option("--export-times", gemm.export_times, "Write every timed sample as CSV to this file")
      ->check(gexec::cli::non_empty_path());

  gexec::CompareOptions compare;
  auto* compare_cmd = app.add_subcommand("compare", "Compare two gemm --json or run --report files, point by point");
  compare_cmd->add_option("base", compare.base, "The baseline results")->required();
  compare_cmd->add_option("new", compare.next, "The results to judge")->required();
  compare_cmd->add_option("--threshold", compare.threshold,
                          "Slower by more than this fraction (and than the noise) is a regression (default 0.05)")
      ->check(gexec::cli::number_in(0, 1e9));

  // -v and -q work after the subcommand too.
  for (CLI::App* sub : {run_cmd, validate_cmd, kernels_cmd, check_cmd, gemm_cmd, compare_cmd}) {
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
  run.command_line = gemm.run.command_line = command_line;
  run.timing.count_iterations = gemm.run.timing.count_iterations = true;

  gexec::Exit status = gexec::Exit::ok;
  // The library turns errors into values; what escapes (std::bad_alloc above all) still ends
  // as exit 3 with a message, not an abort.
  try {
    if (*run_cmd) {
      if (seed_opt->count()) run.seed = std::stoull(seed);  // checked above: digits, in range
      if (arch_opt->count()) run.arch = arch;
      if (atol_opt->count()) run.atol = atol;
      if (rtol_opt->count()) run.rtol = rtol;
      if (peak_opt->count()) run.peak_tflops = peak;
      run.timing.cuda_graph = !no_graph;
      status = gexec::run_command(run, std::cout, std::cerr);
    } else if (*validate_cmd) {
      status = gexec::validate_command(files, std::cout, std::cerr);
    } else if (*check_cmd) {
      if (check_seed_opt->count()) check.seed = std::stoull(check_seed);  // checked above
      if (check_atol_opt->count()) check.atol = check_atol;
      if (check_rtol_opt->count()) check.rtol = check_rtol;
      status = gexec::check_command(check, std::cout, std::cerr);
    } else if (*gemm_cmd) {
      if (gemm_seed->count()) gemm.run.seed = std::stoull(seed);  // checked above
      if (gemm_peak->count()) gemm.run.peak_tflops = peak;
      if (gemm_atol->count()) gemm.run.atol = atol;
      if (gemm_rtol->count()) gemm.run.rtol = rtol;
      if (gemm_algo_opt->count()) gemm.run.algo = gemm_algo;
      if (!gemm_iters->count()) gemm.run.timing.iters = 100;
      gemm.run.timing.cuda_graph = !gemm_no_graph;
      gemm.progress = !quiet;
      status = gexec::gemm_command(gemm, std::cout, std::cerr);
    } else if (*compare_cmd) {
      status = gexec::compare_command(compare, std::cout, std::cerr);
    } else if (*kernels_cmd) {
      status = gexec::kernels_command(std::cout);
    }
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
