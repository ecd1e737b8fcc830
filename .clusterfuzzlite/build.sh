#!/bin/bash -eu
# ClusterFuzzLite build step: one libFuzzer binary per native Go fuzz target.
# The target list is not kept by hand: scripts/fuzz-targets.sh discovers every
# FuzzX of every package (go test -list '^Fuzz' ./...), so a new target is
# built without touching this file. Each binary is named <package>_<FuzzX>;
# its seed corpus, <name>_seed_corpus.zip next to it, is written by
# `mirrorpath fuzz export`: every f.Add seed and testdata/fuzz/<FuzzX>/ file,
# encoded the way this harness decodes its input (libFuzzer ignores f.Add and
# testdata, and go-118-fuzz-build reads a []byte as a 4-byte length and the
# bytes, not as the raw input).
cd "$SRC/mirrorpath"

# compile_native_go_fuzzer rewrites testing.F to this package's libFuzzer shim;
# the module must require it (changes go.mod inside the build container only).
go get github.com/AdamKorcz/go-118-fuzz-build/testing

targets=$(scripts/fuzz-targets.sh ./...)
if [ -z "$targets" ]; then
  echo "build.sh: no fuzz targets found" >&2
  exit 1
fi

# compile_native_go_fuzzer finds a target's file with `grep -r -l NAME <package
# dir>`, so the name may occur in one file only. Mentions elsewhere are doc
# comments ("FuzzX checks that ..."); reword those in this container copy.
one_file_only() { # dir target
  local f
  for f in $(grep -r -l -s "$2" "$1"); do
    grep -q "func $2(" "$f" && continue
    sed -i "/^[[:space:]]*\/\//s/\b$2\b/the ${2#Fuzz} fuzz target/g" "$f"
  done
  [ "$(grep -r -l -s "$2" "$1" | wc -l)" -eq 1 ]
}

built=0
skipped=0
while read -r pkg target; do
  name="$(basename "$pkg")_${target}"
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  if ! one_file_only "$dir" "$target"; then
    echo "build.sh: skipped $pkg $target: its name occurs outside comments in several files:" \
      $(grep -r -l -s "$target" "$dir") >&2
    skipped=$((skipped + 1))
    continue
  fi
  compile_native_go_fuzzer "$pkg" "$target" "$name"
  built=$((built + 1))
done <<< "$targets"
echo "build.sh: built $built fuzzers, skipped $skipped"
[ "$built" -gt 0 ]

# A seed that fails its target (a committed crasher that is not fixed yet) is
# still archived: it is where the fuzzer should start. MIRRORPATH overrides
# the command (the build test points it at a prebuilt binary).
${MIRRORPATH:-go run ./cmd/mirrorpath} fuzz export --encoding go-fuzz-headers --out "$OUT" ||
  echo "build.sh: fuzz export reported failures (above); the archives hold every seed it captured" >&2
