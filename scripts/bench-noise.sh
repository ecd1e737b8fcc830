#!/usr/bin/env bash
# A/A noise of gated benchmarks: one test binary of the working tree run as
# both sides, interleaved (a b, b a, ...), ROUNDS samples a side, then
# internal/benchgate/cmd/benchnoise: the spread, the A/A shift and p-value,
# and the threshold the noise supports per benchmark, as .ci/bench-thresholds
# lines (docs/measuring.md).
#
#   PKG      package of the benchmarks (default ./appendpath)
#   BENCH    -test.bench regexp (default: the gate's BenchmarkAppend rows)
#   ROUNDS   samples per side (default 30)
#   OUT      output directory for a-NN.txt, b-NN.txt, load.txt, noise.txt
#            (default results/tmp/bench-noise)
# Extra arguments go to benchnoise, e.g. -unit cpu-sec/op.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=${PKG:-./appendpath}
bench=${BENCH:-'^BenchmarkAppend$/^strategy=(asis|bitfield)$/^crc=(none|patch)$/./^producers=1000$'}
rounds=${ROUNDS:-30}
out=${OUT:-results/tmp/bench-noise}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/pkg.test" "$pkg"
dir=$(go list -f '{{.Dir}}' "$pkg")
: >"$out/load.txt"
for i in $(seq -w 1 "$rounds"); do
  cat /proc/loadavg >>"$out/load.txt" 2>/dev/null || true
  if [ $((10#$i % 2)) = 1 ]; then order="a b"; else order="b a"; fi
  for side in $order; do
    (cd "$dir" && "$bin/pkg.test" -test.run '^$' -test.bench "$bench" -test.benchtime 100ms) >"$out/$side-$i.txt"
  done
done
cat /proc/loadavg >>"$out/load.txt" 2>/dev/null || true
go run ./internal/benchgate/cmd/benchnoise -a "$out/a-*.txt" -b "$out/b-*.txt" "$@" | tee "$out/noise.txt"
