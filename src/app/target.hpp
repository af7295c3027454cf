// Choosing the backend and device a run uses: detected, named, or assumed for a dry-run.
#pragma once

#include <memory>
#include <string>

#include "gexec/app/commands.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/exec/device.hpp"
#include "gexec/verify/product_engine.hpp"

namespace gexec {

struct Target {
  Backend backend = Backend::cuda;
  DeviceCaps caps;
  std::unique_ptr<Device> device;  // null in a dry-run
  std::string notice;              // e.g. why auto chose the CPU
};

// The backend and device `opts` asks for (opts.backend, device, dry_run, arch).
Result<Target> choose_target(const PrepareOptions& opts);

// The run's trace ranges (exec/trace.hpp) as NVTX ranges where the build has the CUDA backend;
// else nothing. Called by every run before its first range; idempotent.
void enable_tracing();

// The float64 reference engine of CUDA device `ordinal`, where the build has the CUDA backend.
Result<std::unique_ptr<ProductEngine>> open_device_reference(int ordinal);

// Where `gexec check --backend B` sums the reference's products: cpu none (null); cuda device
// `ordinal`'s engine, or the error; auto that engine where there is a CUDA device (a note in
// *note and null where it cannot be opened), else null.
Result<std::unique_ptr<ProductEngine>> open_reference_engine(BackendChoice backend, int ordinal,
                                                             std::string* note);

}  // namespace gexec
