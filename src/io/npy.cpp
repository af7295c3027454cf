// Reading and writing NumPy .npy files (float16, float32 and float64 data).
#include "gexec/io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>

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

double read_elem(const unsigned char* p, int size, bool swap) {
  unsigned char b[8];
  std::memcpy(b, p, size_t(size));
  if (swap) std::reverse(b, b + size);
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
  if (dict.size() > 65535) return runtime_error(path + ": .npy header too long");
  std::ofstream f(path, std::ios::binary);
  if (!f) return runtime_error(path + ": cannot open for writing");
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  f.write(reinterpret_cast<const char*>(magic), 8);
  const unsigned char len[2] = {static_cast<unsigned char>(dict.size() & 0xff),
                                static_cast<unsigned char>(dict.size() >> 8)};
  f.write(reinterpret_cast<const char*>(len), 2);
  f.write(dict.data(), std::streamsize(dict.size()));
  if (std::endian::native == std::endian::little) {
    f.write(static_cast<const char*>(data), std::streamsize(n * elem_size));
  } else {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      unsigned char b[4];
      std::memcpy(b, p + i * elem_size, elem_size);
      std::reverse(b, b + elem_size);
      f.write(reinterpret_cast<const char*>(b), std::streamsize(elem_size));
    }
  }
  if (!f) return runtime_error(path + ": write failed");
  return Status::success();
}

}  // namespace

Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return bad_input(path + ": cannot open the file");
  f.seekg(0, std::ios::end);
  const std::streamoff file_size = f.tellg();
  f.seekg(0);
  unsigned char pre[10];
  if (file_size < 10 || !f.read(reinterpret_cast<char*>(pre), 10) || pre[0] != 0x93 ||
      std::memcmp(pre + 1, "NUMPY", 5) != 0)
    return bad_input(path + ": not a .npy file (no \\x93NUMPY magic)");
  const int major = pre[6];
  size_t header_len = 0, prefix = 0;
  if (major == 1) {
    header_len = size_t(pre[8]) | size_t(pre[9]) << 8;
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char l[2];
    if (!f.read(reinterpret_cast<char*>(l), 2)) return bad_input(path + ": truncated .npy header");
    header_len = size_t(pre[8]) | size_t(pre[9]) << 8 | size_t(l[0]) << 16 | size_t(l[1]) << 24;
    prefix = 12;
  } else {
    return bad_input(path + ": .npy format version " + std::to_string(major) + " is not supported (1 to 3 are)");
  }
  if (std::streamoff(prefix + header_len) > file_size) return bad_input(path + ": truncated .npy header");
  std::string header(header_len, '\0');
  f.read(header.data(), std::streamsize(header_len));

  NpyArray a;
  const auto descr = dict_value(header, "descr");
  const auto order = dict_value(header, "fortran_order");
  const auto shape = dict_value(header, "shape");
  if (!descr || !order || !shape) return bad_input(path + ": malformed .npy header: " + header);
  a.descr = *descr;
  if (*order != "True" && *order != "False") return bad_input(path + ": malformed fortran_order: " + *order);
  a.fortran_order = *order == "True";
  auto dims = parse_shape(*shape);
  if (!dims) return bad_input(path + ": malformed .npy shape " + *shape);
  a.shape = *dims;

  if (a.descr.size() != 3 || a.descr[1] != 'f' || (a.descr[2] != '2' && a.descr[2] != '4' && a.descr[2] != '8') ||
      (a.descr[0] != '<' && a.descr[0] != '>' && a.descr[0] != '=' && a.descr[0] != '|'))
    return bad_input(path + ": dtype '" + a.descr + "' is not supported; expected float16, float32 or float64 (<f2, <f4, <f8)");
  const int size = a.descr[2] - '0';
  const bool big = a.descr[0] == '>' || (a.descr[0] != '<' && std::endian::native == std::endian::big);
  const bool swap = big != (std::endian::native == std::endian::big);

  int64_t n = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 8 / d)
      return bad_input(path + ": shape " + *shape + " is too large");
    n *= d;
  }
  const std::streamoff data_bytes = file_size - std::streamoff(prefix + header_len);
  if (data_bytes < std::streamoff(n) * size)
    return bad_input(path + ": holds " + std::to_string(data_bytes) + " bytes of data; shape " + *shape +
                     " needs " + std::to_string(n * size));
  std::vector<unsigned char> raw(size_t(n) * size_t(size));
  if (!f.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size())))
    return bad_input(path + ": cannot read the data");

  a.values.resize(size_t(n));
  if (!a.fortran_order || a.shape.size() < 2) {
    for (int64_t i = 0; i < n; ++i) a.values[size_t(i)] = read_elem(raw.data() + i * size, size, swap);
  } else {
    // Fortran order: the first index varies fastest. Walk the file in order, tracking the
    // multi-index, and place each element at its C-order position.
    const size_t r = a.shape.size();
    std::vector<int64_t> idx(r, 0), cstride(r, 1);
    for (size_t d = r - 1; d-- > 0;) cstride[d] = cstride[d + 1] * a.shape[d + 1];
    for (int64_t i = 0; i < n; ++i) {
      int64_t pos = 0;
      for (size_t d = 0; d < r; ++d) pos += idx[d] * cstride[d];
      a.values[size_t(pos)] = read_elem(raw.data() + i * size, size, swap);
      for (size_t d = 0; d < r; ++d) {
        if (++idx[d] < a.shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  return a;
}

Status write_npy_f16(const std::string& path, const std::vector<int64_t>& shape, const uint16_t* bits) {
  return write_npy(path, shape, "<f2", bits, 2);
}

Status write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  return write_npy(path, shape, "<f4", data, 4);
}

}  // namespace gexec
