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
#   ONLY="a.go b.go"     mutate only these files of the package (the others
#                        are passed to gremlins' --exclude-files); the
#                        package's whole test suite still runs on each mutant
#   DRY_RUN=1            list the mutants and their coverage, run none
#   GOFLAGS              passed on to each mutant's go test; -vet=off is
#                        added: a mutant is killed by a failing test, not by
#                        go test's vet step (which also costs seconds a run)
#   OUT=results/mutation per package: PKG.txt, gremlins' output without the
#                        KILLED lines (the survivors, timeouts and uncovered
#                        mutants, the summary) plus the killed count per file.
#                        The whole output and gremlins' JSON report go to
#                        results/tmp/mutation/ (not tracked: they run to
#                        hundreds of kilobytes).
#
# One package at a time. results/mutation.md holds the scores and the
# surviving mutants, each killed by a test or explained.
set -euo pipefail
cd "$(dirname "$0")/.."
gremlins=github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
out=${OUT:-results/mutation}
full=results/tmp/mutation
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-vet=off"
[ $# -gt 0 ] || set -- pid psm codec appendpath
for pkg in "$@"; do
  mkdir -p "$(dirname "$out/$pkg")" "$(dirname "$full/$pkg")"
  args=(--workers "${WORKERS:-1}" --timeout-coefficient "${TIMEOUT_COEFFICIENT:-60}")
  [ -z "${TAGS:-}" ] || args+=(--tags "$TAGS")
  [ -z "${DRY_RUN:-}" ] || args+=(--dry-run)
  if [ -n "${ONLY:-}" ]; then
    for f in "$pkg"/*.go; do
      f=$(basename "$f")
      case "$f" in *_test.go) continue ;; esac
      case " $ONLY " in *" $f "*) ;; *) args+=(--exclude-files "^${f//./\\.}\$") ;; esac
    done
  fi
  {
    echo "=== $pkg at $(git rev-parse --short HEAD)${ONLY:+, files: $ONLY}" \
      "(load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown))"
    go run "$gremlins" unleash "${args[@]}" --output "$full/$pkg.json" "./$pkg"
  } 2>&1 | tee "$full/$pkg.log"
  {
    grep -v '^ *KILLED ' "$full/$pkg.log" || true
    echo
    echo "Killed, by file:"
    sed -n 's/^ *KILLED [A-Z_]* at \([^:]*\):.*/\1/p' "$full/$pkg.log" | sort | uniq -c
  } >"$out/$pkg.txt"
done
