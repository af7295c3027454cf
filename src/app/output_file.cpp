// Output files of the commands: "-" on the given stream, anything else by write_file_atomic.
#include "output_file.hpp"

#include <cstdio>

#include "gexec/io/file.hpp"

namespace gexec {

Status write_output_file(const std::string& path, std::string_view text, std::ostream* stdout_stream) {
  if (path == "-") {
    if (!stdout_stream) return runtime_error("writing to stdout ('-') is not possible here");
    stdout_stream->write(text.data(), std::streamsize(text.size()));
    stdout_stream->flush();
    return {};
  }
  // A path to this process's stdout (/dev/stdout) is written on the descriptor: what was printed
  // before must be out first.
  if (stdout_stream) stdout_stream->flush();
  std::fflush(stdout);
  return write_file_atomic(path, text);
}

}  // namespace gexec
