// Regular-file reads and atomic writes (temporary file beside the target, then rename).
#include "gexec/io/file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "gexec/io/output_target.hpp"
#include "gexec/io/text.hpp"

namespace gexec {
namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "is a folder, not a file";
  if (S_ISFIFO(m)) return "is not a regular file (a FIFO)";
  if (S_ISCHR(m)) return "is not a regular file (a character device)";
  if (S_ISBLK(m)) return "is not a regular file (a block device)";
  if (S_ISSOCK(m)) return "is not a regular file (a socket)";
  return "is not a regular file";
}

Error read_error(const std::string& path, const std::string& why) {
  return bad_input(path_text(path) + ": cannot read the file: " + why);
}

// Temporary files in progress, for the signal handler: fixed storage, written before the
// handler can see a slot as used, so that it only calls unlink (async-signal-safe).
constexpr int kSlots = 8;
constexpr size_t kSlotBytes = 4096;
char g_temp[kSlots][kSlotBytes];
volatile sig_atomic_t g_used[kSlots];
bool g_handlers = false;

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i]) ::unlink(g_temp[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  if (g_handlers) return;
  g_handlers = true;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    // A signal the caller ignores stays ignored; one it handles stays its own.
    if (old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_temps_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

void install_temp_file_cleanup() { install_handlers(); }

namespace {

// The template is copied into a slot marked used before mkstemp fills it in place and creates
// the file: a signal at any moment finds the name of whatever file exists.
int claim_slot(const std::string& temp) {
  if (temp.size() >= kSlotBytes) return -1;
  for (int i = 0; i < kSlots; ++i)
    if (!g_used[i]) {
      std::memcpy(g_temp[i], temp.c_str(), temp.size() + 1);
      g_used[i] = 1;
      return i;
    }
  return -1;
}

void release_slot(int slot) {
  if (slot >= 0) g_used[slot] = 0;
}

}  // namespace

std::string errno_text(int err) { return std::strerror(err); }

// --- reading ---

Result<InputFile> InputFile::open(const std::string& path) {
  if (path.empty()) return bad_input("the file path is empty");
  if (path.find('\0') != std::string::npos) return bad_input(path_text(path) + ": the path holds a NUL byte");
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. The mode is
  // checked on the descriptor itself, so nothing can be swapped in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return read_error(path, errno_text(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return read_error(path, errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return bad_input(path_text(path) + ": " + kind_of(st.st_mode));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return InputFile(fd, int64_t(st.st_size), path);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status InputFile::read(void* dst, size_t n) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::read(fd_, p, n);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return read_error(path_, errno_text(err));
    }
    if (got == 0) return read_error(path_, "the file ended early (was it changed while being read?)");
    p += got;
    n -= size_t(got);
  }
  return {};
}

Result<size_t> InputFile::read_some(void* dst, size_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, dst, n);
    if (got >= 0) return size_t(got);
    if (errno == EINTR) continue;
    const int err = errno;
    return read_error(path_, errno_text(err));
  }
}

Result<std::string> InputFile::read_all() {
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  const int64_t rest = size_ - (at > 0 ? int64_t(at) : 0);
  std::string text(size_t(rest > 0 ? rest : 0), '\0');
  GEXEC_TRY(read(text.data(), text.size()));
  return text;
}

Status check_regular_file(const std::string& path) {
  if (path.empty()) return bad_input("the file path is empty");
  // A system call would read the path only up to the NUL: another file than the one named.
  if (path.find('\0') != std::string::npos) return bad_input(path_text(path) + ": the path holds a NUL byte");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return read_error(path, errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) return bad_input(path_text(path) + ": " + kind_of(st.st_mode));
  return {};
}

// --- writing ---

Result<OutputFile> OutputFile::create(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return runtime_error("the output path is empty");
  if (path.find('\0') != std::string::npos) return bad_input(path_text(path) + ": the path holds a NUL byte");
  auto resolved = resolve_output(path);
  if (!resolved) return runtime_error(resolved.error().message);  // found now, while writing: exit 3
  if (resolved->kind != OutputTarget::Kind::file) {
    auto fd = open_output_in_place(*resolved, path);
    if (!fd) return fd.error();
    return OutputFile(*fd, path, "", "", -1);
  }
  // The file at the end of the links is replaced in its own folder: the links stay links.
  const std::string& real = resolved->path;
  const fs::path target(real);
  const std::string parent = target.parent_path().string();
  const std::string dir = parent.empty() ? std::string(".") : parent;
  std::string name = target.filename().string();
  if (name.size() > 200) name.resize(200);  // the temporary's name must fit NAME_MAX too
  std::string temp = dir + "/." + name + ".gexec-tmp-XXXXXX";
  install_handlers();
  const int slot = claim_slot(temp);
  const int fd = ::mkstemp(slot >= 0 ? g_temp[slot] : temp.data());
  if (fd < 0) {
    const int err = errno;
    release_slot(slot);
    return runtime_error(path_text(path) + ": cannot create a file in " + path_text(dir) + ": " + errno_text(err));
  }
  if (slot >= 0) temp = g_temp[slot];
  // mkstemp makes the file 0600; give it what a plain create would (or the old file's mode).
  struct stat st {};
  mode_t mode;
  if (::stat(real.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  return OutputFile(fd, path, real, temp, slot);
}

OutputFile::OutputFile(OutputFile&& o) noexcept
    : fd_(o.fd_), path_(std::move(o.path_)), target_(std::move(o.target_)), temp_(std::move(o.temp_)), slot_(o.slot_) {
  o.fd_ = -1;
  o.slot_ = -1;
  o.temp_.clear();
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  release_slot(slot_);
  slot_ = -1;
}

Status OutputFile::write(const void* data, size_t n) {
  if (fd_ < 0) return runtime_error(path_text(path_) + ": the file is already closed");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      const bool in_place = temp_.empty();
      discard();
      return runtime_error(path_text(path_) + ": cannot write the file: " + errno_text(err) +
                           (in_place ? " (written in place: part of it may have been written)"
                                     : " (the file was left as it was)"));
    }
    p += put;
    n -= size_t(put);
  }
  return {};
}

Status OutputFile::finish(bool keep_open) {
  if (fd_ < 0) return runtime_error(path_text(path_) + ": the file is already closed");
  auto fail = [this](const char* what) {
    const int err = errno;
    discard();
    return runtime_error(path_text(path_) + ": " + what + ": " + errno_text(err) + " (the file was left as it was)");
  };
  if (temp_.empty()) {  // written in place: nothing to rename
    if (!keep_open && ::close(fd_) != 0) {
      fd_ = -1;
      return fail("cannot write the file");
    }
    if (!keep_open) fd_ = -1;
    return {};
  }
  if (!keep_open) {
    if (::close(fd_) != 0) {
      fd_ = -1;
      return fail("cannot write the file");
    }
    fd_ = -1;
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) return fail("cannot replace the file");
  temp_.clear();
  release_slot(slot_);
  slot_ = -1;
  return {};
}

Status OutputFile::commit() { return finish(false); }

Result<int> OutputFile::commit_keep_open() {
  GEXEC_TRY(finish(true));
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Status write_file_atomic(const std::string& path, std::string_view text) {
  auto f = OutputFile::create(path);
  if (!f) return f.error();
  GEXEC_TRY(f->write(text));
  return f->commit();
}

}  // namespace gexec
