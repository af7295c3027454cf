// Reading and writing NumPy .npy files (float16, float32 and float64 data).
#include "gexec/io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "gexec/io/file.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/dtype.hpp"

namespace gexec {
namespace {

// The header is a Python dict literal; this reads the value text after 'key':.
std::optional<std::string> dict_value(const std::string& h, const std::string& key) {
  const std::string k1 = "'" + key + "'", k2 = "\"" + key + "\"";
  size_t p = h.find(k1);
  size_t len = k1.size();
  if (p == std::string::npos) p = h.find(k2), len = k2.size();
  if (p == std::string::npos) return std::nullopt;
  p = h.find(':', p + len);
  if (p == std::string::npos) return std::nullopt;
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p >= h.size()) return std::nullopt;
  size_t end;
  if (h[p] == '\'' || h[p] == '"') {
    end = h.find(h[p], p + 1);
    if (end == std::string::npos) return std::nullopt;
    return h.substr(p + 1, end - p - 1);
  }
  if (h[p] == '(') {
    end = h.find(')', p);
    if (end == std::string::npos) return std::nullopt;
    return h.substr(p, end - p + 1);
  }
  end = h.find_first_of(",}", p);
  if (end == std::string::npos) return std::nullopt;
  std::string v = h.substr(p, end - p);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

// "(3, 4)" or "(5,)" or "()".
std::optional<std::vector<int64_t>> parse_shape(const std::string& s) {
  std::vector<int64_t> shape;
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return std::nullopt;
  size_t i = 1;
  while (i + 1 < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i + 1 >= s.size()) break;
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    int64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
      v = v * 10 + (s[i] - '0');
      ++i;
    }
    // Python 2 era files may write long integers as 3L.
    if (i < s.size() && s[i] == 'L') ++i;
    shape.push_back(v);
  }
  return shape;
}

// One element as a double: float16/32/64, or (integer) int32/int64, exact up to 2^53.
double read_elem(const unsigned char* p, int size, bool swap, bool integer) {
  unsigned char b[8];
  std::memcpy(b, p, size_t(size));
  if (swap) std::reverse(b, b + size);
  if (integer && size == 4) {
    int32_t i;
    std::memcpy(&i, b, 4);
    return double(i);
  }
  if (integer) {
    int64_t i;
    std::memcpy(&i, b, 8);
    return double(i);
  }
  if (size == 2) {
    uint16_t h;
    std::memcpy(&h, b, 2);
    return f16_to_float(h);
  }
  if (size == 4) {
    float f;
    std::memcpy(&f, b, 4);
    return f;
  }
  double d;
  std::memcpy(&d, b, 8);
  return d;
}

Status write_npy(const std::string& path, const std::vector<int64_t>& shape, const char* descr,
                 const void* data, size_t elem_size) {
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  size_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    if (i + 1 < shape.size()) dict += " ";
    n *= size_t(shape[i]);
  }
  dict += "), }";
  // Pad so the data starts on a 64-byte boundary, as NumPy itself does.
  const size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 65535) return runtime_error(path_text(path) + ": .npy header too long");
  auto f = OutputFile::create(path);
  if (!f) return f.error();
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  GEXEC_TRY(f->write(magic, 8));
  const unsigned char len[2] = {static_cast<unsigned char>(dict.size() & 0xff),
                                static_cast<unsigned char>(dict.size() >> 8)};
  GEXEC_TRY(f->write(len, 2));
  GEXEC_TRY(f->write(dict));
  if (std::endian::native == std::endian::little) {
    GEXEC_TRY(f->write(data, n * elem_size));
  } else {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    std::vector<unsigned char> swapped(n * elem_size);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(swapped.data() + i * elem_size, p + i * elem_size, elem_size);
      std::reverse(swapped.data() + i * elem_size, swapped.data() + (i + 1) * elem_size);
    }
    GEXEC_TRY(f->write(swapped.data(), swapped.size()));
  }
  // Complete or absent: the rename happens only after every byte is written.
  return f->commit();
}

}  // namespace

