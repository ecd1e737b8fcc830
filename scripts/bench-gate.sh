#!/usr/bin/env bash
# CI benchmark gate: compares the working tree (head) with a base revision,
# interleaving the runs, and fails on a significant slowdown above the
# threshold or any allocs/op increase (docs/measuring.md).
#
#   BASE_REF   base revision (default: merge-base with origin/main, else HEAD~1)
#   OUT        output directory for base.txt, head.txt, gate.txt, gate.csv
#              (default results/tmp/bench-gate)
# Extra arguments go to `mirrorpath bench`, e.g.
#   scripts/bench-gate.sh --bench '^Benchmark(Append|Update)$' --pkg ./appendpath,./psm
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE_REF:-}
if [ -z "$base" ]; then
  base=$(git merge-base HEAD origin/main 2>/dev/null || true)
  if [ -z "$base" ] || [ "$base" = "$(git rev-parse HEAD)" ]; then base=$(git rev-parse HEAD~1); fi
fi
out=${OUT:-results/tmp/bench-gate}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/mirrorpath" ./cmd/mirrorpath
echo "bench-gate: base $base, head = working tree ($(git rev-parse --short HEAD))" >&2
"$bin/mirrorpath" bench --base "$base" --out "$out" "$@"
