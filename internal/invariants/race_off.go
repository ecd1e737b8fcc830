//go:build !race

package invariants

// RaceEnabled reports that the race detector is on. Under it sync.Pool drops
// what it is given at random, so pooled objects are rebuilt and allocate.
const RaceEnabled = false
