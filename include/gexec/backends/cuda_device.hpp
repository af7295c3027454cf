// Opening the CUDA backend. Declared without CUDA headers so that callers need none.
#pragma once

#include <memory>
#include <string>

#include "gexec/exec/device.hpp"

namespace gexec {

// The number of CUDA devices visible; 0 when there is no driver or no device. `why` (if given)
// receives the driver's reason when there are none.
int cuda_device_count(std::string* why = nullptr);

// Opens device `ordinal`: stream, cuBLASLt handle, capabilities. Runtime error otherwise.
Result<std::unique_ptr<Device>> open_cuda_device(int ordinal);

// The capabilities of a device without opening a stream (for dry-runs on a GPU machine).
Result<DeviceCaps> detect_cuda_caps(int ordinal);

}  // namespace gexec
