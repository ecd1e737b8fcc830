//go:build invariants

package appendpath

// invariants enables expensive self-checks; build with -tags invariants.
const invariants = true
