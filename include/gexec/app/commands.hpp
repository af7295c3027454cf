// The library behind the command line: each subcommand as one call that prints its results
// and returns the exit status. main() only parses flags and calls these.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gexec/app/prepared_run.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct RunOptions {
  std::string graph_path;
  std::optional<uint64_t> seed;      // overrides the graph's seed; default 0
  bool dry_run = false;
  std::optional<std::string> arch;   // stands in for the device in a dry-run; default: detected, else sm_90
  int device = 0;
  std::string backend = "auto";      // auto, cuda or cpu
  std::optional<double> atol, rtol;  // override the per-dtype defaults
  std::string passes = "default";    // "default", "none" or a comma-separated list
  bool print_after_all = false;
  std::string print_after;
  std::string emit_graph;            // write the graph after the passes here
  std::string emit_gemms;            // write every product's `gexec gemm` line here (gemm_replay.hpp)
  std::string residual_costs;        // measured residual costs for fuse_residual (PipelineOptions)
  TimingOptions timing;              // timing.iters > 0 times the run
  std::optional<double> peak_tflops; // the device's peak for "% of peak"; default: measured once and cached
  std::string dump_dir;              // write every graph input and output as .npy here
  std::string verify = "auto";       // full, sample, exact, none, or auto (check.hpp's plan_check)
  double verify_budget = kDefaultVerifyBudget;  // --verify-budget: seconds of CPU reference auto allows before it samples
  int64_t samples = 4096;            // output elements a sampled check compares at least, per output
  std::string report_path;           // write the JSON report (docs/report-schema.md) here
  std::string load_inputs_dir;       // replace graph inputs by DIR/<name>.npy where present
  bool autotune = false;             // time the top cuBLASLt candidates per GEMM, keep the fastest that passes
  int autotune_top = 16;             // how many candidates --autotune times
  std::string tuning_cache;          // save and reload the tuned choices in this file
  std::string pad = "auto";          // --pad: auto, never or always (parse_pad_policy)
  std::string precision = "tf32";    // --precision: f32 products on CUDA through TF32 (tf32) or in full f32 (f32)
  std::string algo_space = "heuristic";  // --algo-space heuristic|all: KernelOptions::algo_space_all
  std::vector<std::string> kernels;  // --kernel OP=NAME (repeatable; NAME alone: every op): KernelOptions::forced
  // A graph built in memory (gexec gemm): run instead of reading graph_path, which then only
  // names it in the report.
  std::shared_ptr<const Graph> graph;
  std::optional<int> algo;           // --algo N: every GEMM runs its N-th cuBLASLt candidate
  std::string command_line;          // the command as typed, for the JSON report
  bool force = false;                // allow outputs to overwrite the run's own inputs (output_paths.hpp)
  bool timing_progress = false;      // a progress line for the timing on a terminal (gexec run; not each gemm point)
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE: an ONNX model's open dimensions
  std::string expect_dir;            // --expect DIR: compare each output with DIR/<name>.npy or output_N.pb
  std::optional<double> expect_atol, expect_rtol;  // override --expect's per-dtype tolerance (expect.hpp)
  int tp = 0;                        // --tp N: shard over N ranks (docs/distributed.md); 0: not sharded
  std::vector<int> devices;          // --devices: the CUDA device of each rank; default 0 .. N-1
  std::string tp_reduce = "all-reduce";  // --tp-reduce all-reduce|reduce-scatter
  // A library caller's communicator for --tp (the tests' broken ones), in place of the backend's own.
  std::shared_ptr<Communicator> communicator;
};

// `gexec run`: run_graph, its report printed on `out` as the run goes, the error once on `err`,
// and with --report the JSON written. Returns the report's exit status.
Exit run_command(const RunOptions& opts, std::ostream& out, std::ostream& err);

// --cold-l2 and --rotating MB (run and gemm) as TimingOptions::rotate_bytes: MB where given, else
// with --cold-l2 the default rotation (twice the H200's L2), else 0 (warm).
int64_t rotation_bytes(bool cold_l2, double rotating_mb);

// `gexec check GRAPH --inputs DIR --outputs DIR`: outputs produced by anyone, checked against
// gexec's reference of the graph with the rules and report of `run`.
struct CheckOptions {
  std::string graph_path;
  std::string inputs_dir, outputs_dir;  // DIR/<tensor name>.npy for every graph input and output
  std::string verify = "full";          // full, auto, sample or exact (check.hpp's plan_check)
  double verify_budget = kDefaultVerifyBudget;  // --verify-budget, for auto
  int64_t samples = 4096;
  std::string backend = "auto";         // where the reference's products run: auto (a CUDA device where
                                        // there is one), cuda or cpu
  int device = 0;                       // the CUDA device
  std::optional<uint64_t> seed;         // chooses the sampled elements; default the graph's, else 0
  std::optional<double> atol, rtol;
  std::string precision = "f32";        // the products' arithmetic: f32, or tf32 (f32 operands rounded to TF32)
  std::string report_path;              // "-": the JSON on stdout, the text on stderr
  bool force = false;                   // let --report overwrite one of the check's inputs (output_paths.hpp)
  std::map<std::string, int64_t> dims;  // --dim NAME=VALUE: an ONNX model's open dimensions (else from --inputs)
};

// Exit 0 when every output passes, 1 when one fails, 2 for a bad graph or bad files.
Exit check_command(const CheckOptions& opts, std::ostream& out, std::ostream& err);

// `gexec validate FILE...`: "FILE: ok (N tensors, M ops)" on out, problems on err. Graph files
// and ONNX models alike; `dims` sizes an ONNX model's open dimensions.
Exit validate_command(const std::vector<std::string>& files, std::ostream& out, std::ostream& err,
                      const std::map<std::string, int64_t>& dims = {});

// `gexec import MODEL.onnx -o GRAPH.json [--weights DIR]`: the model as a graph file, each
// initializer as DIR/<tensor>.npy (default: GRAPH.json's folder) referenced by init.file.
struct ImportOptions {
  std::string model_path, graph_path, weights_dir;
  std::map<std::string, int64_t> dims;
  bool force = false;  // let an output overwrite one of the model's own files
};
Exit import_command(const ImportOptions& opts, std::ostream& out, std::ostream& err);

// A test aid for the binary's entry point: installs the CUDA backend's fault injection
// (src/backends/cuda/fault.hpp) from `spec`, the value of GEXEC_FAULT. Nothing else reads that
// variable. A bad spec is a bad_input error and injects nothing; without the CUDA backend, a no-op.
Status install_test_faults(const std::string& spec);

// `gexec kernels`: the kernel table.
Exit kernels_command(std::ostream& out);

}  // namespace gexec
