#!/usr/bin/env bash
# Installs the build's dependencies from the distribution where they are missing, and only then:
# a machine that has them all (the GPU machine, which reaches no registry) installs nothing.
#   scripts/setup.sh [--fuzz]   (--fuzz: also clang and libFuzzer's runtime, for scripts/fuzz.sh)
set -euo pipefail

have_header() {  # any of the given paths under the usual include roots
  for p in "$@"; do
    for root in /usr/include /usr/local/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
      [ -e "$root/$p" ] && return 0
    done
  done
  return 1
}

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v ninja >/dev/null || missing+=(ninja-build)
have_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)
have_header CLI/CLI.hpp || missing+=(libcli11-dev)
have_header spdlog/spdlog.h || missing+=(libspdlog-dev)
have_header catch2/catch.hpp catch2/catch_test_macros.hpp || missing+=(catch2)
have_header cblas.h openblas/cblas.h || missing+=(libopenblas-dev)
if [ "${1:-}" = "--fuzz" ]; then
  command -v clang++ >/dev/null || missing+=(clang)
  # libFuzzer's runtime comes in libclang-rt-dev, which clang only recommends.
  compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null || missing+=(libclang-rt-dev)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all dependencies present"
else
  echo "setup: installing ${missing[*]}"
  if ! command -v apt-get >/dev/null; then
    echo "setup: apt-get is not available; install these packages by hand: ${missing[*]}" >&2
    exit 1
  fi
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "setup: no CUDA toolkit found (expected /usr/local/cuda); build with -DGEXEC_CUDA=OFF for a CPU-only gexec" >&2
fi
