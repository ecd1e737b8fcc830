//go:build !e2e

package appendpath

// The crash-point test's size under go test: a few seconds.
const (
	crashPointHistories = 2
	crashPointSteps     = 30
	crashPointImages    = 1
)
