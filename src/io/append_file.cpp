// Whole records appended under an exclusive flock (append_file.hpp).
#include "gexec/io/append_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "gexec/io/file.hpp"
#include "gexec/io/output_target.hpp"
#include "gexec/io/text.hpp"

namespace gexec {
namespace {

constexpr size_t kHeadBytes = size_t(1) << 20;

// flock(LOCK_EX) held for the object's lifetime. A file system without flock (ENOLCK) leaves the
// writes unlocked: single writes with O_APPEND still land whole at the end on local disks.
class Lock {
 public:
  Lock(int fd, bool on) : fd_(on ? fd : -1) {
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) fd_ = -1;
  }
  ~Lock() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN);
  }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  int fd_;
};

// errno of the first failed write, 0 when all of it was written.
int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += put;
    n -= size_t(put);
  }
  return 0;
}

FileHead read_head(int fd) {
  FileHead h;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return h;
  h.empty = false;
  char last = '\n';
  h.ends_in_newline = ::pread(fd, &last, 1, st.st_size - 1) == 1 && last == '\n';
  char buf[4096];
  for (off_t at = 0; h.first_line.size() < kHeadBytes;) {
    const ssize_t got = ::pread(fd, buf, sizeof buf, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    const std::string_view chunk(buf, size_t(got));
    const size_t eol = chunk.find('\n');
    h.first_line.append(chunk.substr(0, eol));
    if (eol != std::string_view::npos) break;
    at += got;
  }
  return h;
}

bool is_regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Result<AppendFile> AppendFile::replace(const std::string& path, std::string_view head) {
  auto out = OutputFile::create(path);
  if (!out) return out.error();
  GEXEC_TRY(out->write(head));
  auto fd = out->commit_keep_open();
  if (!fd) return fd.error();
  AppendFile f(*fd, is_regular(*fd), path);
  if (f.locked_) {
    const int flags = ::fcntl(f.fd_, F_GETFL);
    if (flags >= 0) ::fcntl(f.fd_, F_SETFL, flags | O_APPEND);
  }
  return f;
}

Result<AppendFile> AppendFile::extend(const std::string& path, const Start& start) {
  auto target = resolve_output(path);
  if (!target) return runtime_error(target.error().message);
  int fd = -1;
  if (target->kind == OutputTarget::Kind::file) {
    fd = ::open(target->path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int err = errno;
      return runtime_error(path_text(path) + ": cannot open it to append: " + errno_text(err));
    }
  } else {
    auto in_place = open_output_in_place(*target, path);
    if (!in_place) return in_place.error();
    fd = *in_place;
  }
  AppendFile f(fd, is_regular(fd), path);
  std::string first;
  {
    Lock lock(f.fd_, f.locked_);
    auto prefix = start(read_head(f.fd_));
    if (!prefix) return prefix.error();
    first = std::move(*prefix);
    if (first.empty()) return f;
    struct stat st {};
    const off_t before = f.locked_ && ::fstat(f.fd_, &st) == 0 ? st.st_size : -1;
    if (const int err = write_all(f.fd_, first.data(), first.size()); err) {
      if (before >= 0) (void)!::ftruncate(f.fd_, before);
      return runtime_error(path_text(path) + ": cannot write the file: " + errno_text(err));
    }
  }
  return f;
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status AppendFile::append(std::string_view record) {
  if (fd_ < 0) return runtime_error(path_text(path_) + ": the file is already closed");
  Lock lock(fd_, locked_);
  struct stat st {};
  const off_t before = locked_ && ::fstat(fd_, &st) == 0 ? st.st_size : -1;
  const int err = write_all(fd_, record.data(), record.size());
  if (err == 0) return {};
  // Taken back under the lock, so that the next record (ours or another writer's) starts a line.
  const bool taken_back = before >= 0 && ::ftruncate(fd_, before) == 0;
  return runtime_error(path_text(path_) + ": cannot write the file: " + errno_text(err) +
                       (taken_back ? " (the rows written before are kept)" : ""));
}

}  // namespace gexec
