// DLPack import (checked, never copied) and export (gexec.Array) for the binding.
#include "arrays.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>  // every file that casts a std::vector, or the casters differ between files

#include <cstring>
#include <sstream>

namespace gexec::py_binding {
namespace {

// The alignment every bound buffer must have: the arena's vector kernels and cuBLASLt's fastest
// algorithms read 16 bytes at a time.
constexpr uintptr_t kMinAlignment = 16;

std::string tuple_str(const int64_t* v, int n) {
  std::ostringstream s;
  s << "(";
  for (int i = 0; i < n; ++i) s << (i ? ", " : "") << v[i];
  s << (n == 1 ? ",)" : ")");
  return s.str();
}
std::string tuple_str(const std::vector<int64_t>& v) { return tuple_str(v.data(), int(v.size())); }

std::string dl_dtype_name(const dlpack::DLDataType& d) {
  std::string base = d.code == dlpack::kDLFloat    ? "float"
                     : d.code == dlpack::kDLBfloat ? "bfloat"
                     : d.code == dlpack::kDLInt    ? "int"
                     : d.code == dlpack::kDLUInt   ? "uint"
                     : d.code == 6                 ? "bool"
                     : d.code == 5                 ? "complex"
                                                   : "code" + std::to_string(d.code) + "_";
  std::string name = base == "bool" ? base : base + std::to_string(d.bits);
  if (d.lanes != 1) name += "x" + std::to_string(d.lanes);
  return name;
}

std::string device_name(int32_t type, int32_t id) {
  switch (type) {
    case dlpack::kDLCPU: return "the CPU";
    case dlpack::kDLCUDA: return "cuda:" + std::to_string(id);
    case dlpack::kDLCUDAHost: return "pinned host memory (kDLCUDAHost)";
    case dlpack::kDLCUDAManaged: return "CUDA managed memory";
    default: return "device type " + std::to_string(type) + ":" + std::to_string(id);
  }
}

std::string expected_device(const Place& p) {
  return p.backend == Backend::cuda ? "cuda:" + std::to_string(p.device) : "the CPU";
}

bool on_place(int32_t type, int32_t id, const Place& p) {
  return p.backend == Backend::cuda ? type == dlpack::kDLCUDA && id == p.device : type == dlpack::kDLCPU;
}

std::string what(const char* role, const Tensor& t) { return std::string(role) + " " + t.name; }

// The capsule destructor of an exported tensor nobody consumed.
void free_unconsumed(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, dlpack::kCapsule)) return;
  auto* m = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsule));
  if (m && m->deleter) m->deleter(m);
}

// What an exported DLManagedTensor owns: the buffer and the arrays its DLTensor points into.
struct ExportContext {
  std::shared_ptr<void> buffer;
  std::vector<int64_t> shape, strides;
  dlpack::DLManagedTensor managed{};
};

}  // namespace

dlpack::DLDataType dl_dtype(DType t) {
  switch (t) {
    case DType::f16: return {dlpack::kDLFloat, 16, 1};
    case DType::bf16: return {dlpack::kDLBfloat, 16, 1};
    case DType::f32: return {dlpack::kDLFloat, 32, 1};
    case DType::i32: return {dlpack::kDLInt, 32, 1};
    case DType::f8e4m3:
    case DType::f8e5m2:
      // dlpack.hpp is DLPack v0.8, which has no float8 type codes (they came later): an f8
      // tensor cannot cross DLPack without a producer and consumer agreeing on a code.
      throw py::type_error(std::string(dtype_name(t)) +
                           ": DLPack v0.8 (the version gexec exchanges) has no float8 type; f8 tensors cannot be "
                           "bound, exported or copied out through the Python module");
  }
  return {dlpack::kDLFloat, 32, 1};
}

std::vector<int64_t> layout_strides(const Tensor& t) {
  const int r = t.rank();
  std::vector<int64_t> s(size_t(r), 1);
  if (r == 2 && t.layout == Layout::colmajor) {
    s[0] = 1;
    s[1] = t.shape[0];
    return s;
  }
  for (int i = r - 2; i >= 0; --i) s[size_t(i)] = s[size_t(i) + 1] * t.shape[size_t(i) + 1];
  return s;
}

