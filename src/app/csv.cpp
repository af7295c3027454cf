// CSV fields, tags and the appended document.
#include "gexec/app/csv.hpp"

namespace gexec {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

Result<std::vector<std::pair<std::string, std::string>>> parse_tags(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  if (text.empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(start, end - start);
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return bad_input("--tags: '" + std::string(part) + "' is not key:value");
    std::string key(part.substr(0, colon));
    for (const auto& [k, v] : out)
      if (k == key) return bad_input("--tags: the key '" + key + "' is given twice");
    out.emplace_back(std::move(key), std::string(part.substr(colon + 1)));
    start = end + 1;
  }
  return out;
}

Result<std::string> csv_document(const std::string& existing, bool append, const std::string& header,
                                 const std::vector<std::string>& rows, const std::string& path) {
  std::string out;
  if (append && !existing.empty()) {
    const size_t eol = existing.find('\n');
    const std::string first = existing.substr(0, eol == std::string::npos ? existing.size() : eol + 1);
    if (first != header)
      return bad_input("--append: " + path + " has other columns than this sweep writes (its header is '" +
                       first.substr(0, first.find_last_not_of("\r\n") + 1) +
                       "'); write to a new file or use the same --tags keys and --percentile list");
    out = existing;
    if (out.back() != '\n') out += '\n';
  } else {
    out = header;
  }
  for (const std::string& r : rows) out += r;
  return out;
}

}  // namespace gexec
