//go:build e2e

package appendpath

// The crash-point test's size under -tags e2e.
const (
	crashPointHistories = 20
	crashPointSteps     = 100
	crashPointImages    = 3
)
