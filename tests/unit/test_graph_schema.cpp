// docs/graph.schema.json against the files: every graph under graphs/ validates, and every file
// under tests/data/bad/ fails it at the pointer that the loader names (expected.tsv), except the
// files listed in tests/data/beyond_schema.tsv, whose problem no JSON Schema can express
// (those must pass the schema, so that the list stays exact).
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "json_schema.hpp"
#include "process.hpp"

using nlohmann::json;
using gexec::test::schema_errors;
using gexec::test::source_path;

namespace {

json schema() { return json::parse(std::ifstream(source_path("docs/graph.schema.json"))); }

// The first two columns of a tab-separated file: file name -> second column.
std::map<std::string, std::string> tsv(const std::string& rel) {
  std::map<std::string, std::string> out;
  std::ifstream f(source_path(rel));
  REQUIRE(f.good());
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    const auto tab2 = line.find('\t', tab + 1);
    out[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1, tab2 - tab - 1);
  }
  return out;
}

// The loader's pointers write a newline in a key as \u000a.
std::string escaped(std::string s) {
  for (size_t i; (i = s.find('\n')) != std::string::npos;) s.replace(i, 1, "\\u000a");
  return s;
}

bool prefix(const std::string& a, const std::string& b) { return b.rfind(a, 0) == 0; }
std::string parent(const std::string& p) { return p.substr(0, p.rfind('/')); }

// Whether a schema error at `at` is about the problem the loader reports at `pointer`: the same
// place, one inside the other, or a sibling key (colmajor's rank is a fault of layout or shape).
// "-" is a problem of the JSON text itself, which any schema error stands for.
bool near(const std::string& at, const std::string& pointer) {
  return pointer == "-" || prefix(at, pointer) || prefix(pointer, at) || parent(at) == parent(pointer);
}

}  // namespace

TEST_CASE("graph schema: the validator itself", "[schema]") {
  const json s = json::parse(R"({"type": "integer", "minimum": 0, "maximum": 18446744073709551615})");
  CHECK(schema_errors(json::parse("18446744073709551615"), s).empty());
  CHECK(schema_errors(json::parse("2.0"), s).empty());  // an integer by JSON Schema's rule
  CHECK(schema_errors(json::parse("18446744073709551616"), s).size() == 1);
  CHECK(schema_errors(json::parse("1.5"), s).size() == 1);
  CHECK(schema_errors(json::parse("-1"), s).size() == 1);
  CHECK(schema_errors(json(1), json::parse(R"({"multipleOf": 2})")).size() == 1);  // unknown keywords are errors
  const json one = json::parse(R"({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})");
  CHECK(schema_errors(json::parse(R"({"a": 1})"), one).empty());
  CHECK(schema_errors(json::parse(R"({"a": 1, "b": 2})"), one).size() == 1);
  CHECK(schema_errors(json::parse(R"({})"), one).size() == 1);
}

TEST_CASE("graph schema: every graph under graphs/ validates", "[schema]") {
  const json s = schema();
  int graphs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("graphs"))) {
    if (entry.path().extension() != ".json") continue;
    ++graphs;
    const auto errors = schema_errors(json::parse(std::ifstream(entry.path())), s);
    INFO(entry.path().string() << ": " << (errors.empty() ? "" : errors.front()));
    CHECK(errors.empty());
  }
  CHECK(graphs >= 5);
}

TEST_CASE("graph schema: every schema-level bad file fails it where the loader says", "[schema]") {
  const json s = schema();
  const auto expected = tsv("tests/data/bad/expected.tsv");
  const auto beyond = tsv("tests/data/beyond_schema.tsv");
  for (const auto& [file, why] : beyond) {
    INFO(file << " is listed in beyond_schema.tsv");
    CHECK(expected.count(file) == 1);
  }
  int failing = 0;
  for (const auto& [file, pointer] : expected) {
    const std::string path = source_path("tests/data/bad/" + file);
    json doc;
    bool parsed = true;
    try {
      doc = json::parse(std::ifstream(path));
    } catch (const json::exception&) {
      parsed = false;
    }
    std::vector<std::string> errors;
    if (parsed) errors = schema_errors(doc, s);
    std::ostringstream all;
    for (const auto& e : errors) all << "\n  " << e;
    INFO(file << " (loader: " << pointer << "), schema:" << all.str());
    if (beyond.count(file)) {
      CHECK((!parsed || errors.empty()));
      continue;
    }
    CHECK(parsed);
    CHECK_FALSE(errors.empty());
    if (errors.empty()) continue;
    bool close = false;
    for (const auto& e : errors) close = close || near(escaped(e.substr(0, e.find(": "))), pointer);
    CHECK(close);
    ++failing;
  }
  CHECK(failing >= 40);
}
