//go:build !amd64

package psm

// prefetch is a no-op where no assembly version exists.
func prefetch(addr uintptr) {}
