// Runs `gexec validate` on every malformed file of tests/data/bad and checks what it reports.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "catch.hpp"
#include "gexec/io/text.hpp"

namespace fs = std::filesystem;

namespace {

struct Expected {
  std::string file, pointer, fragment;
};

const std::string kBadDir = std::string(GEXEC_SOURCE_DIR) + "/tests/data/bad";

std::vector<Expected> read_expected() {
  std::vector<Expected> out;
  std::ifstream in(kBadDir + "/expected.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    Expected e;
    std::istringstream fields(line);
    std::getline(fields, e.file, '\t');
    std::getline(fields, e.pointer, '\t');
    std::getline(fields, e.fragment);
    out.push_back(e);
  }
  return out;
}

struct Run {
  int wait_status = -1;
  std::string output;
};

// Runs a command with stderr joined to stdout.
Run run(const std::string& args) {
  Run r;
  const std::string cmd = std::string("'") + GEXEC_BINARY + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.wait_status = pclose(p);
  return r;
}

bool has_line_with(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("every bad file is listed in expected.tsv", "[bad]") {
  const auto expected = read_expected();
  REQUIRE(expected.size() >= 45);
  std::set<std::string> listed;
  for (const Expected& e : expected) {
    CHECK(listed.insert(e.file).second);  // each file once
    CHECK_FALSE(e.fragment.empty());
  }
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kBadDir)) {
    const std::string name = entry.path().filename().string();
    if (name == "expected.tsv") continue;
    ++files;
    INFO(name);
    CHECK(listed.count(name) == 1);
  }
  CHECK(size_t(files) == listed.size());
}

TEST_CASE("gexec validate refuses every bad file with its pointer and reason", "[bad]") {
  for (const Expected& e : read_expected()) {
    const std::string path = kBadDir + "/" + e.file;
    const Run r = run("validate '" + path + "'");
    INFO(e.file << "\n" << r.output);
    // Exit status 2 from a normal exit: no crash, no signal.
    REQUIRE(WIFEXITED(r.wait_status));
    CHECK(WEXITSTATUS(r.wait_status) == 2);
    if (e.pointer == "-")
      CHECK(has_line_with(r.output, {path + ":" + e.fragment}));
    else
      CHECK(has_line_with(r.output, {path + ": " + e.pointer + ": ", e.fragment}));
    CHECK(r.output.find(": ok (") == std::string::npos);
    // Every message is bounded, valid UTF-8 with no control characters.
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      CHECK(gexec::printable(line) == line);
      CHECK(line.size() <= 600);
    }
  }
}

TEST_CASE("gexec validate accepts the example graphs", "[bad]") {
  for (const auto& entry : fs::directory_iterator(std::string(GEXEC_SOURCE_DIR) + "/graphs")) {
    if (entry.path().extension() != ".json") continue;
    const Run r = run("validate '" + entry.path().string() + "'");
    INFO(r.output);
    REQUIRE(WIFEXITED(r.wait_status));
    CHECK(WEXITSTATUS(r.wait_status) == 0);
    CHECK(r.output.find(entry.path().string() + ": ok (") != std::string::npos);
  }
}
