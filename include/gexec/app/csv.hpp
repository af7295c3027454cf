// CSV for `gexec gemm --csv`: RFC 4180 fields, --tags columns that no other column shares, and
// --append onto a file whose header must match.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gexec/io/append_file.hpp"
#include "gexec/status.hpp"

namespace gexec {

// The field as written: quoted (inner quotes doubled) when it holds a comma, quote or line break.
std::string csv_field(std::string_view s);
// The fields joined by commas, with a final "\n".
std::string csv_line(const std::vector<std::string>& fields);

// "--tags gpu:h200,run:3" -> {{"gpu","h200"},{"run","3"}}; bad_input for a part without ':' or
// with an empty key, or a key given twice.
Result<std::vector<std::pair<std::string, std::string>>> parse_tags(std::string_view text);

// What to write before the first row when appending (--append) to a file that holds `head`:
// `header` for an empty or new file, a "\n" after a last line without one, else nothing; bad_input
// naming `path` when its first line is another header.
Result<std::string> csv_append_start(const FileHead& head, const std::string& header, const std::string& path);

// bad_input when two of `columns` have one name: a --tags key that is also a column of gexec's
// (named as such), or a percentile given twice.
Status check_csv_columns(const std::vector<std::string>& columns,
                         const std::vector<std::pair<std::string, std::string>>& tags);

}  // namespace gexec
