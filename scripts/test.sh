#!/usr/bin/env bash
# Sets up, builds everything, and runs the whole test suite (unit, CPU backend, command line,
# smoke, install, GPU where present). Ends with the tests that skipped and why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release
status=0
ctest --test-dir build/release --output-on-failure --timeout 1200 || status=$?
# ctest hides a skipped test's output: repeat each reason so that a skip is never silent.
log=build/release/Testing/Temporary/LastTest.log
if [ -f "$log" ]; then
  awk '/^[0-9]+\/[0-9]+ Testing: /{t=$3} /skipped: / && !/regular expression/{sub(/^.*skipped: /, ""); print "skipped: " t ": " $0}' "$log" | sort -u
  grep -h "^SKIPPED \[" "$log" | sed 's/^/skipped: python_api: /' | sort -u || true  # pytest -rs
fi
exit $status
