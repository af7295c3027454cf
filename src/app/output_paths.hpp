// The up-front checks of a run's files: every output can be written, and none is an input.
#pragma once

#include "gexec/app/commands.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// Checked before anything runs, so that a run never ends with "result: pass" and then fails to
// write: every output path (--report, --emit-graph, the --dump files, a --tuning-cache that
// tuning may write) must name a regular file or nothing, in an existing folder this process
// may write (the --dump folder is created here when missing); no two outputs may be the same file; and no
// output may be one of the run's inputs (the graph, its init.file arrays, the --load-inputs
// files, a --tuning-cache file that is not a gexec tuning cache) unless opts.force. bad_input
// (exit 2) otherwise, naming the option, the path and why.
// On a refusal *refused names the option whose path was refused ("--report", "--dump", ...),
// so that the command does not then write that file anyway (an error report over the graph).
Status check_run_paths(const RunOptions& opts, const Graph& original, std::string* refused);

}  // namespace gexec
