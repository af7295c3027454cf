// Timing runs on a CUDA stream: CUDA events around batches of back-to-back iterations, with
// the run captured once as a CUDA graph and replayed where it can be.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "gexec/exec/timing.hpp"
#include "gexec/status.hpp"
#include "raii.hpp"

namespace gexec::cuda {

using GraphExec = Handle<cudaGraphExec_t, &cudaGraphExecDestroy>;

// One run captured as an instantiated, uploaded graph; an empty GraphExec, with the reason in
// *why, when the run cannot be captured. Errors outside the capture itself are returned.
// Synchronises the stream before and after.
Result<GraphExec> capture_run(cudaStream_t stream, const std::function<Status()>& enqueue, std::string* why);

// Device::time_runs for CUDA: `enqueue` enqueues one run on `stream` without synchronising.
// Returns opts.iters samples in microseconds per iteration; *graph_used (if given) says
// whether a captured graph was replayed; opts.info (if given) receives the batch size.
Result<std::vector<double>> time_on_stream(cudaStream_t stream, const std::function<Status()>& enqueue,
                                           const TimingOptions& opts, bool* graph_used);

}  // namespace gexec::cuda
