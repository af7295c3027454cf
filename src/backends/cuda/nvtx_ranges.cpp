// The trace hooks (exec/trace.hpp) as NVTX 3 push/pop ranges: header-only, nothing to link; the
// calls do nothing until a tool (nsys, ncu --nvtx) injects itself.
#include <nvtx3/nvToolsExt.h>

#include "gexec/backends/cuda_device.hpp"
#include "gexec/exec/trace.hpp"

namespace gexec {

void enable_nvtx_ranges() {
  set_trace_hooks({[](const char* name) { nvtxRangePushA(name); }, [] { nvtxRangePop(); }});
}

}  // namespace gexec
