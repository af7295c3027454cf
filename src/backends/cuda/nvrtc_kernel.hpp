// A kernel compiled at run time from CUDA source with NVRTC, for the current device's
// architecture, and loaded as a CUDA library (owned here: unloaded with the last user). The
// same source is compiled once per process and device architecture: a graph with many equal
// groups, or an executor made again for the same graph, pays the compile once.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "gexec/status.hpp"

namespace gexec::cuda {

// The text of activations.cuh, copied into the library at build time (cmake/embed_text.cmake):
// every compile receives it as the named header "activations.cuh", so that the generated kernels
// and the ones nvcc compiles share one formula per activation.
extern const char kActivationsCuh[];

// The cubin of `source` for compute capability major.minor; needs no device (the unit tests
// compile every generated kernel with it). The error holds NVRTC's log.
Result<std::vector<char>> nvrtc_compile(const std::string& source, int major, int minor);

class NvrtcKernel {
 public:
  // Compiles `source` for the current device and finds `entry` (an extern "C" __global__
  // function) in it.
  static Result<std::shared_ptr<const NvrtcKernel>> get(const std::string& source, const std::string& entry);
  ~NvrtcKernel();
  NvrtcKernel(const NvrtcKernel&) = delete;
  NvrtcKernel& operator=(const NvrtcKernel&) = delete;

  // Launches the kernel with one by-value parameter.
  Status launch(dim3 grid, dim3 block, const void* param, cudaStream_t stream) const;
  double compile_ms() const { return compile_ms_; }

 private:
  NvrtcKernel(cudaLibrary_t lib, cudaKernel_t k, double ms) : lib_(lib), kernel_(k), compile_ms_(ms) {}
  cudaLibrary_t lib_;
  cudaKernel_t kernel_;
  double compile_ms_;
};

}  // namespace gexec::cuda
