// CSV fields, tags and the appended document.
#include "gexec/app/csv.hpp"

#include "gexec/io/text.hpp"

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

Result<std::string> csv_append_start(const FileHead& head, const std::string& header, const std::string& path) {
  if (head.empty) return header;
  if (head.first_line + "\n" != header)
    return bad_input("--append: " + path_text(path) + " has other columns than this sweep writes (its header is " +
                     quote_text(head.first_line.substr(0, head.first_line.find_last_not_of('\r') + 1), 200) +
                     "); write to a new file or use the same --tags keys and --percentile list");
  // A file cut short of its last line break still gets its rows on lines of their own.
  return head.ends_in_newline ? std::string() : std::string("\n");
}

Status check_csv_columns(const std::vector<std::string>& columns,
                         const std::vector<std::pair<std::string, std::string>>& tags) {
  for (size_t i = 0; i < columns.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      if (columns[i] != columns[j]) continue;
      for (const auto& [k, v] : tags)
        if (k == columns[i])
          return bad_input("--tags: the key " + quote_text(k) +
                           " is also a column gexec gemm writes; name the tag otherwise");
      return bad_input("the CSV would have two columns " + quote_text(columns[i]) +
                       " (a percentile given twice in --percentile?)");
    }
  return {};
}

}  // namespace gexec
