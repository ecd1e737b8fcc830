#!/usr/bin/env bash
# Lists every native Go fuzz target of the module, one per line:
#   <import path> <FuzzName>
# Usage: scripts/fuzz-targets.sh [packages...]   (default ./...)
# Packages that do not build are reported on stderr and skipped, so that one
# broken package does not hide the targets of the others.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- ./...
go test -list '^Fuzz' "$@" 2>&1 | awk '
  /^Fuzz[A-Za-z0-9_]*$/ { names[n++] = $1; next }
  /^ok[ \t]/            { for (i = 0; i < n; i++) print $2, names[i]; n = 0; next }
  /^FAIL[ \t]+[^ \t]+[ \t]+\[/ { print "fuzz-targets: skipped " $2 " " $3 " " $4 > "/dev/stderr"; n = 0; next }
  /^\?/                 { n = 0 }
'
