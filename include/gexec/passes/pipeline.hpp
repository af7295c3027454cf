// The pass manager: runs named Graph -> Graph passes, verifies after each, prints and times them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct PipelineOptions {
  std::vector<std::string> passes;  // names; empty runs none
  bool print_after_all = false;
  std::string print_after;          // a pass name, or empty
  // A table of measured residual costs that fuse_residual consults (src/passes/residual_cost.hpp,
  // written by scripts/bench_blocks.py --residual-costs); empty: none.
  std::string residual_costs;
};

// The measured residual costs fuse_residual consults (src/passes/residual_cost.hpp).
struct ResidualCosts;

// What a pass reads and writes besides the graph, handed to it by the pass manager (as MLIR's
// pass options and TVM's PassContext): the pipeline's options, the cost model, and the sink of
// the decisions it explains. Nothing travels through globals, so that two pipelines may run at
// once (two Python executors on two threads) without seeing each other's notes or tables.
struct PassContext {
  const PipelineOptions* options = nullptr;
  const ResidualCosts* residual_costs = nullptr;  // null: nothing measured (fusing is assumed to pay)
  std::vector<std::string>* notes = nullptr;      // null: notes are dropped

  // A decision the pass explains (why it fused, converted, or did not): the pass's PassRecord.
  void note(std::string text) const {
    if (notes) notes->push_back(std::move(text));
  }
};

struct Pass {
  std::string name;     // e.g. "fuse_elementwise"
  std::string summary;  // one line, for --help and reports
  Status (*run)(Graph&, const PassContext&);
};

// Every pass, in the default pipeline's order.
const std::vector<Pass>& all_passes();
std::vector<std::string> default_pipeline();

struct PassRecord {
  std::string name;
  double millis = 0;
  bool changed = false;
  std::vector<std::string> notes;  // the pass's explained decisions (PassContext::note)
};

// Runs the passes in order on g. A pass whose result fails verify() is a bug: runtime error
// naming the pass. Unknown pass names are bad_input listing the known ones.
Result<std::vector<PassRecord>> run_pipeline(Graph& g, const PipelineOptions& opts, std::ostream& print_to);

// The same over a given list of passes (run_pipeline looks its names up in all_passes());
// opts.passes is not read. Lets a test run a pass that is not in all_passes().
Result<std::vector<PassRecord>> run_passes(Graph& g, const std::vector<Pass>& passes,
                                           const PipelineOptions& opts, std::ostream& print_to);

// "canonicalize,fuse_elementwise" -> names; "none" -> empty; "default" -> default_pipeline().
Result<std::vector<std::string>> parse_pass_list(const std::string& spec);

}  // namespace gexec
