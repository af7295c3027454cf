// Arrays in and out of the binding: any __dlpack__ object imported without a copy after its
// device, dtype, shape and strides were checked against the graph's tensor, and gexec.Array, the
// buffer an executor allocates for an output the caller did not give.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlpack.hpp"
#include "gexec/exec/device.hpp"
#include "gexec/ir/tensor.hpp"

namespace gexec::py_binding {

namespace py = pybind11;

// What an executor's tensors live on: the backend, the device ordinal and, for CUDA, the stream
// a DLPack producer is asked to order its pending work before.
struct Place {
  Backend backend = Backend::cpu;
  int device = 0;
  uintptr_t stream = 0;
};

// A DLPack tensor the binding holds: its deleter is called (with the GIL) when released.
struct ManagedDeleter {
  void operator()(dlpack::DLManagedTensor* t) const {
    if (t && t->deleter) t->deleter(t);
  }
};
using ManagedTensor = std::unique_ptr<dlpack::DLManagedTensor, ManagedDeleter>;

// One caller array bound to a tensor: the object (kept alive while bound, for check() and so
// that its memory stays), the DLPack tensor that keeps the memory, and the address.
struct Imported {
  py::object object;
  ManagedTensor managed;
  void* data = nullptr;
};

// The element strides a tensor's layout stores it with (rowmajor: C order; colmajor: rank 2,
// Fortran order).
std::vector<int64_t> layout_strides(const Tensor& t);

// Imports `obj` for tensor `t` (`role` is "input" or "output", for messages). TypeError when it
// has no __dlpack__ or its dtype differs; ValueError when the device, shape, strides or alignment
// differ. Every message names the tensor and what was expected.
Imported import_array(const py::handle& obj, const Tensor& t, const char* role, const Place& place);

// An executor's own buffer for an output the caller left out: exports __dlpack__ and, on CUDA,
// __cuda_array_interface__. The buffer lives as long as the Array or anything imported from it.
class Array {
 public:
  Array(std::shared_ptr<void> buffer, const Tensor& t, const Place& place, std::shared_ptr<Device> device);

  py::capsule dlpack(py::object stream) const;
  py::tuple dlpack_device() const;
  py::dict cuda_array_interface() const;  // AttributeError off CUDA
  py::object to_numpy() const;            // a host copy; bf16 widened to float32
  std::string repr() const;

  void* data() const { return buffer_.get(); }
  const std::vector<int64_t>& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  const Place& place() const { return place_; }
  int64_t nbytes() const;

 private:
  std::shared_ptr<void> buffer_;
  std::shared_ptr<Device> device_;  // for to_numpy's download
  std::vector<int64_t> shape_, strides_;
  DType dtype_;
  Place place_;
};

// The DLPack dtype of a tensor dtype: f16 float16, bf16 bfloat16, f32 float32.
dlpack::DLDataType dl_dtype(DType t);

}  // namespace gexec::py_binding
