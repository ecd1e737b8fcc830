#!/usr/bin/env bash
# CPU and allocation profiles of one package's benchmarks with flame graphs.
#   scripts/profile.sh --pkg ./appendpath --bench 'BenchmarkAppend/strategy=bitfield'
# Writes cpu.pprof, mem.pprof, cpu.svg, alloc.svg and bench.txt into --out
# (default results/tmp/profile); open the SVGs in a browser, or the .pprof
# files with `go tool pprof -http=: FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/mirrorpath" ./cmd/mirrorpath
"$bin/mirrorpath" profile "$@"
