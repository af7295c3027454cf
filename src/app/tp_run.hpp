// gexec run --tp N (docs/distributed.md): the graph cut into N ranks' programs (shard_graph), each
// a PreparedRun on its own device, the devices joined in one communicator (NCCL on CUDA, host
// memory for the CPU ranks), stepped together op by op; the outputs of rank 0 checked against the
// reference of the unsharded graph, every other rank's compared with rank 0's; the step timed
// with its compute and its communication apart.
#pragma once

#include <functional>

#include "gexec/app/commands.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/app/run_report.hpp"

namespace gexec {

// Fills rep (its tp section, and the sections of a run: passes, device, kernels, buffers, check,
// timing) as run_graph does, telling `tell` after each; `base` are the run's prepared options;
// `times` receives the phases' times.
Status run_tensor_parallel(const RunOptions& opts, const ModelFile& model, const PrepareOptions& base, RunReport& rep,
                           PhaseTimes& times, const std::function<void()>& tell);

}  // namespace gexec
