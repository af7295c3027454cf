// Choosing the backend and device a run uses: detected, named, or assumed for a dry-run.
#pragma once

#include <memory>
#include <string>

#include "gexec/app/commands.hpp"
#include "gexec/exec/device.hpp"

namespace gexec {

struct Target {
  Backend backend = Backend::cuda;
  DeviceCaps caps;
  std::unique_ptr<Device> device;  // null in a dry-run
  std::string notice;              // e.g. why auto chose the CPU
};

Result<Target> choose_target(const RunOptions& opts);

}  // namespace gexec
