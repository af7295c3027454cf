// TensorProto data: element types, raw_data and the typed fields, external data files, and the
// test data files (input_N.pb / output_N.pb) read through the same decoding.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "gexec/io/file.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/f8.hpp"
#include "proto.hpp"

namespace gexec::onnx_import {

namespace {

constexpr const char* kTypeNames[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
                                      "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
                                      "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                      "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1"};

// Bytes per element in raw_data; 0 for types whose data gexec does not read.
int element_bytes(int32_t type) {
  switch (type) {
    case kUint8: case kInt8: case kBool: case kFloat8E4M3FN: case kFloat8E5M2: return 1;
    case kUint16: case kInt16: case kFloat16: case kBfloat16: return 2;
    case kFloat: case kInt32: case kUint32: return 4;
    case kInt64: case kDouble: case kUint64: return 8;
    default: return 0;
  }
}

bool is_integer(int32_t type) {
  switch (type) {
    case kUint8: case kInt8: case kUint16: case kInt16: case kInt32: case kInt64: case kBool: case kUint32:
    case kUint64: return true;
    default: return false;
  }
}

uint64_t read_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The value of one element given as its little-endian bits (raw_data, or a typed field's bits).
double float_of_bits(int32_t type, uint64_t bits) {
  switch (type) {
    case kFloat: return f32_from_bits(uint32_t(bits));
    case kFloat16: return f16_to_float(uint16_t(bits));
    case kBfloat16: return bf16_to_float(uint16_t(bits));
    case kFloat8E4M3FN: return f8::decode(uint8_t(bits), f8::kE4M3);
    case kFloat8E5M2: return f8::decode(uint8_t(bits), f8::kE5M2);
    case kDouble: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    default: return 0;
  }
}

int64_t int_of_bits(int32_t type, uint64_t bits) {
  switch (type) {
    case kInt8: return int8_t(bits);
    case kInt16: return int16_t(bits);
    case kInt32: return int32_t(bits);
    case kInt64: return int64_t(bits);
    case kBool: return bits != 0;
    default: return int64_t(bits);  // unsigned; UINT64 above 2^63 wraps, and no shape or axis is that large
  }
}

// Fills t's values from n elements of little-endian bytes.
void from_bytes(HostTensor& t, const uint8_t* p, int64_t n, int esize) {
  if (is_integer(t.type)) {
    t.ints.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) t.ints[size_t(i)] = int_of_bits(t.type, read_le(p + i * esize, esize));
  } else {
    std::vector<double>& v = t.values.edit();
    v.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float_of_bits(t.type, read_le(p + i * esize, esize));
  }
}

// The bytes of an external data file: location, offset and length from the entries.
Result<std::string> read_external(const pb::TensorProto& t, const std::string& base_dir, const std::string& what,
                                  int64_t want, std::vector<std::string>* files) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& e : t.external_data()) {
    auto number = [&](int64_t* out) -> Status {
      const std::string& v = e.value();
      if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
        return bad_input(what + ": external data " + e.key() + " " + quote_text(v) + " is not a non-negative integer");
      *out = std::stoll(v);
      return {};
    };
    if (e.key() == "location") location = e.value();
    else if (e.key() == "offset") GEXEC_TRY(number(&offset));
    else if (e.key() == "length") GEXEC_TRY(number(&length));
  }
  if (location.empty()) return bad_input(what + ": external data without a location");
  namespace fs = std::filesystem;
  const fs::path rel(location);
  // ONNX's checker rule: the data lies beside the model, never elsewhere on the machine.
  if (rel.is_absolute() || location.find('\0') != std::string::npos)
    return bad_input(what + ": external data location " + quote_text(location) + " is not a path relative to the model's folder");
  for (const auto& part : rel)
    if (part == "..")
      return bad_input(what + ": external data location " + quote_text(location) + " leaves the model's folder");
  const fs::path folder(base_dir.empty() ? "." : base_dir);
  const std::string path = (folder / rel).string();
  if (Status s = check_regular_file(path); !s) return s.error().with(what);
  std::error_code ec;
  // Nor through a link: the file the path ends at, links followed, must be inside the folder too.
  const fs::path real = fs::canonical(path, ec), real_folder = ec ? fs::path() : fs::canonical(folder, ec);
  if (ec) return bad_input(what + ": " + path_text(path) + ": " + ec.message());
  if (std::mismatch(real_folder.begin(), real_folder.end(), real.begin(), real.end()).first != real_folder.end())
    return bad_input(what + ": external data location " + quote_text(location) + " is a link to " +
                     path_text(real.string()) + ", outside the model's folder");
  const auto size = int64_t(fs::file_size(path, ec));
  if (ec) return bad_input(what + ": " + path_text(path) + ": " + ec.message());
  if (offset > size)
    return bad_input(what + ": external data " + path_text(path) + " holds " + std::to_string(size) + " bytes; offset " +
                     std::to_string(offset) + " is past its end");
  if (length < 0) length = size - offset;
  if (length > size - offset)
    return bad_input(what + ": external data " + path_text(path) + " holds " + std::to_string(size) +
                     " bytes; offset " + std::to_string(offset) + " and length " + std::to_string(length) + " go beyond");
  if (length != want)
    return bad_input(what + ": external data of " + std::to_string(length) + " bytes; the tensor needs " +
                     std::to_string(want));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size_t(length), '\0');
  in.seekg(offset);
  if (!in.read(bytes.data(), length)) return bad_input(what + ": " + path_text(path) + ": cannot read " + std::to_string(length) + " bytes");
  if (files) files->push_back(path);
  return bytes;
}

}  // namespace

