//go:build !invariants

package psm

// invariants enables expensive self-checks; build with -tags invariants.
const invariants = false