Result<NpyArray> read_npy(const std::string& path) {
  auto opened = InputFile::open(path);
  if (!opened) return opened.error();
  InputFile& f = *opened;
  const std::string name = path_text(path);
  const int64_t file_size = f.size();
  unsigned char pre[10];
  if (file_size < 10 || !f.read(pre, 10) || pre[0] != 0x93 || std::memcmp(pre + 1, "NUMPY", 5) != 0)
    return bad_input(name + ": not a .npy file (no \\x93NUMPY magic)");
  const int major = pre[6];
  size_t header_len = 0, prefix = 0;
  if (major == 1) {
    header_len = size_t(pre[8]) | size_t(pre[9]) << 8;
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char l[2];
    if (file_size < 12 || !f.read(l, 2)) return bad_input(name + ": truncated .npy header");
    header_len = size_t(pre[8]) | size_t(pre[9]) << 8 | size_t(l[0]) << 16 | size_t(l[1]) << 24;
    prefix = 12;
  } else {
    return bad_input(name + ": .npy format version " + std::to_string(major) + " is not supported (1 to 3 are)");
  }
  if (int64_t(prefix + header_len) > file_size) return bad_input(name + ": truncated .npy header");
  std::string header(header_len, '\0');
  GEXEC_TRY(f.read(header.data(), header_len));

  // Header text is quoted, printable and short: it may hold any bytes of the file.
  NpyArray a;
  const auto descr = dict_value(header, "descr");
  const auto order = dict_value(header, "fortran_order");
  const auto shape = dict_value(header, "shape");
  if (!descr || !order || !shape) return bad_input(name + ": malformed .npy header " + quote_text(header));
  a.descr = *descr;
  if (*order != "True" && *order != "False") return bad_input(name + ": malformed fortran_order " + quote_text(*order));
  a.fortran_order = *order == "True";
  auto dims = parse_shape(*shape);
  if (!dims) return bad_input(name + ": malformed .npy shape " + quote_text(*shape));
  a.shape = *dims;

  const bool integer = a.descr.size() == 3 && a.descr[1] == 'i';
  if (a.descr.size() != 3 || (a.descr[1] != 'f' && !integer) ||
      (a.descr[2] != '2' && a.descr[2] != '4' && a.descr[2] != '8') || (integer && a.descr[2] == '2') ||
      (a.descr[0] != '<' && a.descr[0] != '>' && a.descr[0] != '=' && a.descr[0] != '|'))
    return bad_input(name + ": dtype " + quote_text(a.descr) +
                     " is not supported; expected float16, float32, float64, int32 or int64 (<f2, <f4, <f8, <i4, <i8)");
  const int size = a.descr[2] - '0';
  const bool big = a.descr[0] == '>' || (a.descr[0] != '<' && std::endian::native == std::endian::big);
  const bool swap = big != (std::endian::native == std::endian::big);

  int64_t n = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 8 / d)
      return bad_input(name + ": shape " + quote_text(*shape) + " is too large");
    n *= d;
  }
  const int64_t data_bytes = file_size - int64_t(prefix + header_len);
  if (data_bytes < n * size)
    return bad_input(name + ": holds " + std::to_string(data_bytes) + " bytes of data; shape " + quote_text(*shape) +
                     " needs " + std::to_string(n * size));
  std::vector<unsigned char> raw(size_t(n) * size_t(size));
  GEXEC_TRY(f.read(raw.data(), raw.size()));

  a.values.resize(size_t(n));
  if (!a.fortran_order || a.shape.size() < 2) {
    for (int64_t i = 0; i < n; ++i) a.values[size_t(i)] = read_elem(raw.data() + i * size, size, swap, integer);
  } else {
    // Fortran order: the first index varies fastest. Walk the file in order, tracking the
    // multi-index, and place each element at its C-order position.
    const size_t r = a.shape.size();
    std::vector<int64_t> idx(r, 0), cstride(r, 1);
    for (size_t d = r - 1; d-- > 0;) cstride[d] = cstride[d + 1] * a.shape[d + 1];
    for (int64_t i = 0; i < n; ++i) {
      int64_t pos = 0;
      for (size_t d = 0; d < r; ++d) pos += idx[d] * cstride[d];
      a.values[size_t(pos)] = read_elem(raw.data() + i * size, size, swap, integer);
      for (size_t d = 0; d < r; ++d) {
        if (++idx[d] < a.shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  return a;
}

std::string npy_dtype_problem(const std::string& descr, DType tensor) {
  const char kind = descr.size() == 3 ? descr[2] : '?';
  const bool integer = descr.size() == 3 && descr[1] == 'i';
  if (tensor == DType::i32)
    return integer ? "" : "holds " + quote_text(descr) + " data; an i32 tensor reads int32 or int64 files (<i4, <i8)";
  if (integer) return "holds integer data " + quote_text(descr) + "; a " + std::string(dtype_name(tensor)) +
                      " tensor reads float16, float32 or float64 files";
  if (kind != '2' && kind != '4' && kind != '8')
    return "dtype " + quote_text(descr) + " is not supported; expected float16, float32 or float64";
  // float16 covers a small part of bf16's range (to 65504) with other precision: float16 data
  // for a bf16 tensor is almost always a mistake, so it is refused rather than converted.
  if (kind == '2' && tensor == DType::bf16) return "holds float16 data; a bf16 tensor reads float32 or float64 files";
  return {};
}

Status write_npy_f16(const std::string& path, const std::vector<int64_t>& shape, const uint16_t* bits) {
  return write_npy(path, shape, "<f2", bits, 2);
}

Status write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  return write_npy(path, shape, "<f4", data, 4);
}

Status write_npy_i32(const std::string& path, const std::vector<int64_t>& shape, const int32_t* data) {
  return write_npy(path, shape, "<i4", data, 4);
}

}  // namespace gexec
