#!/bin/bash -eu
# ClusterFuzzLite build step: one libFuzzer binary per native Go fuzz target.
# The target list is not kept by hand: scripts/fuzz-targets.sh discovers every
# FuzzX of every package (go test -list '^Fuzz' ./...), so a new target is
# built without touching this file. Each binary is named <package>_<FuzzX>,
# and its seed corpus is zipped from <package>/testdata/fuzz/<FuzzX>/ next to
# it as <name>_seed_corpus.zip.
cd "$SRC/mirrorpath"

# compile_native_go_fuzzer rewrites testing.F to this package's libFuzzer shim;
# the module must require it (changes go.mod inside the build container only).
go get github.com/AdamKorcz/go-118-fuzz-build/testing

targets=$(scripts/fuzz-targets.sh ./...)
if [ -z "$targets" ]; then
  echo "build.sh: no fuzz targets found" >&2
  exit 1
fi

built=0
while read -r pkg target; do
  name="$(basename "$pkg")_${target}"
  compile_native_go_fuzzer "$pkg" "$target" "$name"
  corpus="$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target"
  python3 scripts/fuzz-seed-corpus.py "$corpus" "$OUT/${name}_seed_corpus.zip"
  built=$((built + 1))
done <<< "$targets"
echo "build.sh: built $built fuzzers"
