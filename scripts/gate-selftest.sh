#!/usr/bin/env bash
# Self-test of the benchmark gate on a throwaway module (no mirrorpath code is
# measured): an A/A run must pass, an injected slowdown and an injected
# allocation must fail. Prints each gate's table and a closing verdict line.
#
#   SLOWDOWN  work factor of the "slow" revision, e.g. 10 or 1.3 (default 10)
#   COUNT     interleaved rounds per side (default 10)
#   BENCHTIME per-run -benchtime (default 100ms)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
factor=${SLOWDOWN:-10}
count=${COUNT:-10}
benchtime=${BENCHTIME:-100ms}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/mirrorpath" ./cmd/mirrorpath)

mod=$work/gatetest
mkdir -p "$mod"
cd "$mod"
git init -q
g() { git -c user.name=gate -c user.email=gate@example.invalid -c commit.gpgsign=false "$@"; }
printf 'module example.com/gatetest\n\ngo 1.22\n' > go.mod
cat > work_test.go <<'GO'
package gatetest

import "testing"

var sink uint64
var sinkBuf []byte

func BenchmarkWork(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = work()
	}
}
GO
revision() { # name rounds alloc
  {
    printf 'package gatetest\n\nconst rounds = %s\n\nfunc work() uint64 {\n' "$2"
    [ "$3" = yes ] && printf '\tsinkBuf = make([]byte, 64)\n'
    printf '\th := uint64(14695981039346656037)\n\tfor i := 0; i < rounds; i++ {\n\t\th ^= uint64(i)\n\t\th *= 1099511628211\n\t}\n\treturn h\n}\n'
  } > work.go
  git add . && g commit -q -m "$1" && git tag "$1"
}
revision fast 2000 no
revision slow "$(awk -v f="$factor" 'BEGIN { printf "%d", 2000 * f }')" no
revision alloc 2000 yes

gate() { # label base head
  echo "=== $1: mirrorpath bench --base $2 --head $3 --bench Work --count $count --benchtime $benchtime"
  set +e
  "$work/mirrorpath" bench --repo "$mod" --base "$2" --head "$3" --bench Work --count "$count" --benchtime "$benchtime" 2>/dev/null
  code=$?
  set -e
  echo "exit $code"
  return $code
}
verdict=0
# An A/A run fails by chance about once in a hundred (p < 0.01), more often
# under bursty load; a broken gate fails twice in a row.
if gate "A/A" fast fast || gate "A/A again" fast fast; then aa=pass; else aa=FAIL; verdict=1; fi
if gate "slowdown x$factor" fast slow; then sd="passed (missed)"; verdict=1; else sd="failed (caught)"; fi
if gate "one allocation" fast alloc; then al="passed (missed)"; verdict=1; else al="failed (caught)"; fi
echo "gate self-test: A/A $aa; injected slowdown x$factor $sd; injected allocation $al"
exit $verdict
