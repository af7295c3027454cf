// Timing runs on the host for the CPU backend, whose runs are synchronous.
#pragma once

#include <functional>
#include <vector>

#include "gexec/exec/timing.hpp"
#include "gexec/status.hpp"

namespace gexec::cpu {

// Device::time_runs for the CPU backend: `enqueue` runs the graph to completion. Same method
// as the CUDA timer (warm-up by count and by duration, batches of at least kMinSampleMicros)
// with the steady clock in place of events. Returns opts.iters samples in microseconds per
// iteration; opts.info (if given) receives the batch size.
Result<std::vector<double>> time_on_host(const std::function<Status()>& enqueue, const TimingOptions& opts);

}  // namespace gexec::cpu
