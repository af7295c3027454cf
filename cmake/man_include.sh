#!/usr/bin/env bash
# The include file for help2man: docs/gexec.h2m's sections, then `gexec run --help` as it is.
#   man_include.sh GEXEC H2M OUTPUT
set -euo pipefail
{
  cat "$2"
  printf '[RUN OPTIONS]\n.nf\n'
  "$1" run --help | sed 's/\\/\\e/g'
  printf '.fi\n'
} > "$3"
