// Timing runs on a CUDA stream: CUDA events around batches of back-to-back iterations, with
// the run captured once as a CUDA graph and replayed where it can be.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "gexec/exec/timing.hpp"
#include "gexec/status.hpp"

namespace gexec::cuda {

// Device::time_runs for CUDA: `enqueue` enqueues one run on `stream` without synchronising.
// Returns opts.iters samples in microseconds per iteration; *graph_used (if given) says
// whether a captured graph was replayed; opts.info (if given) receives the batch size.
Result<std::vector<double>> time_on_stream(cudaStream_t stream, const std::function<Status()>& enqueue,
                                           const TimingOptions& opts, bool* graph_used);

}  // namespace gexec::cuda
