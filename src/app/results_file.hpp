// The measurements of a results file (`gexec gemm --json`, `gexec run --report`) as `gexec
// compare` matches them, read as a stream (SAX): memory grows with the number of points, not with
// the file's size, and every problem that keeps the file from being compared is found.
#pragma once

#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

struct Measure {
  double median_us = 0;  // 0: not timed
  double spread = 0;     // the relative noise of the samples (see compare_command.cpp)
  bool passed = true;
};

struct ResultsFile {
  std::string format;                                // "gexec.gemm" or "gexec.report"
  std::vector<std::pair<std::string, Measure>> rows;  // by key, in file order, no key twice
};

// The file's rows. bad_input, a line per problem (the first 10), each "PATH: /json/pointer: what
// is wrong": not JSON, neither format, a version this gexec does not read, no "points" (gemm) or
// no "timing" (report), a point without m, n, k or result, a negative or non-numeric time or
// spread, two points (or ops) with one key.
Result<ResultsFile> read_results(std::istream& in, const std::string& path);

// The same from the file at `path` (a regular file; bad_input otherwise).
Result<ResultsFile> read_results_file(const std::string& path);

}  // namespace gexec
