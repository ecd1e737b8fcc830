//go:build !amd64

package pid

// prefetch is a no-op where no assembly version exists.
func prefetch(addr uintptr) {}
