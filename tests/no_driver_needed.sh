#!/usr/bin/env bash
# Fails when a binary lists the GPU driver's library (libcuda.so.1) as NEEDED in its dynamic
# section: it could not start on a machine without a driver, where --version, --dry-run and the
# CPU backend must work. Arguments are binaries, or build folders, for which every gexec*
# executable and shared object up to two levels down is checked (gexec, tests/gexec_tests,
# python/gexec*.so, the benchmarks).
#   tests/no_driver_needed.sh BUILD_DIR|BINARY...
set -euo pipefail
files=()
for a in "$@"; do
  if [ -d "$a" ]; then
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$a" -maxdepth 2 -type f -name 'gexec*' \
      \( -perm -u+x -o -name '*.so' \) -not -path '*/CMakeFiles/*' -print0 | sort -z)
  elif [ -f "$a" ]; then
    files+=("$a")
  else
    echo "FAIL: $a: no such binary (build it first)"
    exit 1
  fi
done
mapfile -t files < <(printf '%s\n' "${files[@]}" | awk '!seen[$0]++')
if command -v readelf >/dev/null; then
  dynamic() { readelf -d "$1"; }
elif command -v objdump >/dev/null; then
  dynamic() { objdump -p "$1"; }
else
  echo "skipped: neither readelf nor objdump (binutils) is installed"
  exit 77
fi
checked=0 status=0
for f in "${files[@]}"; do
  [ "$(od -An -tx1 -N4 "$f" | tr -d ' \n')" = 7f454c46 ] || continue  # ELF files only (not scripts)
  checked=$((checked + 1))
  if needed=$(dynamic "$f" | grep -E 'NEEDED.*libcuda\.so'); then
    echo "FAIL: $f needs the GPU driver to start: $(tr -s ' ' <<<"$needed")"
    status=1
  fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no binary found in $*"; exit 1; }
[ $status -eq 0 ] && echo "ok: none of $checked binaries needs libcuda.so (the GPU driver) to start"
exit $status
