// The file layer (io/file.hpp, output_target.hpp, append_file.hpp, locked_update.hpp) and message
// text (io/text.hpp): regular-file reads that never wait on a FIFO, writes that are whole or
// absent and go through links, appends and updates that concurrent processes do not lose, and
// text that is always printable UTF-8.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "catch.hpp"
#include "gexec/io/append_file.hpp"
#include "gexec/io/file.hpp"
#include "gexec/io/locked_update.hpp"
#include "gexec/io/text.hpp"

using namespace gexec;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& tag) {
  const fs::path p = fs::temp_directory_path() / ("gexec_fileio_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

}  // namespace

TEST_CASE("printable escapes what is not UTF-8 and keeps what is", "[text]") {
  CHECK(printable("plain ascii") == "plain ascii");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(printable("caf\xe9") == "caf\\xe9");                  // Latin-1
  CHECK(printable("\xc3") == "\\xc3");                        // a sequence cut short
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");      // a surrogate
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");               // an overlong
  CHECK(printable("a\nb\x1b[31m") == "a\\u000ab\\u001b[31m");
  CHECK(printable("a\nb", true) == "a\nb");
  CHECK(quote_text(std::string(100, 'x')) == "\"" + std::string(kQuoteChars, 'x') + "...\"");
  CHECK(quote_text("say \"hi\"") == "\"say \\\"hi\\\"\"");
  // A name from the input as it is where it is an identifier, quoted where it could read as words.
  CHECK(name_text("Relu") == "Relu");
  CHECK(name_text("ai.onnx.ml") == "ai.onnx.ml");
  CHECK(name_text("\x9dinternal:e") == "\"\\x9dinternal:e\"");
  CHECK(name_text("") == "\"\"");
  CHECK(name_text(std::string(100, 'x')) == quote_text(std::string(100, 'x')));
  // The cut counts characters: never inside a UTF-8 sequence.
  std::string e;
  for (int i = 0; i < 60; ++i) e += "\xc3\xa9";
  const std::string qe = quote_text(e, 10);
  CHECK(printable(qe) == qe);
  CHECK(qe.size() == 1 + 20 + 3 + 1);
  const std::string long_path = "/" + std::string(5000, 'd') + "/file.npy";
  CHECK(path_text(long_path).size() < 300);
  CHECK(path_text(long_path).ends_with("/file.npy"));
  CHECK(dump_json(nlohmann::json{{"k", "caf\xe9"}}, -1) == "{\"k\":\"caf\xef\xbf\xbd\"}");  // replaced, not thrown
}

TEST_CASE("InputFile opens regular files only and gives the system's reason", "[file]") {
  const fs::path d = scratch("in");
  REQUIRE(mkfifo((d / "fifo").c_str(), 0600) == 0);
  auto f = InputFile::open((d / "fifo").string());  // would block forever without O_NONBLOCK
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().code == Exit::bad_input);
  CHECK(f.error().message.ends_with("is not a regular file (a FIFO)"));
  auto folder = InputFile::open(d.string());
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error().message.ends_with("is a folder, not a file"));
  auto empty = InputFile::open("");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "the file path is empty");
  auto missing = InputFile::open((d / "missing").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.ends_with("cannot read the file: No such file or directory"));
  std::ofstream(d / "x") << "hello";
  auto x = InputFile::open((d / "x").string());
  REQUIRE(x.ok());
  CHECK(x->size() == 5);
  auto text = x->read_all();
  REQUIRE(text.ok());
  CHECK(*text == "hello");
  fs::remove_all(d);
}

