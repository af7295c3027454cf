// The DLPack ABI (dmlc/dlpack, v0.8, the unversioned "dltensor" capsule): the few structs that
// NumPy, CuPy and PyTorch exchange through __dlpack__. Written out here because the distribution
// ships no dlpack.h; the layout is fixed by the standard and must not change.
#pragma once

#include <cstdint>

namespace gexec::dlpack {

enum DeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum DataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null for a compact row-major tensor
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// The capsule names of the protocol: a consumer renames the capsule once it owns the tensor.
constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

}  // namespace gexec::dlpack
