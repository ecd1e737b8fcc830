//go:build !amd64 || purego

package crc32c

// setFold: only foldNone exists here, and it is always selected.
func setFold(k foldKind) (restore func()) {
	if k != foldNone {
		panic("crc32c: no folding kernels in this build")
	}
	return func() {}
}
