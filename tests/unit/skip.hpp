// Tests whose backend this build lacks register anyway and report themselves skipped, with the
// reason, instead of compiling to nothing. They carry the tag [cpu] like the tests they stand
// for; tests/CMakeLists.txt runs "[cpu]" as the ctest test `cpu`, which ctest then marks
// skipped on the "skipped:" line.
#pragma once

#include "catch.hpp"

#define GEXEC_NO_CPU_BACKEND "this build has no CPU backend (configured with -DGEXEC_CPU=OFF)"

// GEXEC_SKIPPED_TEST("name", "[tags]", "reason"): one test case that warns "skipped: reason".
#define GEXEC_SKIPPED_TEST(name, tags, reason) \
  TEST_CASE(name " (skipped)", tags) {         \
    WARN("skipped: " reason);                  \
    SUCCEED();                                 \
  }
