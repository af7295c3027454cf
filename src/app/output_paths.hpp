// The up-front checks of a run's files: every output can be written, and none is an input.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gexec/app/commands.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// Checked before anything runs, so that a run never ends with "result: pass" and then fails to
// write: every output path (--report, --emit-graph, the --dump files, a --tuning-cache that
// tuning may write) must pass the checks of check_output_files below (the --dump folder is
// created here when missing); no two outputs may be the same file; and no output may be one of
// the run's inputs (the graph, its init.file arrays, the --load-inputs
// files, a --tuning-cache file that is not a gexec tuning cache) unless opts.force. bad_input
// (exit 2) otherwise, naming the option, the path and why.
// On a refusal *refused names the option whose path was refused ("--report", "--dump", ...),
// so that the command does not then write that file anyway (an error report over the graph).
Status check_run_paths(const RunOptions& opts, const Graph& original, std::string* refused);

// The same checks for a command's own output files, given as (option, path) pairs ("-" is
// stdout and is skipped): each names, through its links, a regular file or nothing in a
// writable folder (or a FIFO, a character device or one of this process's descriptors, written
// in place), with no name in its path over NAME_MAX bytes; no two are the same file; and none
// is one of `inputs` (names such as "the graph file" and their paths) unless `force`. bad_input
// naming the option, the path and why.
Status check_output_files(const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::vector<std::pair<std::string, std::string>>& inputs = {}, bool force = false);

// Only the last of those checks: none of `outputs` is one of `inputs` unless `force`. For a
// check before the folders an output needs exist (`run --dump DIR --report DIR/r.json` makes DIR).
Status check_not_inputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::pair<std::string, std::string>>& inputs, bool force);

}  // namespace gexec
