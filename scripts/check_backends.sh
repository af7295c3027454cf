#!/usr/bin/env bash
# Fails unless the gexec binary has every named part compiled in: a backend by its --version line
# "backends: ...", an input format (onnx) by its line "inputs: ...". CI runs it so that a build
# that silently lost a backend or ONNX input cannot pass.
#   scripts/check_backends.sh GEXEC NAME...      e.g. scripts/check_backends.sh build/release/gexec cuda cpu onnx
set -euo pipefail
gexec=$1; shift
version=$("$gexec" --version)
have="$(sed -n 's/^backends: //p' <<<"$version") $(sed -n 's/^inputs: //p' <<<"$version")"
status=0
for b in "$@"; do
  if ! grep -qw -- "$b" <<<"$have"; then
    echo "check_backends: $gexec lacks $b (it has: backends and inputs ${have:-none}); expected: $*" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_backends: $gexec has $* (backends and inputs: $have)"
exit $status