Imported import_array(const py::handle& obj, const Tensor& t, const char* role, const Place& place) {
  const std::string who = what(role, t);
  const std::string want = std::string(dtype_name(t.dtype)) + " " + tuple_str(t.shape) + " " +
                           std::string(layout_name(t.layout)) + " on " + expected_device(place);
  if (!py::hasattr(obj, "__dlpack__"))
    throw py::type_error(who + ": expected an array with __dlpack__ (NumPy, CuPy, PyTorch), " + want + "; got " +
                         std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  // The device first: a producer asked for a CUDA stream on a CPU array (or the reverse) fails.
  if (py::hasattr(obj, "__dlpack_device__")) {
    py::tuple dev = obj.attr("__dlpack_device__")();
    const int32_t type = dev[0].cast<int32_t>(), id = dev[1].cast<int32_t>();
    if (!on_place(type, id, place))
      throw py::value_error(who + ": the array is on " + device_name(type, id) + "; expected one on " +
                            expected_device(place) + " (arrays are bound without copies, never moved)");
  }
  py::object cap;
  try {
    cap = place.backend == Backend::cuda ? obj.attr("__dlpack__")(py::arg("stream") = place.stream)
                                         : obj.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    // The producer's refusal (NumPy: a read-only array) says nothing of which tensor it was.
    if (!e.matches(PyExc_BufferError)) throw;
    const std::string why = py::str(e.value());
    throw py::buffer_error(who + ": the array refused to export itself through DLPack (" + why + ")" +
                           (why.find("readonly") != std::string::npos
                                ? "; gexec binds arrays without copies and DLPack cannot mark one read-only: pass a "
                                  "writable array (e.g. a.copy())"
                                : ""));
  }
  auto* raw = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), dlpack::kCapsule));
  if (!raw) {
    PyErr_Clear();
    throw py::type_error(who + ": __dlpack__ returned no \"dltensor\" capsule");
  }
  PyCapsule_SetName(cap.ptr(), dlpack::kUsedCapsule);  // ours now: the capsule will not free it
  Imported in;
  in.object = py::reinterpret_borrow<py::object>(obj);
  in.managed.reset(raw);
  const dlpack::DLTensor& d = raw->dl_tensor;

  if (!on_place(d.device.device_type, d.device.device_id, place))
    throw py::value_error(who + ": the array is on " + device_name(d.device.device_type, d.device.device_id) +
                          "; expected one on " + expected_device(place));
  if (is_f8(t.dtype)) {
    try {
      (void)dl_dtype(t.dtype);
    } catch (const py::type_error& e) {
      throw py::type_error(who + ": " + e.what());
    }
  }
  const dlpack::DLDataType want_t = dl_dtype(t.dtype);
  if (d.dtype.code != want_t.code || d.dtype.bits != want_t.bits || d.dtype.lanes != want_t.lanes)
    throw py::type_error(who + ": dtype " + dl_dtype_name(d.dtype) + "; expected " + dl_dtype_name(want_t) + " (" +
                         std::string(dtype_name(t.dtype)) + "); no conversions are made");
  bool same_shape = d.ndim == t.rank();
  for (int i = 0; same_shape && i < d.ndim; ++i) same_shape = d.shape[i] == t.shape[size_t(i)];
  if (!same_shape)
    throw py::value_error(who + ": shape " + tuple_str(d.shape, d.ndim) + "; expected " + tuple_str(t.shape));
  {
    // No strides: compact row-major (C order), as the protocol says.
    std::vector<int64_t> got(size_t(d.ndim), 1);
    if (d.strides) got.assign(d.strides, d.strides + d.ndim);
    else
      for (int i = d.ndim - 2; i >= 0; --i) got[size_t(i)] = got[size_t(i) + 1] * d.shape[i + 1];
    const std::vector<int64_t> want_s = layout_strides(t);
    const std::string how = t.layout == Layout::colmajor
                                ? "colmajor and dense (e.g. numpy.asfortranarray, cupy.asfortranarray, .t() of a "
                                  "contiguous transpose)"
                                : "rowmajor and dense (e.g. numpy.ascontiguousarray, cupy.ascontiguousarray, "
                                  ".contiguous())";
    for (int i = 0; i < d.ndim; ++i)
      if (d.shape[i] > 1 && got[size_t(i)] != want_s[size_t(i)])  // a stride over one element means nothing
        throw py::value_error(who + ": strides " + tuple_str(got) + " (in elements); expected " + tuple_str(want_s) +
                              ", " + how);
  }
  in.data = static_cast<char*>(d.data) + d.byte_offset;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(in.data);
  if (t.numel() > 0 && addr % kMinAlignment != 0)
    throw py::value_error(who + ": the data at 0x" + [&] {
      std::ostringstream h;
      h << std::hex << addr;
      return h.str();
    }() + " is not aligned to " + std::to_string(kMinAlignment) + " bytes, which gexec's kernels need");
  return in;
}

