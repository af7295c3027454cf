// Move-only owners of CUDA and cuBLASLt handles and device memory, with checked creation and
// typed attribute setters.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "check.hpp"
#include "fault.hpp"

namespace gexec::cuda {

// Owns one handle and destroys it once. A failure to destroy is ignored: a destructor has no
// one to report it to, and the next checked call on the device reports a broken context.
template <class H, auto Destroy>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H h) : h_(h) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }
  void reset() {
    if (h_ != H{}) (void)Destroy(h_);
    h_ = H{};
  }

 private:
  H h_{};
};

using Stream = Handle<cudaStream_t, &cudaStreamDestroy>;
using Event = Handle<cudaEvent_t, &cudaEventDestroy>;
using LtHandle = Handle<cublasLtHandle_t, &cublasLtDestroy>;
using MatmulDesc = Handle<cublasLtMatmulDesc_t, &cublasLtMatmulDescDestroy>;
using MatrixLayout = Handle<cublasLtMatrixLayout_t, &cublasLtMatrixLayoutDestroy>;
using MatmulPreference = Handle<cublasLtMatmulPreference_t, &cublasLtMatmulPreferenceDestroy>;
using PinnedHost = Handle<void*, &cudaFreeHost>;  // page-locked host memory from cudaMallocHost

// Device memory from cudaMalloc.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  ~DeviceMemory() { reset(); }
  DeviceMemory(DeviceMemory&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // At least one byte, so that every allocation has an address.
  static Result<DeviceMemory> allocate(size_t bytes) {
    DeviceMemory m;
    // A failure injected for tests (fault.hpp) is reported exactly like the driver's.
    const cudaError_t e = fault::fail_allocation() ? cudaErrorMemoryAllocation : cudaMalloc(&m.p_, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) {
      // Out of memory does not break the context, but it stays as the thread's last error, where
      // a later check (cudaGetLastError after a launch) would find it and blame the wrong call.
      (void)cudaGetLastError();
      return cuda_error(e, ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str(), __FILE__, __LINE__);
    }
    m.bytes_ = bytes;
    return m;
  }

  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }
  void reset() {
    if (p_) (void)cudaFree(p_);
    p_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// Non-blocking: the device's work must not serialise with the legacy default stream.
inline Result<Stream> make_stream() {
  cudaStream_t s = nullptr;
  GEXEC_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

inline Result<Event> make_event(unsigned flags = cudaEventDefault) {
  cudaEvent_t e = nullptr;
  GEXEC_CUDA_TRY(cudaEventCreateWithFlags(&e, flags));
  return Event(e);
}

inline Result<LtHandle> make_lt_handle() {
  cublasLtHandle_t h = nullptr;
  GEXEC_CUBLAS_TRY(cublasLtCreate(&h));
  return LtHandle(h);
}

inline Result<MatmulDesc> make_matmul_desc(cublasComputeType_t compute, cudaDataType_t scale) {
  cublasLtMatmulDesc_t d = nullptr;
  GEXEC_CUBLAS_TRY(cublasLtMatmulDescCreate(&d, compute, scale));
  return MatmulDesc(d);
}

inline Result<MatrixLayout> make_matrix_layout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  GEXEC_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  return MatrixLayout(l);
}

inline Result<MatmulPreference> make_preference() {
  cublasLtMatmulPreference_t p = nullptr;
  GEXEC_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&p));
  return MatmulPreference(p);
}

// A cuBLASLt setter's status: success, or the error naming the setter and the attribute.
inline Status attribute_status(cublasStatus_t s, const char* setter, int attr) {
  if (s != CUBLAS_STATUS_SUCCESS)
    return cublas_error(s, (std::string(setter) + "(attribute " + std::to_string(attr) + ")").c_str(), __FILE__,
                        __LINE__);
  return {};
}

// Typed setters: the value's C++ type must be the one the attribute's documentation names
// (int32_t, uint32_t, int64_t, uint64_t, a pointer), which is why each caller spells it out.
template <class T>
Status set_attribute(const MatmulDesc& d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  return attribute_status(cublasLtMatmulDescSetAttribute(d.get(), attr, &value, sizeof(T)),
                          "cublasLtMatmulDescSetAttribute", int(attr));
}

template <class T>
Status set_attribute(const MatrixLayout& l, cublasLtMatrixLayoutAttribute_t attr, const T& value) {
  return attribute_status(cublasLtMatrixLayoutSetAttribute(l.get(), attr, &value, sizeof(T)),
                          "cublasLtMatrixLayoutSetAttribute", int(attr));
}

template <class T>
Status set_attribute(const MatmulPreference& p, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
  return attribute_status(cublasLtMatmulPreferenceSetAttribute(p.get(), attr, &value, sizeof(T)),
                          "cublasLtMatmulPreferenceSetAttribute", int(attr));
}

}  // namespace gexec::cuda
