// What the selector and planner need to know of a device: detected, or named with --arch; and
// the refusal of a graph too large for its memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec {

struct DeviceCaps {
  std::string name;               // e.g. "NVIDIA H200", or "sm_90 (assumed)"
  int cc = 90;                    // compute capability as major * 10 + minor; 0 for the CPU
  int64_t total_bytes = 0;        // 0 when not known (dry-run)
  int64_t free_bytes = 0;
  int sm_count = 0;
  std::string cuda_runtime;       // e.g. "13.0"
  std::string cublaslt;           // e.g. "13.0.0"
  bool detected = false;          // false when assumed from --arch
};

// "sm_90" -> cc 90; bad_input naming the forms allowed otherwise.
Result<DeviceCaps> caps_for_arch(std::string_view arch);

// One line: name, compute capability, memory, SMs, versions.
std::string describe(const DeviceCaps& caps);

// The refusal of `bytes` of memory on `device`, which has `free_bytes` of `total_bytes` free: one
// message whether the run's check before planning or the arena's own check gives it.
Error device_memory_short(const std::string& device, int64_t bytes, int64_t free_bytes, int64_t total_bytes);

}  // namespace gexec
