// Turning CUDA and cuBLASLt return codes into gexec runtime errors that name the call and where.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "gexec/status.hpp"

namespace gexec::cuda {

// "cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation (out of memory) at cuda_device.cpp:120"
inline std::string where(const char* file, int line) {
  std::string f(file);
  const auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

inline Error cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  return runtime_error(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                       ") at " + where(file, line));
}

inline Error cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  return runtime_error(std::string(call) + " failed: " + cublasLtGetStatusName(s) + " (" +
                       cublasLtGetStatusString(s) + ") at " + where(file, line));
}

}  // namespace gexec::cuda

// Return the error from the enclosing function (returning Status or Result<T>) when the call fails.
#define GEXEC_CUDA_TRY(call)                                                                    \
  do {                                                                                          \
    const cudaError_t gexec_cuda_e_ = (call);                                                   \
    if (gexec_cuda_e_ != cudaSuccess) return ::gexec::cuda::cuda_error(gexec_cuda_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define GEXEC_CUBLAS_TRY(call)                                                                  \
  do {                                                                                          \
    const cublasStatus_t gexec_cublas_s_ = (call);                                              \
    if (gexec_cublas_s_ != CUBLAS_STATUS_SUCCESS)                                               \
      return ::gexec::cuda::cublas_error(gexec_cublas_s_, #call, __FILE__, __LINE__);           \
  } while (0)