TEST_CASE("OutputFile replaces the target only when whole, and only a regular file", "[file]") {
  const fs::path d = scratch("out");
  const fs::path target = d / "t.txt";
  std::ofstream(target) << "old";
  {
    auto f = OutputFile::create(target.string());
    REQUIRE(f.ok());
    REQUIRE(f->write("new, half written").ok());
    CHECK(read(target) == "old");  // not yet
    // Destroyed without commit: as if an error stopped the writer.
  }
  CHECK(read(target) == "old");
  int files = 0;
  for (const auto& e : fs::directory_iterator(d)) ++files, (void)e;
  CHECK(files == 1);  // the temporary is gone
  REQUIRE(write_file_atomic(target.string(), "new").ok());
  CHECK(read(target) == "new");
  // A FIFO that no process reads is refused, not waited on, and never renamed over.
  REQUIRE(mkfifo((d / "fifo").c_str(), 0600) == 0);
  Status s = write_file_atomic((d / "fifo").string(), "x");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("is a FIFO that no process reads") != std::string::npos);
  struct stat st {};
  REQUIRE(stat((d / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // No folder: the reason from the system.
  s = write_file_atomic((d / "no/such/t.txt").string(), "x");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("No such file or directory") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("OutputFile writes through symbolic links and leaves the links as they were", "[file]") {
  const fs::path d = scratch("link");
  fs::create_directories(d / "real");
  std::ofstream(d / "real" / "t.txt") << "old";
  fs::create_symlink("real/t.txt", d / "rel");         // relative to the link's folder
  fs::create_symlink(d / "rel", d / "chain");            // a link to a link
  fs::create_symlink("real/new.txt", d / "dangling");   // a link to a file not there yet
  REQUIRE(write_file_atomic((d / "rel").string(), "one").ok());
  CHECK(fs::is_symlink(fs::symlink_status(d / "rel")));
  CHECK(read(d / "real" / "t.txt") == "one");
  REQUIRE(write_file_atomic((d / "chain").string(), "two").ok());
  CHECK(fs::is_symlink(fs::symlink_status(d / "chain")));
  CHECK(fs::is_symlink(fs::symlink_status(d / "rel")));
  CHECK(read(d / "real" / "t.txt") == "two");
  REQUIRE(write_file_atomic((d / "dangling").string(), "three").ok());
  CHECK(fs::is_symlink(fs::symlink_status(d / "dangling")));
  CHECK(read(d / "real" / "new.txt") == "three");
  // The temporary is made beside the real file and renamed there: nothing is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(d / "real")) ++files, (void)e;
  CHECK(files == 2);
  fs::create_symlink("loop", d / "loop");
  Status s = write_file_atomic((d / "loop").string(), "x");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("too many levels of symbolic links") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("OutputFile writes a FIFO, a device and this process's descriptors in place", "[file]") {
  const fs::path d = scratch("inplace");
  // A FIFO with a reader gets the text.
  REQUIRE(mkfifo((d / "fifo").c_str(), 0600) == 0);
  const int reader = ::open((d / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  REQUIRE(write_file_atomic((d / "fifo").string(), "through the fifo").ok());
  char buf[64] = {};
  CHECK(::read(reader, buf, sizeof buf) == 16);
  CHECK(std::string(buf) == "through the fifo");
  ::close(reader);
  // /dev/null stays a device.
  REQUIRE(write_file_atomic("/dev/null", "gone").ok());
  struct stat st {};
  REQUIRE(stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A descriptor open on a regular file (as `> out.txt` makes stdout) is written on, after what
  // was written there before, not replaced: the file keeps its inode and its first bytes.
  const fs::path out = d / "out.txt";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "table\n", 6) == 6);
  struct stat before {};
  REQUIRE(stat(out.c_str(), &before) == 0);
  REQUIRE(write_file_atomic("/dev/fd/" + std::to_string(fd), "csv\n").ok());
  REQUIRE(write_file_atomic("/proc/self/fd/" + std::to_string(fd), "more\n").ok());
  ::close(fd);
  CHECK(read(out) == "table\ncsv\nmore\n");
  struct stat after {};
  REQUIRE(stat(out.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);
  // A descriptor that is closed, or open for reading only, is refused.
  const int ro = ::open(out.c_str(), O_RDONLY);
  REQUIRE(ro >= 0);
  Status s = write_file_atomic("/dev/fd/" + std::to_string(ro), "x");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("open for reading only") != std::string::npos);
  ::close(ro);
  s = write_file_atomic("/dev/fd/" + std::to_string(ro), "x");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("is not open") != std::string::npos);
  fs::remove_all(d);
}

namespace {

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream f(p);
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("AppendFile: a header once, whole records, another header refused", "[file][append]") {
  const fs::path d = scratch("append");
  const std::string path = (d / "rows.csv").string();
  std::ofstream(path) << "old file\n";
  {
    auto f = AppendFile::replace(path, "h\n");
    REQUIRE(f.ok());
    CHECK(read(path) == "h\n");  // replaced at once, before any record
    REQUIRE(f->append("1\n").ok());
    REQUIRE(f->append("2\n").ok());
  }
  CHECK(read(path) == "h\n1\n2\n");
  struct stat before {};
  REQUIRE(stat(path.c_str(), &before) == 0);
  auto header = [](const FileHead& h) -> Result<std::string> {
    if (h.empty) return std::string("h\n");
    if (h.first_line != "h") return bad_input("another header: " + h.first_line);
    return std::string(h.ends_in_newline ? "" : "\n");
  };
  {
    auto f = AppendFile::extend(path, header);
    REQUIRE(f.ok());
    REQUIRE(f->append("3\n").ok());
  }
  CHECK(read(path) == "h\n1\n2\n3\n");
  struct stat after {};
  REQUIRE(stat(path.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // appended in place, not rewritten
  std::ofstream(d / "other.csv") << "x,y\n1,2";
  auto other = AppendFile::extend((d / "other.csv").string(), header);
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().code == Exit::bad_input);
  CHECK(read(d / "other.csv") == "x,y\n1,2");
  auto fresh = AppendFile::extend((d / "new.csv").string(), header);
  REQUIRE(fresh.ok());
  REQUIRE(fresh->append("1\n").ok());
  CHECK(read(d / "new.csv") == "h\n1\n");
  fs::remove_all(d);
}

TEST_CASE("AppendFile: processes appending at once lose no record and cut none", "[file][append]") {
  const fs::path d = scratch("concurrent");
  const std::string path = (d / "rows.csv").string();
  constexpr int kWriters = 4, kRecords = 300;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto f = AppendFile::extend(path, [](const FileHead& h) -> Result<std::string> {
        return std::string(h.empty ? "header\n" : "");
      });
      if (!f) _exit(2);
      for (int r = 0; r < kRecords; ++r)
        if (!f->append("writer " + std::to_string(w) + " record " + std::to_string(r) + std::string(200, '.') + "\n"))
          _exit(3);
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const auto lines = lines_of(path);
  REQUIRE(lines.size() == 1 + kWriters * kRecords);
  CHECK(lines[0] == "header");
  for (size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(lines[i].rfind("writer ", 0) == 0);
    CHECK(lines[i].size() > 200);
  }
  fs::remove_all(d);
}

TEST_CASE("update_file_locked: processes updating at once lose none of their changes", "[file]") {
  const fs::path d = scratch("locked");
  const std::string path = (d / "counts.txt").string();
  constexpr int kWriters = 4, kUpdates = 50;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int u = 0; u < kUpdates; ++u) {
        const Status s = update_file_locked(path, [](const std::optional<std::string>& now) -> Result<std::string> {
          return now.value_or("") + "x";
        });
        if (!s) _exit(3);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(read(path) == std::string(kWriters * kUpdates, 'x'));
  fs::remove_all(d);
}