Array::Array(std::shared_ptr<void> buffer, const Tensor& t, const Place& place, std::shared_ptr<Device> device)
    : buffer_(std::move(buffer)), device_(std::move(device)), shape_(t.shape), strides_(layout_strides(t)),
      dtype_(t.dtype), place_(place) {}

int64_t Array::nbytes() const {
  int64_t n = dtype_size(dtype_);
  for (int64_t d : shape_) n *= d;
  return n;
}

py::capsule Array::dlpack(py::object stream) const {
  // The runs that wrote this buffer were ordered before the legacy default stream
  // (Device::default_stream_waits), which is what a consumer on it needs; `stream` is accepted
  // as the protocol asks and not otherwise used.
  (void)stream;
  auto* ctx = new ExportContext{buffer_, shape_, strides_, {}};
  dlpack::DLTensor& d = ctx->managed.dl_tensor;
  d.data = buffer_.get();
  d.device = {place_.backend == Backend::cuda ? dlpack::kDLCUDA : dlpack::kDLCPU,
              place_.backend == Backend::cuda ? place_.device : 0};
  d.ndim = int32_t(ctx->shape.size());
  d.dtype = dl_dtype(dtype_);
  d.shape = ctx->shape.data();
  d.strides = ctx->strides.data();
  d.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](dlpack::DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); };
  return py::capsule(&ctx->managed, dlpack::kCapsule, &free_unconsumed);
}

py::tuple Array::dlpack_device() const {
  if (place_.backend == Backend::cuda) return py::make_tuple(int(dlpack::kDLCUDA), place_.device);
  return py::make_tuple(int(dlpack::kDLCPU), 0);
}

py::dict Array::cuda_array_interface() const {
  if (place_.backend != Backend::cuda) throw py::attribute_error("a CPU array has no __cuda_array_interface__");
  (void)dl_dtype(dtype_);  // refuses f8, which no typestr names
  py::list strides;
  for (int64_t s : strides_) strides.append(s * dtype_size(dtype_));
  py::dict d;
  d["shape"] = py::tuple(py::cast(shape_));
  // No typestr names bfloat16: "<V2" (two opaque bytes) says the size without a false type.
  d["typestr"] = dtype_ == DType::f32 ? "<f4" : dtype_ == DType::f16 ? "<f2" : "<V2";
  d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(buffer_.get()), false);
  d["strides"] = py::tuple(strides);
  d["version"] = 3;
  d["stream"] = 1;  // written before the legacy default stream's later work (see dlpack())
  return d;
}

py::object Array::to_numpy() const {
  (void)dl_dtype(dtype_);  // refuses f8: NumPy has no float8 dtype either
  std::vector<py::ssize_t> shape(shape_.begin(), shape_.end()), strides;
  const int64_t n = nbytes() / dtype_size(dtype_);
  std::vector<uint8_t> bytes(static_cast<size_t>(nbytes()));
  {
    py::gil_scoped_release nogil;
    if (Status s = device_->synchronize(); !s) throw std::runtime_error(s.error().message);
    if (Status s = device_->download(bytes.data(), buffer_.get(), bytes.size()); !s)
      throw std::runtime_error(s.error().message);
  }
  const int es = dtype_ == DType::bf16 ? 4 : dtype_size(dtype_);
  for (int64_t s : strides_) strides.push_back(py::ssize_t(s * es));
  py::dtype dt(dtype_ == DType::f16 ? "float16" : "float32");
  py::array out(dt, shape, strides);
  if (dtype_ == DType::bf16) {
    auto* f = static_cast<float*>(out.mutable_data());
    for (int64_t i = 0; i < n; ++i) f[i] = bf16_to_float(reinterpret_cast<const uint16_t*>(bytes.data())[i]);
  } else {
    std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  }
  return out;
}

std::string Array::repr() const {
  return "gexec.Array(shape=" + tuple_str(shape_) + ", dtype=" + std::string(dtype_name(dtype_)) + ", device=" +
         expected_device(place_) + ")";
}

}  // namespace gexec::py_binding
