//go:build e2e

package appendpath

// The crash-point test's size under -tags e2e.
const (
	crashPointHistories = 6
	crashPointSteps     = 60
	crashPointImages    = 2
)
