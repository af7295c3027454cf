// Named ranges of the host's timeline for outside profilers (Nsight Systems, Nsight Compute's
// --nvtx): the phases of a run and each op's launch. The CUDA backend supplies NVTX 3
// (enable_nvtx_ranges in backends/cuda_device.hpp); without it a range costs a null check.
#pragma once

#include <string>

namespace gexec {

struct TraceHooks {
  void (*push)(const char* name) = nullptr;
  void (*pop)() = nullptr;
};
// Installs the hooks every later range calls (set once, before the ranges, by the app).
void set_trace_hooks(TraceHooks hooks);

// A range from construction to destruction, nested as the objects are.
class TraceRange {
 public:
  explicit TraceRange(const char* name);
  explicit TraceRange(const std::string& name) : TraceRange(name.c_str()) {}
  ~TraceRange();
  TraceRange(const TraceRange&) = delete;
  TraceRange& operator=(const TraceRange&) = delete;

 private:
  void (*pop_)() = nullptr;  // the hook that was there when it opened
};

}  // namespace gexec
