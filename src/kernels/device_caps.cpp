// Device capabilities assumed from --arch, their one-line description, and the out-of-memory refusal.
#include "gexec/kernels/device_caps.hpp"

#include <charconv>
#include <cstdio>

namespace gexec {

Result<DeviceCaps> caps_for_arch(std::string_view arch) {
  int cc = 0;
  std::string_view digits = arch.substr(arch.starts_with("sm_") ? 3 : arch.size());
  if (!digits.empty() && digits.back() == 'a') digits.remove_suffix(1);  // sm_90a: same selection as sm_90
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cc);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || cc < 10 || cc > 999)
    return bad_input("--arch: \"" + std::string(arch) + "\" is not a CUDA architecture; expected sm_XY such as sm_80 or sm_90");
  DeviceCaps caps;
  caps.name = std::string(arch) + " (assumed)";
  caps.cc = cc;
  return caps;
}

std::string describe(const DeviceCaps& caps) {
  if (caps.cc == 0 || !caps.detected) return caps.name;
  std::string s = caps.name + ", sm_" + std::to_string(caps.cc);
  if (caps.detected) {
    char mem[96];
    std::snprintf(mem, sizeof mem, ", %.1f GiB free of %.1f GiB, %d SMs", double(caps.free_bytes) / (1 << 30),
                  double(caps.total_bytes) / (1 << 30), caps.sm_count);
    s += mem;
    s += ", CUDA runtime " + caps.cuda_runtime + ", cuBLASLt " + caps.cublaslt;
  }
  return s;
}

Error device_memory_short(const std::string& device, int64_t bytes, int64_t free_bytes, int64_t total_bytes) {
  return runtime_error("the graph needs " + std::to_string(bytes) + " bytes of device memory, and " + device +
                       " has " + std::to_string(free_bytes) + " bytes free (of " + std::to_string(total_bytes) + ")");
}

}  // namespace gexec
