// The host memory a run needs, estimated before it starts, against what the process may use.
#pragma once

#include <cstdint>
#include <string>

#include "gexec/app/commands.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "gexec/exec/device.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct HostEstimate {
  int64_t inputs = 0;      // --load-inputs arrays and the reference's copies of the inputs
  int64_t outputs = 0;     // the outputs read back
  int64_t reference = 0;   // the reference's values and scales at their peak
  int64_t dump = 0;        // the largest conversion buffer of --dump
  int64_t timing = 0;      // per-iteration samples
  int64_t arena = 0;       // the arena itself, when the device is the CPU
  int64_t total() const;   // saturating sum
};

// What `gexec run` will hold on the host for `original` (the graph as loaded, which the
// reference runs) executed as `plan` on `backend`, with these options.
HostEstimate estimate_host_memory(const RunOptions& opts, const Graph& original, const std::string& check_mode,
                                  const BufferPlan& plan, Backend backend);

// Bytes this process may still allocate: the available memory (MemAvailable), less where an
// address-space or data-size limit (ulimit -v, -d) is lower; `why` names which bound it is.
int64_t host_bytes_free(std::string* why);

// runtime_error (exit 3) naming both figures when the estimate exceeds what is free.
Status check_host_memory(const HostEstimate& need);

}  // namespace gexec
