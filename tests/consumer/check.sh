#!/usr/bin/env bash
# Installs the build into a folder of it, moves the tree elsewhere (the package must be
# relocatable), checks the installed files and bin/gexec's RUNPATH, then builds this consumer
# project against find_package(gexec) and runs a graph with it and with the installed gexec.
#   check.sh BUILD_DIR CONSUMER_SOURCE_DIR CMAKE CXX [CXX_FLAGS LINKER_FLAGS]   (the flags of the build, e.g. ASan's)
set -euo pipefail
build=$1 src=$2 cmake=$3 cxx=$4 cxxflags=${5:-} ldflags=${6:-}
root=$build/test-install
rm -rf "$root"
"$cmake" --install "$build" --prefix "$root/first" >/dev/null
mv "$root/first" "$root/moved"
p=$root/moved
fail() { echo "FAIL: $*"; exit 1; }
man=""
[ -f "$build/gexec.1" ] && man=share/man/man1/gexec.1  # where help2man was found
for f in bin/gexec $man share/bash-completion/completions/gexec \
         share/doc/gexec/README.md share/doc/gexec/graph-format.md share/doc/gexec/graph.schema.json \
         share/doc/gexec/report-schema.md share/doc/gexec/performance.md share/gexec/graphs/gemm_bias_relu.json \
         lib/cmake/gexec/gexecConfig.cmake include/gexec/app/commands.hpp; do
  [ -e "$p/$f" ] || fail "not installed: $f"
done
echo "ok: installed files"
version=$("$p/bin/gexec" --version)
echo "$version" | head -4
if grep -q "^backends:.*cuda" <<<"$version"; then
  runpath=$(readelf -d "$p/bin/gexec" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  [ -n "$runpath" ] || fail "bin/gexec has no RUNPATH"
  for d in ${runpath//:/ }; do compgen -G "$d/libcublasLt.so*" >/dev/null && found=$d; done
  [ -n "${found:-}" ] || fail "RUNPATH $runpath holds no libcublasLt"
  echo "ok: RUNPATH $runpath"
fi
# The installed gexec finds its libraries without LD_LIBRARY_PATH.
env -u LD_LIBRARY_PATH "$p/bin/gexec" validate "$p/share/gexec/graphs/gemm_bias_relu.json"
"$p/bin/gexec" --help >/dev/null
bash -c "source '$p/share/bash-completion/completions/gexec' && complete -p gexec" >/dev/null || fail "bash completion does not load"
if [ -n "$man" ]; then
  grep -q "^\.SH SUBCOMMANDS" "$p/$man" || fail "the man page lacks its SUBCOMMANDS section"
  grep -q -- "--version" "$p/$man" || fail "the man page lacks the options of --help"
fi
echo "ok: installed gexec, man page, completion"

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
"$cmake" -S "$src" -B "$root/consumer-build" "${gen[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
  "-DCMAKE_CXX_FLAGS=$cxxflags" "-DCMAKE_EXE_LINKER_FLAGS=$ldflags" -DCMAKE_PREFIX_PATH="$p" >/dev/null
"$cmake" --build "$root/consumer-build" >/dev/null
out=$("$root/consumer-build/consumer" "$p/share/gexec/graphs/gemm_bias_relu.json") || { echo "$out"; fail "the consumer failed"; }
echo "$out" | tail -3
grep -q "^consumer of gexec " <<<"$out" || fail "the consumer printed no version"
bash "$(dirname "$0")/../no_driver_needed.sh" "$root/consumer-build/consumer" || fail "the consumer needs the GPU driver"
if grep -q "^backends:.*cpu" <<<"$version"; then
  grep -q "^result: pass" <<<"$out" || fail "the consumer's run did not pass"
fi
echo "ok: consumer built against $p and ran"
