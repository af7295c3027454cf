#!/usr/bin/env bash
# Installs the build's dependencies from the distribution where they are missing, and only then.
# Each dependency counts as present when its Debian package is installed, or else when the thing
# itself is there (its CMake package, its library, its tool), so that a machine that got them from
# elsewhere (the GPU machine, which reaches no registry: OpenBLAS and Catch2 built from source)
# installs nothing. A header that another package also ships (cblas.h, which the reference BLAS
# has too) is never taken as proof.
#   scripts/setup.sh [--fuzz] [--onnx-tests] [--optional] [--check]
#     --fuzz: also clang and libFuzzer's runtime, for scripts/fuzz.sh
#     --onnx-tests: ONNX's conformance data (libonnx-testdata) is required, not optional (CI runs
#       scripts/onnx_conformance.sh over it)
#     --optional: also install the optional packages when nothing required is missing (they are
#       otherwise installed only together with a required one, so that a machine without a
#       registry never waits on apt-get for them)
#     --check: say what is missing and install nothing (exit 1 when something required is missing)
#   GEXEC_SETUP_IGNORE_DPKG=1 ignores the package database, to try the other checks (a test does).
set -euo pipefail

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
prefixes=(/usr/local /usr /opt/OpenBLAS)
[ -n "${CMAKE_PREFIX_PATH:-}" ] && IFS=: read -ra extra <<<"$CMAKE_PREFIX_PATH" && prefixes+=("${extra[@]}")
fuzz=0 check=0 optional=0 onnx_tests=0
for a in "$@"; do
  case $a in
    --fuzz) fuzz=1 ;;
    --onnx-tests) onnx_tests=1 ;;
    --check) check=1 ;;
    --optional) optional=1 ;;
    *) echo "setup: unknown option $a (expected --fuzz, --onnx-tests, --optional, --check)" >&2; exit 2 ;;
  esac
done
where=""  # set by the checks: what was found in place of the package

