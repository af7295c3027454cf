// Output paths followed through their links to what is really written (output_target.hpp).
#include "gexec/io/output_target.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string_view>

#include "gexec/io/file.hpp"
#include "gexec/io/text.hpp"

namespace gexec {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)

// N when `p` names one of this process's descriptors: /dev/fd/N, /proc/self/fd/N,
// /proc/thread-self/fd/N or /proc/<our pid>/fd/N. Such a path is a link the kernel resolves to
// the open file (or to "pipe:[123]"); reopening it would start a regular file over at offset 0.
std::optional<int> own_descriptor(std::string_view p) {
  const std::string pid = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"),
                                  std::string_view("/proc/thread-self/fd/"), std::string_view(pid)}) {
    if (!p.starts_with(prefix)) continue;
    const std::string_view digits = p.substr(prefix.size());
    int fd = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || fd < 0) return std::nullopt;
    return fd;
  }
  return std::nullopt;
}

std::string kind_text(mode_t m) {
  if (S_ISDIR(m)) return "is a folder; name a file";
  if (S_ISSOCK(m)) return "is a socket; name a file";
  if (S_ISBLK(m)) return "is a block device; name a file";
  return "is not a file gexec can write; name a file";
}

}  // namespace

Result<OutputTarget> resolve_output(const std::string& path) {
  if (path.empty()) return bad_input("the output path is empty");
  const auto refuse = [&](const std::string& why) { return bad_input(path_text(path) + ": " + why); };
  std::string p = path;
  for (int hop = 0;; ++hop) {
    if (const auto fd = own_descriptor(p)) {
      const int flags = ::fcntl(*fd, F_GETFL);
      if (flags < 0) return refuse("descriptor " + std::to_string(*fd) + " of this process is not open");
      if ((flags & O_ACCMODE) == O_RDONLY)
        return refuse("descriptor " + std::to_string(*fd) + " of this process is open for reading only");
      return OutputTarget{OutputTarget::Kind::descriptor, path, *fd};
    }
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      const int err = errno;
      // Nothing there (or a file where a folder should be): a file to create, whose folder the
      // caller checks and names.
      if (err == ENOENT || err == ENOTDIR) return OutputTarget{OutputTarget::Kind::file, p, -1};
      return refuse(errno_text(err));
    }
    if (S_ISREG(st.st_mode)) return OutputTarget{OutputTarget::Kind::file, p, -1};
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return OutputTarget{OutputTarget::Kind::stream, p, -1};
    if (!S_ISLNK(st.st_mode)) return refuse(kind_text(st.st_mode));
    if (hop >= kMaxLinks) return refuse("too many levels of symbolic links");
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
    if (n < 0) {
      const int err = errno;
      return refuse(errno_text(err));
    }
    if (size_t(n) >= sizeof buf) return refuse("a symbolic link's target is too long");
    const std::string target(buf, size_t(n));
    // Another process's descriptor reads as "pipe:[123]" or "socket:[45]", not a path.
    if (p.starts_with("/proc/") && !target.starts_with("/"))
      return refuse("names " + quote_text(target) + ", a descriptor of another process; name a file");
    const std::filesystem::path parent = std::filesystem::path(p).parent_path();
    // A relative target is relative to the link's folder; no lexical clean-up, since ".." after
    // a linked folder means that folder's parent.
    p = target.starts_with("/") || parent.empty() ? target : (parent / target).string();
  }
}

Result<int> open_output_in_place(const OutputTarget& t, const std::string& path) {
  if (t.kind == OutputTarget::Kind::descriptor) {
    const int fd = ::fcntl(t.fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      const int err = errno;
      return runtime_error(path_text(path) + ": cannot use descriptor " + std::to_string(t.fd) + ": " + errno_text(err));
    }
    return fd;
  }
  // O_NONBLOCK: a FIFO that no process reads is refused (ENXIO), not waited on.
  const int fd = ::open(t.path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO) return runtime_error(path_text(path) + ": is a FIFO that no process reads");
    return runtime_error(path_text(path) + ": cannot open it for writing: " + errno_text(err));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace gexec
