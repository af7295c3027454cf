// A file that grows by whole records (the rows of `gexec gemm --csv`), possibly from several
// processes at once: each record is one write under an exclusive lock on the file (flock), and
// a write cut short (a full disk) is taken back, so that concurrent writers interleave whole
// records and a crash or SIGINT leaves whole records only. The path is followed through its
// links like OutputFile's; a FIFO, a terminal or /dev/stdout gets the records in place.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec {

// What a file held before the first record: its first line (without the "\n"; at most 1 MiB of
// it), whether it was empty (or new, or a stream), and whether its last byte is a "\n".
struct FileHead {
  std::string first_line;
  bool empty = true;
  bool ends_in_newline = true;
};

class AppendFile {
 public:
  // Replaces the file at `path` at once (atomically, as OutputFile does) by one holding `head`,
  // then appends to it. Runtime errors name the path and the system's reason.
  static Result<AppendFile> replace(const std::string& path, std::string_view head);
  // Appends to the file at `path`, created when missing. Under the lock, `start` reads what the
  // file holds and returns the bytes to write before any record (a header for an empty file, a
  // "\n" after a last line without one) or an error, returned as it is, the file untouched.
  using Start = std::function<Result<std::string>(const FileHead&)>;
  static Result<AppendFile> extend(const std::string& path, const Start& start);

  AppendFile(AppendFile&& o) noexcept : fd_(o.fd_), locked_(o.locked_), path_(std::move(o.path_)) { o.fd_ = -1; }
  AppendFile& operator=(AppendFile&&) = delete;
  ~AppendFile();

  // `record` at the end of the file, whole or not at all.
  Status append(std::string_view record);

 private:
  AppendFile(int fd, bool locked, std::string path) : fd_(fd), locked_(locked), path_(std::move(path)) {}
  int fd_ = -1;
  bool locked_ = false;  // a regular file, locked around each write; a stream is not
  std::string path_;
};

}  // namespace gexec
