//go:build !amd64 || purego

package codec

// setFold: only foldNone exists here, and it is always selected.
func setFold(k foldKind) (restore func()) {
	if k != foldNone {
		panic("codec: no folding kernels in this build")
	}
	return func() {}
}
