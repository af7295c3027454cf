// The pass manager: runs named Graph -> Graph passes, verifies after each, prints and times them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct Pass {
  std::string name;     // e.g. "fuse_elementwise"
  std::string summary;  // one line, for --help and reports
  Status (*run)(Graph&);
};

// Every pass, in the default pipeline's order.
const std::vector<Pass>& all_passes();
std::vector<std::string> default_pipeline();

struct PipelineOptions {
  std::vector<std::string> passes;  // names; empty runs none
  bool print_after_all = false;
  std::string print_after;          // a pass name, or empty
  // A table of measured residual costs that fuse_residual consults (src/passes/residual_cost.hpp,
  // written by scripts/bench_blocks.py --residual-costs); empty: none.
  std::string residual_costs;
};

struct PassRecord {
  std::string name;
  double millis = 0;
  bool changed = false;
  std::vector<std::string> notes;  // the pass's explained decisions (passes.hpp, pass_note)
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
