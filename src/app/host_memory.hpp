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
  // Address space OpenBLAS maps for its work buffers when the CPU backend runs a product (one per
  // thread, mostly never touched): counted against an address-space limit only. OpenBLAS does
  // not fail when it cannot map one; it retries forever (0.3.21), so this must be known first.
  int64_t blas_address_space = 0;
  int64_t total() const;   // saturating sum of the memory (all but blas_address_space)
};

// What `gexec run` will hold on the host for `original` (the graph as loaded, which the
// reference runs) executed as `plan` on `backend`, with these options.
HostEstimate estimate_host_memory(const RunOptions& opts, const Graph& original, const std::string& check_mode,
                                  const BufferPlan& plan, Backend backend);

// Bytes this process may still allocate: the available memory (MemAvailable), less where an
// address-space or data-size limit (ulimit -v, -d) is lower; `why` names which bound it is. With
// `address_space_only` extra bytes that only the address-space limit counts.
int64_t host_bytes_free(std::string* why, int64_t address_space_only = 0);

// The address space OpenBLAS maps per thread that works on a product, and its thread count (1
// without the CPU backend).
int64_t openblas_buffer_bytes();
int openblas_thread_count();

// runtime_error (exit 3) naming both figures when the estimate exceeds what is free.
Status check_host_memory(const HostEstimate& need);

}  // namespace gexec
