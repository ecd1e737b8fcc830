//go:build !invariants && !race

package invariants

// Enabled turns on the expensive self-checks; see the package comment.
const Enabled = false
