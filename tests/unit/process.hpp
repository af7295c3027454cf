// Runs the real gexec binary from a test and captures what it printed and how it exited.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace gexec::test {

struct ProcessResult {
  int status = -1;      // the exit status; -1 when killed by a signal
  int signal = 0;       // the signal that killed it, if any
  std::string output;   // stdout and stderr together
};

// A shell command line, its stdout and stderr captured together.
inline ProcessResult shell(const std::string& cmd) {
  ProcessResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int w = pclose(p);
  if (WIFEXITED(w)) r.status = WEXITSTATUS(w);
  if (WIFSIGNALED(w)) r.signal = WTERMSIG(w);
  return r;
}

// `s` in single quotes, for a shell command line (no quote of its own inside).
inline std::string q(const std::string& s) { return "'" + s + "'"; }

// `args` is appended to the binary's path as is (quote it yourself).
inline ProcessResult run_gexec(const std::string& args) { return shell(q(GEXEC_BINARY) + " " + args); }

// Whether a graph file uses block scales, which the device reference does not widen (the check
// takes the CPU reference for them): the tests of that reference leave those out, and say so.
inline bool uses_block_scales(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {}).find("\"block\"") != std::string::npos;
}

// Whether `text` (a command's output, an error message) contains `part`.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::string source_path(const std::string& rel) { return std::string(GEXEC_SOURCE_DIR) + "/" + rel; }

}  // namespace gexec::test
