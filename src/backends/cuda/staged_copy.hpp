// Large copies between pageable host memory (std::vector's) and the device, through two
// page-locked buffers: the driver's own pageable copies ran at 3 to 8 GB/s on the H200's host
// (an 8192^3 f32 check spent ~230 ms reading its three 256 MiB tensors back), a copy from
// page-locked memory runs at the link's speed, and each chunk's host-side copy, spread over
// threads, overlaps the next chunk's transfer. Small copies go straight through the driver.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>

#include "gexec/status.hpp"
#include "raii.hpp"

namespace gexec::cuda {

class StagedCopy {
 public:
  // Device to host, and host to device; each returns once the copy is complete (it synchronises
  // `stream`). The buffers are allocated on the first large copy; where that fails, the copy goes
  // through the driver as before.
  Status to_host(void* dst, const void* src, size_t bytes, cudaStream_t stream);
  Status to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream);

  static constexpr size_t kChunk = size_t(32) << 20;  // per buffer
  static constexpr size_t kDirect = size_t(16) << 20;  // smaller copies: the driver's own

 private:
  bool ready();
  // The driver's own copy, synchronised: small copies, and where the buffers could not be had.
  static Status direct(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
  std::mutex mu_;  // one large copy at a time: the buffers are shared (a device may serve several threads)
  PinnedHost buf_[2];
  Event done_[2];  // the transfer out of / into buf_[i] has finished
  bool tried_ = false;
};

}  // namespace gexec::cuda