std::string type_name(int32_t type) {
  if (type >= 0 && size_t(type) < std::size(kTypeNames)) return kTypeNames[type];
  return "type " + std::to_string(type);
}

std::optional<DType> gexec_dtype(int32_t type) {
  switch (type) {
    case kFloat: return DType::f32;
    case kFloat16: return DType::f16;
    case kBfloat16: return DType::bf16;
    case kFloat8E4M3FN: return DType::f8e4m3;
    case kFloat8E5M2: return DType::f8e5m2;
    default: return std::nullopt;
  }
}

int32_t onnx_type(DType t) {
  switch (t) {
    case DType::f32: return kFloat;
    case DType::f16: return kFloat16;
    case DType::bf16: return kBfloat16;
    case DType::f8e4m3: return kFloat8E4M3FN;
    case DType::f8e5m2: return kFloat8E5M2;
    case DType::i32: return kInt32;
  }
  return kUndefined;
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<HostTensor> decode_tensor(const pb::TensorProto& t, const std::string& base_dir, const std::string& what,
                                 std::vector<std::string>* files) {
  HostTensor h;
  h.name = t.name();
  h.type = t.data_type();
  const int esize = element_bytes(h.type);
  if (esize == 0)
    return bad_input(what + " is " + type_name(h.type) + ", whose data gexec does not read (" +
                     "it reads floating point and integer tensors)");
  if (t.has_segment()) return bad_input(what + ": segmented tensors are not supported");
  // Counted so that neither the count nor the bytes overflow; the data's size is checked against
  // it before anything is allocated.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 8;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return bad_input(what + " has a negative dimension " + std::to_string(d));
    if (d > 0 && n > kMax / d) return bad_input(what + ": its shape holds more than 2^60 elements");
    n *= d;
    h.shape.push_back(d);
  }
  const bool external = t.data_location() == pb::TensorProto::EXTERNAL;
  if (external || t.has_raw_data()) {
    std::string external_bytes;
    if (external) {
      auto b = read_external(t, base_dir, what, n * esize, files);
      if (!b) return b.error();
      external_bytes = std::move(*b);
    }
    const std::string& raw = external ? external_bytes : t.raw_data();
    if (int64_t(raw.size()) != n * esize)
      return bad_input(what + ": raw_data holds " + std::to_string(raw.size()) + " bytes; " + shape_str(h.shape) +
                       " " + type_name(h.type) + " needs " + std::to_string(n * esize));
    from_bytes(h, reinterpret_cast<const uint8_t*>(raw.data()), n, esize);
    return h;
  }
  // The typed fields: each type has one (onnx.proto's comments on TensorProto).
  auto count_error = [&](int64_t have, const char* field) {
    return bad_input(what + ": " + field + " holds " + std::to_string(have) + " values; " + shape_str(h.shape) +
                     " needs " + std::to_string(n));
  };
  switch (h.type) {
    case kFloat:
      if (t.float_data_size() != n) return count_error(t.float_data_size(), "float_data");
      h.values.edit().assign(t.float_data().begin(), t.float_data().end());
      break;
    case kDouble:
      if (t.double_data_size() != n) return count_error(t.double_data_size(), "double_data");
      h.values.edit().assign(t.double_data().begin(), t.double_data().end());
      break;
    case kInt64:
      if (t.int64_data_size() != n) return count_error(t.int64_data_size(), "int64_data");
      h.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case kUint32:
    case kUint64:
      if (t.uint64_data_size() != n) return count_error(t.uint64_data_size(), "uint64_data");
      for (uint64_t v : t.uint64_data()) h.ints.push_back(int64_t(v));
      break;
    default:  // the types held in int32_data: the small integers, and the 16- and 8-bit floats as their bits
      if (t.int32_data_size() != n) return count_error(t.int32_data_size(), "int32_data");
      for (int32_t v : t.int32_data()) {
        const uint64_t bits = uint64_t(uint32_t(v));
        if (is_integer(h.type)) h.ints.push_back(h.type == kBool ? v != 0 : int64_t(v));
        else h.values.edit().push_back(float_of_bits(h.type, bits));
      }
  }
  return h;
}

Result<HostTensor> read_tensor_file(const std::string& path) {
  auto f = InputFile::open(path);
  if (!f) return f.error();
  if (f->size() > int64_t(std::numeric_limits<int>::max()))
    return bad_input(path_text(path) + ": the file is " + std::to_string(f->size()) +
                     " bytes; a TensorProto file is limited to 2 GiB");
  auto bytes = f->read_all();
  if (!bytes) return bytes.error();
  pb::TensorProto t;
  if (!t.ParseFromString(*bytes))
    return bad_input(path_text(path) + ": not an ONNX TensorProto (the protobuf does not parse: truncated or another message)");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  auto h = decode_tensor(t, dir, path_text(path) + ": tensor " + quote_text(t.name()), nullptr);
  if (!h) return h.error();
  return h;
}

}  // namespace gexec::onnx_import
