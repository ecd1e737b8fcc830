package pid

import "github.com/mirrorpath/mirrorpath/codec"

// Rewrite writes newPID into the producerId field of b (bytes 43..50, inside
// the CRC range) and repairs the stored CRC with fix: Full recomputes CRC-32C
// over bytes [21, size) in O(size); Patch updates it from the old PID in time
// independent of the batch length (codec.PatchCRC). Any other CRCFix value
// acts as Full. When b already carries newPID nothing is written, so a batch
// whose CRC was wrong stays wrong: Rewrite repairs the CRC for the field it
// changes, it does not validate (Patch carries a bad CRC over as bad; Full
// would make it good, which is why the append path verifies before mapping).
//
// b is modified in place and must hold at least codec.HeaderSize bytes. No
// allocation. Not safe for concurrent use on the same batch.
func Rewrite(b codec.Batch, newPID int64, fix CRCFix) {
	if b.ProducerID() == newPID {
		return
	}
	if fix == Patch {
		b.SetProducerID(newPID)
		return
	}
	b.SetProducerIDRecompute(newPID)
}
