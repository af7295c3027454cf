// A file's read-merge-replace under a lock on its folder (locked_update.hpp).
#include "gexec/io/locked_update.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "gexec/io/file.hpp"
#include "gexec/io/output_target.hpp"

namespace gexec {
namespace {

// flock(LOCK_EX) on a folder for the object's lifetime. The file itself cannot carry the lock:
// each update renames a new file over it, and a lock on the old one would guard nothing.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
      }
  }
  ~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

}  // namespace

Status update_file_locked(const std::string& path,
                          const std::function<Result<std::string>(const std::optional<std::string>&)>& update) {
  auto target = resolve_output(path);
  std::string dir = ".";
  if (target && target->kind == OutputTarget::Kind::file) {
    const std::string parent = std::filesystem::path(target->path).parent_path().string();
    if (!parent.empty()) dir = parent;
  }
  FolderLock lock(dir);
  std::optional<std::string> current;
  if (target && target->kind == OutputTarget::Kind::file) {
    std::error_code ec;
    if (std::filesystem::exists(target->path, ec))
      if (auto f = InputFile::open(target->path))
        if (auto text = f->read_all()) current = std::move(*text);
  }
  auto next = update(current);
  if (!next) return next.error();
  return write_file_atomic(path, *next);
}

}  // namespace gexec
