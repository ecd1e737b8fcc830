package appendpath

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
)

// checkStaged verifies, under invariants.Enabled (-tags invariants or -race), what the append path
// is about to commit: whole batches with valid CRCs (a wrong CRC patch after
// a PID rewrite would show here), offsets increasing from prevEnd, and next
// as the end. O(bytes): a second CRC pass.
func checkStaged(dst []byte, prevEnd, next int64) {
	end := prevEnd
	for rest := dst; len(rest) > 0; {
		b, r, err := codec.Next(rest)
		if err != nil {
			panic(fmt.Sprintf("appendpath: invariant: staged bytes do not frame: %v", err))
		}
		if b.VerifyCRC() != nil {
			panic("appendpath: invariant: staged batch with a bad CRC")
		}
		if b.BaseOffset() < end {
			panic(fmt.Sprintf("appendpath: invariant: staged base offset %d below %d", b.BaseOffset(), end))
		}
		end = b.NextOffset()
		rest = r
	}
	if end != next {
		panic(fmt.Sprintf("appendpath: invariant: staged end %d, log end would be %d", end, next))
	}
}
