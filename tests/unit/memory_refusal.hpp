// The checks every test of a run refused for memory makes: one helper, so that the host and
// device refusals are held to the same message and exit status.
#pragma once

#include <cstdint>
#include <string>

#include "catch.hpp"
#include "process.hpp"

namespace gexec::test {

// `r` is a run refused before anything ran for lack of `kind` ("host" or "device") memory: exit 3,
// no signal, "the graph needs N bytes of <kind> memory ... bytes free", no result line. Returns N.
inline int64_t check_memory_refusal(const ProcessResult& r, const std::string& kind) {
  CHECK(r.status == 3);
  CHECK(r.signal == 0);
  CHECK(has(r.output, "the graph needs "));
  CHECK(has(r.output, "bytes of " + kind + " memory"));
  CHECK(has(r.output, "bytes free"));
  CHECK_FALSE(has(r.output, "result:"));
  const size_t at = r.output.find("the graph needs ");
  REQUIRE(at != std::string::npos);
  return std::stoll(r.output.substr(at + 16));
}

}  // namespace gexec::test
