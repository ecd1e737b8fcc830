// Package invariants holds the build switches of the expensive self-checks.
//
// Enabled is true when the binary is built with -tags invariants or with
// -race: code guarded by it verifies internal invariants after each step and
// panics with what it found. The checks cost far more than the work they
// check, so the default build compiles them out (the constant folds the
// guarded code away). RaceEnabled says whether the race detector is on, which
// changes what a test may expect of sync.Pool.
package invariants
