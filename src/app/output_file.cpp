// Atomic output files: write to ".NAME.tmp-PID" beside the target, flush, rename.
#include "output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gexec {

Status write_output_file(const std::string& path, std::string_view text, std::ostream* stdout_stream) {
  if (path == "-") {
    if (!stdout_stream) return runtime_error("writing to stdout ('-') is not possible here");
    stdout_stream->write(text.data(), std::streamsize(text.size()));
    stdout_stream->flush();
    return {};
  }
  if (path.empty()) return bad_input("the output path is empty");
  const std::filesystem::path target(path);
  const std::filesystem::path temp =
      target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()));
  FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) return runtime_error(path + ": cannot write the file: " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool flushed = std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!written || !flushed || !closed) {
    std::remove(temp.c_str());
    return runtime_error(path + ": cannot write the file: " + std::strerror(written ? errno : write_errno));
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    std::remove(temp.c_str());
    return runtime_error(path + ": cannot write the file: " + std::strerror(e));
  }
  return {};
}

Result<std::string> read_existing_file(const std::string& path, bool* exists) {
  std::error_code ec;
  *exists = std::filesystem::exists(path, ec);
  if (!*exists) return std::string();
  if (!std::filesystem::is_regular_file(path, ec)) return bad_input(path + ": not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) return runtime_error(path + ": cannot read the file: " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace gexec
