// Output files written whole or not at all: a temporary file beside the target, renamed onto it,
// so that an interrupted write leaves the old file (or none), never half a file. "-" is stdout.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec {

// Writes `text` to `path` atomically (temp + rename in the same folder); path "-" writes it on
// `stdout_stream` instead. Runtime errors name the file and the system's reason.
Status write_output_file(const std::string& path, std::string_view text, std::ostream* stdout_stream = nullptr);

// The whole of a file, or nothing (no error) when it does not exist; errors otherwise.
Result<std::string> read_existing_file(const std::string& path, bool* exists);

}  // namespace gexec
