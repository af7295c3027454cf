// Message text: UTF-8 validation with escapes, bounded quoting, and JSON output that never throws.
#include "gexec/io/text.hpp"

#include <algorithm>
#include <cstdio>

namespace gexec {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // the bounds of the second byte
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  return n;
}

void append_escape(std::string& out, const char* fmt, unsigned v) {
  char buf[12];
  std::snprintf(buf, sizeof buf, fmt, v);
  out += buf;
}

// Appends printable characters of s from `i` until `max_chars` characters are out or the end;
// returns where it stopped.
size_t append_printable(std::string& out, std::string_view s, size_t i, size_t max_chars, bool keep_newlines,
                        bool quoting) {
  size_t chars = 0;
  while (i < s.size() && chars < max_chars) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      append_escape(out, "\\x%02x", c);
      i += 1;
    } else if (n == 1 && (c < 0x20 || c == 0x7f) && !(keep_newlines && c == '\n')) {
      append_escape(out, "\\u%04x", c);
      i += 1;
    } else if (n == 1 && quoting && (c == '"' || c == '\\')) {
      out += '\\';
      out += char(c);
      i += 1;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
    ++chars;
  }
  return i;
}

}  // namespace

std::string printable(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  append_printable(out, s, 0, s.size(), keep_newlines, false);
  return out;
}

std::string quote_text(std::string_view s, size_t max_chars) {
  std::string q = "\"";
  const size_t end = append_printable(q, s, 0, max_chars, false, true);
  if (end < s.size()) q += "...";
  return q + "\"";
}

std::string name_text(std::string_view s) {
  const bool plain = !s.empty() && s.size() <= kQuoteChars && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
  return plain ? std::string(s) : quote_text(s);
}

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string path_text(std::string_view path) {
  constexpr size_t kHead = 160, kTail = 96;
  if (path.size() <= kHead + kTail + 3) return printable(path);
  std::string out;
  append_printable(out, path, 0, kHead, false, false);
  // The tail starts on a character boundary.
  size_t from = path.size() - kTail;
  while (from < path.size() && (static_cast<unsigned char>(path[from]) & 0xc0) == 0x80) ++from;
  out += "...";
  append_printable(out, path, from, path.size(), false, false);
  return out;
}

std::string dump_json(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dump_json(const nlohmann::ordered_json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace gexec
