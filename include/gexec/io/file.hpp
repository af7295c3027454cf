// Files in and out: inputs opened only when they are regular files (a FIFO or a folder is
// refused, never waited on), outputs written to a temporary file beside them and renamed
// into place, so that an output file is whole or absent and an old one is kept on failure
// (a FIFO, a terminal or /dev/stdout is written in place instead).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gexec/status.hpp"

namespace gexec {

// strerror(err), e.g. "Permission denied".
std::string errno_text(int err);

// A regular file open for reading. Errors are bad_input: "PATH: cannot read the file: REASON"
// with the reason from the system (permission denied, too many levels of symbolic links, no
// such file), or "is a folder" / "is not a regular file (a FIFO)", or "the path is empty".
class InputFile {
 public:
  static Result<InputFile> open(const std::string& path);
  InputFile(InputFile&& o) noexcept : fd_(o.fd_), size_(o.size_), path_(std::move(o.path_)) { o.fd_ = -1; }
  InputFile& operator=(InputFile&&) = delete;
  ~InputFile();

  int64_t size() const { return size_; }
  // Reads exactly n bytes; a short file is an error that names the file.
  Status read(void* dst, size_t n);
  // The whole rest of the file.
  Result<std::string> read_all();
  // Up to n bytes, fewer at the end of the file (0 there): for reading a large file in pieces.
  Result<size_t> read_some(void* dst, size_t n);

 private:
  InputFile(int fd, int64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  int64_t size_ = 0;
  std::string path_;
};

// Installs, once, the handlers of SIGINT, SIGTERM and SIGHUP that remove OutputFile's temporary
// files and end the process (else installed by the first OutputFile): a handler installed
// afterwards can pass a signal on to them.
void install_temp_file_cleanup();

// Whether `path` names a regular file, refusing like InputFile::open (without opening it).
Status check_regular_file(const std::string& path);

// An output file being written. `path` is followed through its links (output_target.hpp): for a
// regular file or nothing, bytes go to "DIR/.NAME.gexec-tmp-XXXXXX" beside the file at the end
// of the links and commit() renames it onto that file, so the links stay links. Destroyed
// without commit() (an error on the way), the temporary is removed and the file is untouched;
// SIGINT, SIGTERM and SIGHUP remove it too. A FIFO, a character device or one of this process's
// descriptors (/dev/stdout) is written in place instead: never renamed over, and a failed write
// may leave part of the text there. Errors are runtime errors that name PATH and give the
// system's reason ("No space left on device").
class OutputFile {
 public:
  static Result<OutputFile> create(const std::string& path);
  OutputFile(OutputFile&& o) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  Status write(const void* data, size_t n);
  Status write(std::string_view s) { return write(s.data(), s.size()); }
  // Flushes, closes and renames into place.
  Status commit();
  // Renames into place and hands over the open descriptor (the caller closes it): for a file
  // that grows after it is in place (AppendFile).
  Result<int> commit_keep_open();

 private:
  OutputFile(int fd, std::string path, std::string target, std::string temp, int slot)
      : fd_(fd), path_(std::move(path)), target_(std::move(target)), temp_(std::move(temp)), slot_(slot) {}
  Status finish(bool keep_open);
  void discard();
  int fd_ = -1;
  std::string path_;    // as given, for messages
  std::string target_;  // the file renamed onto: path_ with its links followed
  std::string temp_;    // empty when written in place
  int slot_ = -1;       // where the signal handler finds temp_
};

// The whole of `text` into `path`, atomically as above.
Status write_file_atomic(const std::string& path, std::string_view text);

}  // namespace gexec
