// Opening the CUDA backend. Declared without CUDA headers so that callers need none.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/exec/device.hpp"
#include "gexec/verify/product_engine.hpp"

namespace gexec {

// The number of CUDA devices visible; 0 when there is no driver or no device. `why` (if given)
// receives the driver's reason when there are none.
int cuda_device_count(std::string* why = nullptr);

// The versions `gexec --version` reports, read without a device: each is "none (reason)" when it
// cannot be read (no driver, for instance), never an error.
struct CudaVersions {
  std::string runtime;    // e.g. "13.0"
  std::string driver;     // the newest CUDA version the driver supports, e.g. "13.0"
  std::string cublaslt;   // e.g. "13.1.0"
  int devices = 0;
  std::string no_device;  // why there is none, when devices == 0
};
CudaVersions read_cuda_versions();

// Opens device `ordinal`: stream, cuBLASLt handle, capabilities. Runtime error otherwise.
Result<std::unique_ptr<Device>> open_cuda_device(int ordinal);

// The capabilities of a device without opening a stream (for dry-runs on a GPU machine).
Result<DeviceCaps> detect_cuda_caps(int ordinal);

// The float64 reference engine of device `ordinal` (verify/product_engine.hpp): the reference's
// products summed by cuBLASLt in FP64 on the device, the operands widened there. It plans its
// memory per product (ProductEngine::prepare, with the figures when it does not fit) and frees it
// after each; a stream and a cuBLASLt handle of its own. `panel_bytes` > 0 caps the panels of C
// (the rows summed at once) below what memory allows: the tests' way to walk many panels.
Result<std::unique_ptr<ProductEngine>> open_cuda_product_engine(int ordinal, int64_t panel_bytes = 0);

// The NCCL communicator of a sharded run on the devices `ordinals`, rank r on ordinals[r]
// (ncclCommInitAll: one process drives them all); each device joins it with Device::join. A
// runtime error where NCCL fails, or where gexec was built without NCCL (it says so).
Result<std::shared_ptr<Communicator>> open_nccl_communicator(const std::vector<int>& ordinals);
// Whether this build has NCCL ("NCCL 2.28.3"), or why not.
std::string nccl_build_info();
// From now on the ranges of exec/trace.hpp (the run's phases, each op) are NVTX 3 ranges, which a
// profiler attached to the process records (docs/profiling.md).
void enable_nvtx_ranges();

// A test aid: the faults the backend pretends to meet (src/backends/cuda/fault.hpp), in the
// syntax of GEXEC_FAULT; empty turns them off. bad_input for a bad spec, which changes nothing.
Status configure_cuda_faults(std::string_view spec);

}  // namespace gexec
