#!/usr/bin/env bash
# Mutation testing with gremlins (pinned below; fetched through the Go module
# proxy by `go run`, nothing to install): each mutant of a package's code
# (a flipped condition, a shifted boundary, a changed operator) is built and
# the package's tests run against it; a mutant that no test kills is a
# behaviour no test pins.
#
# Usage: scripts/mutation.sh [PKG ...]      (default: pid psm codec appendpath)
#   WORKERS=1            mutants run at once (the runs are CPU heavy)
#   TIMEOUT_COEFFICIENT=60  a mutant's build and test run may take this many
#                        times gremlins' coverage run before it counts as
#                        TIMED OUT; that run takes about 1 s with a warm build
#                        cache, while a mutant's build takes 15-25 s on a
#                        loaded machine, hence the large default
#   TAGS=invariants      build tags (mapChecked and the other invariant
#                        checks are covered only under invariants)
#   OUT=results/mutation per package: PKG.json (gremlins' report) and PKG.txt
#
# One package at a time. results/mutation.md holds the scores and the
# surviving mutants, each killed by a test or explained.
set -euo pipefail
cd "$(dirname "$0")/.."
gremlins=github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
out=${OUT:-results/mutation}
mkdir -p "$out"
[ $# -gt 0 ] || set -- pid psm codec appendpath
for pkg in "$@"; do
  mkdir -p "$(dirname "$out/$pkg")"
  echo "=== $pkg (load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown))"
  go run "$gremlins" unleash --workers "${WORKERS:-1}" \
    --timeout-coefficient "${TIMEOUT_COEFFICIENT:-60}" ${TAGS:+--tags "$TAGS"} \
    --output "$out/$pkg.json" "./$pkg" | tee "$out/$pkg.txt"
done
