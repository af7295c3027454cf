#!/usr/bin/env bash
# Fails unless the gexec binary has every named backend compiled in (by its --version line
# "backends: ..."): CI runs it so that a build that silently lost a backend cannot pass.
#   scripts/check_backends.sh GEXEC BACKEND...      e.g. scripts/check_backends.sh build/release/gexec cuda cpu
set -euo pipefail
gexec=$1; shift
have=$("$gexec" --version | sed -n 's/^backends: //p')
status=0
for b in "$@"; do
  if ! grep -qw -- "$b" <<<"$have"; then
    echo "check_backends: $gexec lacks the $b backend (it has: ${have:-none}); expected: $*" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_backends: $gexec has $* (backends: $have)"
exit $status