deb_installed() { [ "${GEXEC_SETUP_IGNORE_DPKG:-0}" != 1 ] && [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

found_file() {  # found_file GLOB...: the first existing match, into $where
  local g f
  for g in "$@"; do
    for f in $g; do
      [ -e "$f" ] && { where=$f; return 0; }
    done
  done
  return 1
}

tool() { where=$(command -v "$1" 2>/dev/null) || return 1; }

cmake_package() {  # cmake_package NAME: NAMEConfig.cmake or name-config.cmake where find_package looks
  local lower p globs=()
  lower=$(tr '[:upper:]' '[:lower:]' <<<"$1")
  for p in "${prefixes[@]}"; do
    for d in lib lib64 "lib/$multiarch" share; do
      globs+=("$p/$d/cmake/$1*/$1Config.cmake" "$p/$d/cmake/$1*/$lower-config.cmake")
    done
  done
  found_file "${globs[@]}"
}

openblas() {  # pkg-config's openblas, or OpenBLAS's own header and its library
  if pkg-config --exists openblas 2>/dev/null; then where="pkg-config openblas $(pkg-config --modversion openblas)"; return 0; fi
  local p inc=() lib=() h
  for p in "${prefixes[@]}"; do
    inc+=("$p/include/openblas_config.h" "$p/include/openblas/openblas_config.h" "$p/include/$multiarch/openblas*/openblas_config.h")
    lib+=("$p/lib/libopenblas*.so" "$p/lib64/libopenblas*.so" "$p/lib/$multiarch/libopenblas*.so" "$p/lib/$multiarch/openblas*/libopenblas*.so")
  done
  found_file "${inc[@]}" || return 1
  h=$where
  found_file "${lib[@]}" || return 1
  where="$h and $where"
}

protobuf_lite() {  # protobuf's CMake package, or its headers and its lite library
  cmake_package protobuf && return 0
  local p inc=() lib=() h
  for p in "${prefixes[@]}"; do
    inc+=("$p/include/google/protobuf/message_lite.h")
    for d in lib lib64 "lib/$multiarch"; do lib+=("$p/$d/libprotobuf-lite.so" "$p/$d/libprotobuf-lite.a"); done
  done
  found_file "${inc[@]}" || return 1
  h=$where
  found_file "${lib[@]}" || return 1
  where="$h and $where"
}

onnx_python_dir() {  # the folder of the Python onnx package, of python3 on PATH or /usr/bin/python3
  local py d
  for py in python3 /usr/bin/python3; do
    d=$("$py" -c "import onnx, os; print(os.path.dirname(onnx.__file__))" 2>/dev/null) && [ -n "$d" ] && { echo "$d"; return 0; }
  done
  return 1
}

onnx_proto() {  # ONNX's schema: GEXEC_ONNX_PROTO, libonnx-dev's, or the Python onnx package's
  local p globs=() d
  if [ -n "${GEXEC_ONNX_PROTO:-}" ] && [ -f "$GEXEC_ONNX_PROTO" ]; then where=$GEXEC_ONNX_PROTO; return 0; fi
  for p in "${prefixes[@]}"; do globs+=("$p/include/onnx/onnx.proto"); done
  found_file "${globs[@]}" && return 0
  d=$(onnx_python_dir) && [ -f "$d/onnx.proto" ] && where="$d/onnx.proto"
}

onnx_testdata() {  # ONNX's backend test data: libonnx-testdata's, or the Python onnx package's
  local p globs=() d
  for p in "${prefixes[@]}"; do globs+=("$p/include/onnx/backend/test/data/node/test_add/model.onnx"); done
  found_file "${globs[@]}" && return 0
  d=$(onnx_python_dir) && [ -f "$d/backend/test/data/node/test_add/model.onnx" ] && where="$d/backend/test/data"
}

py() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "$1" >/dev/null 2>&1 && where="/usr/bin/python3: $1"; }
python_headers() {
  local inc
  inc=$([ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null) || return 1
  found_file "$inc/Python.h"
}

missing=() missing_optional=() elsewhere=()
# need [--optional] PACKAGE CHECK ARGS...: PACKAGE is present when installed, or when CHECK finds it.
need() {
  local opt=0
  [ "$1" = --optional ] && { opt=1; shift; }
  local pkg=$1; shift
  if deb_installed "$pkg"; then return 0; fi
  # libopenblas-dev is a metapackage: any of its variants provides the same library.
  if [ "$pkg" = libopenblas-dev ]; then
    for v in libopenblas-pthread-dev libopenblas-openmp-dev libopenblas-serial-dev; do deb_installed "$v" && return 0; done
  fi
  if [ $# -gt 0 ] && "$@"; then elsewhere+=("$pkg: $where"); return 0; fi
  if [ $opt = 1 ]; then missing_optional+=("$pkg"); else missing+=("$pkg"); fi
}

need cmake tool cmake
need g++ tool g++
need ninja-build tool ninja
need pkg-config tool pkg-config
need nlohmann-json3-dev cmake_package nlohmann_json
need libcli11-dev cmake_package CLI11
need libspdlog-dev cmake_package spdlog
need catch2 cmake_package Catch2
need libopenblas-dev openblas
# ONNX input: protobuf and protoc from the distribution, ONNX's schema onnx.proto (libonnx-dev).
need protobuf-compiler tool protoc
need libprotobuf-dev protobuf_lite
need libonnx-dev onnx_proto
# The man page (help2man, at build time) and the Python side (tests, a later Python API) are
# wanted, not required: the build goes on without them.
need --optional help2man tool help2man
need --optional python3-dev python_headers
need --optional python3-numpy py "import numpy"
need --optional python3-pytest py "import pytest"
need --optional pybind11-dev cmake_package pybind11
# `pip install .` into a venv (the test pip_install): venv with its ensurepip, and setuptools.
need --optional python3-venv py "import ensurepip, venv"
need --optional python3-setuptools py "import setuptools"
# ONNX's conformance data (scripts/onnx_conformance.sh) and Python's onnx (a test builds models with it).
if [ $onnx_tests = 1 ]; then need libonnx-testdata onnx_testdata; else need --optional libonnx-testdata onnx_testdata; fi
need --optional python3-onnx py "import onnx"
if [ $fuzz = 1 ]; then
  need clang tool clang++
  # libFuzzer's runtime comes in libclang-rt-dev, which clang only recommends.
  need libclang-rt-dev found_file "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a"
fi

for e in "${elsewhere[@]}"; do echo "setup: $e (not from the Debian package)"; done

apt_install() {  # apt_install PACKAGE...: 0 when apt-get installed them all
  command -v apt-get >/dev/null || return 1
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq >/dev/null || return 1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ $check = 1 ]; then
  [ ${#missing_optional[@]} -gt 0 ] && echo "setup: missing (optional): ${missing_optional[*]}"
  [ ${#missing[@]} -gt 0 ] && { echo "setup: missing: ${missing[*]}"; exit 1; }
  echo "setup: every required dependency present"
  exit 0
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} ${missing_optional[*]}"
  if ! apt_install "${missing[@]}" "${missing_optional[@]}"; then
    echo "setup: could not install them with apt-get; install by hand: ${missing[*]} ${missing_optional[*]}" >&2
    exit 1
  fi
  echo "setup: installed ${missing[*]} ${missing_optional[*]}"
elif [ ${#missing_optional[@]} -gt 0 ] && [ $optional = 0 ]; then
  echo "setup: every required dependency present, nothing installed; optional and missing: ${missing_optional[*]} (bash scripts/setup.sh --optional installs them)"
elif [ ${#missing_optional[@]} -gt 0 ]; then
  echo "setup: installing ${missing_optional[*]} (optional)"
  if apt_install "${missing_optional[@]}"; then
    echo "setup: installed ${missing_optional[*]}"
  else
    echo "setup: could not install ${missing_optional[*]}; the build goes on without them" >&2
  fi
else
  echo "setup: all dependencies present, nothing installed"
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "setup: no CUDA toolkit found (expected /usr/local/cuda): the build leaves the CUDA backend out" >&2
fi
