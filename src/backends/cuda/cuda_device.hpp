// The CUDA device: one stream, one cuBLASLt handle, the arena, and the workspace its GEMMs share.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "gexec/backends/cuda_device.hpp"
#include "raii.hpp"
#include "staged_copy.hpp"

namespace gexec::cuda {

// The cuBLASLt workspace each GEMM may use; large enough for every heuristic choice measured.
constexpr size_t kGemmWorkspaceBytes = size_t(32) << 20;

class CudaDevice final : public Device {
 public:
  static Result<std::unique_ptr<CudaDevice>> open(int ordinal);
  ~CudaDevice() override;

  Backend backend() const override { return Backend::cuda; }
  const DeviceCaps& caps() const override { return caps_; }
  Result<void*> allocate_arena(int64_t bytes) override;
  Result<std::shared_ptr<void>> allocate_buffer(int64_t bytes) override;
  Status fill_input(const Tensor& t, void* dst, uint64_t seed) override;
  Status upload(void* dst, const void* src, size_t bytes) override;
  Status download(void* dst, const void* src, size_t bytes) override;
  Status poison(void* dst, size_t bytes) override;
  Result<std::unique_ptr<Kernel>> make_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                              const Binding& binding, const KernelOptions& options) override;
  Status synchronize() override;
  Result<std::vector<double>> time_runs(const std::function<Status()>& enqueue, const TimingOptions& opts,
                                        bool* graph_used) override;
  Result<double> peak_tflops() override;
  uintptr_t stream_handle() const override { return reinterpret_cast<uintptr_t>(stream_.get()); }
  Status wait_for_default_stream() override;
  Status default_stream_waits() override;
  Result<std::unique_ptr<Replay>> capture(const std::function<Status()>& enqueue, std::string* why) override;
  Status make_current() override;

  // For timing and the kernels. Kernels hold these, so they must be destroyed before the device.
  int ordinal() const { return ordinal_; }
  cudaStream_t stream() const { return stream_.get(); }
  cublasLtHandle_t cublaslt() const { return lt_.get(); }
  // The one cuBLASLt workspace, allocated on first use. All kernels run in order on the one
  // stream, so no two of them use it at the same time, and one serves them all.
  Result<void*> gemm_workspace();
  // The communication stream of a sharded run: collectives run there, beside the compute stream's
  // later ops, and the first reader of their results waits for them (Kernel::wait_for_results).
  // Created on first use.
  Result<cudaStream_t> comm_stream();

 private:
  CudaDevice() = default;

  int ordinal_ = 0;
  DeviceCaps caps_;
  // Declared before the stream and handle, so destroyed after them: memory outlives its users.
  std::vector<DeviceMemory> arenas_;
  DeviceMemory workspace_;
  Stream stream_;
  Stream comm_stream_;
  StagedCopy staged_;  // large uploads and read-backs
  LtHandle lt_;
  Event from_default_, to_default_;  // the cross-stream orderings, created on first use
};

}  // namespace gexec::cuda
