// Output files of the commands, through the io layer's atomic writes (gexec/io/file.hpp): whole
// or not at all, the old file kept on failure, links followed, a FIFO or /dev/stdout written in
// place; "-" is stdout.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec {

// Writes `text` to `path` with write_file_atomic; path "-" writes it on `stdout_stream` instead.
// Runtime errors name the file and the system's reason.
Status write_output_file(const std::string& path, std::string_view text, std::ostream* stdout_stream = nullptr);

}  // namespace gexec
