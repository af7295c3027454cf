// Text for messages and reports: valid UTF-8, one line, bounded, whatever bytes came in.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gexec {

// How many characters of a value a message quotes before it shortens it with "...".
constexpr size_t kQuoteChars = 48;

// `s` as valid UTF-8 on one line: a byte that does not start a well-formed UTF-8 sequence
// becomes \xNN, a control character \uNNNN (a newline too unless keep_newlines), so that a
// Latin-1 file name, raw .npy header bytes or a key cut mid-sequence print and serialise.
std::string printable(std::string_view s, bool keep_newlines = false);

// `s` in double quotes, printable, at most `max_chars` characters of it (cut on a character
// boundary), then "..." when it was longer.
std::string quote_text(std::string_view s, size_t max_chars = kQuoteChars);

// A name from the input (an op type, a domain, an attribute) as it is where it is a plain
// identifier (letters, digits, '_' and '.', at most kQuoteChars), else as quote_text gives it: a
// message then never repeats, outside quotes, words that the input chose.
std::string name_text(std::string_view s);

// A number as printf's %.17g writes it: enough digits to read back the same double, and "nan",
// "inf" or "-inf" (where a JSON dump would write null).
std::string number_text(double v);

// A file path in a message: printable, and shortened in the middle beyond a few hundred bytes
// (its beginning and its file name are what tell paths apart).
std::string path_text(std::string_view path);

// A JSON document as text that never throws: strings that are not valid UTF-8 are replaced.
std::string dump_json(const nlohmann::json& doc, int indent = 2);
std::string dump_json(const nlohmann::ordered_json& doc, int indent = -1);

}  // namespace gexec
