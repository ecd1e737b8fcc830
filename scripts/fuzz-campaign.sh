#!/usr/bin/env bash
# Fuzz campaign: every native fuzz target in turn for FUZZTIME (default 20s),
# minimisation capped at 1000 executions, live execs/s on stderr, a summary table on stdout
# and the reproduction command of every new crasher. Exit 1 on any failure.
# Extra arguments go to `mirrorpath fuzz`, e.g. --target 'FuzzParse' --pkg ./codec
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/mirrorpath" ./cmd/mirrorpath
"$bin/mirrorpath" fuzz --time "${FUZZTIME:-20s}" --minimize 1000x "$@"
