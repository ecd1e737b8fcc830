//go:build !invariants

package pid

// invariants enables expensive self-checks; build with -tags invariants.
const invariants = false
