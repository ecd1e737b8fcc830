package psm

import (
	"bufio"
	"hash/crc32"
	"io"
)

// ScanSnapshot checks the snapshot file r (size bytes) as DecodeSnapshot
// does and calls each with every entry in file order, as DecodeSnapshot
// would return it. It reads r twice, streamed: the CRC over the whole file
// first, so that no entry of a corrupt file is reported, then the entries.
// Memory is one read buffer whatever the file's size; O(size). An error is
// one of DecodeSnapshot's (ErrSnapshotTruncated, ErrSnapshotVersion,
// ErrSnapshotCRC, ErrSnapshotCount) or r's.
func ScanSnapshot(r io.ReaderAt, size int64, each func(i int, e *ProducerInfo)) error {
	var head [snapOffEntries]byte
	if size < snapOffEntries {
		return ErrSnapshotTruncated
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return err
	}
	if v := int16(be.Uint16(head[snapOffVersion:])); v != snapshotVersion {
		return ErrSnapshotVersion
	}
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	buf := make([]byte, 1<<20) // few reads: a snapshot may be large
	if _, err := io.CopyBuffer(crc, io.NewSectionReader(r, snapCRCStart, size-snapCRCStart), buf); err != nil {
		return err
	}
	if be.Uint32(head[snapOffCRC:]) != crc.Sum32() {
		return ErrSnapshotCRC
	}
	n := int64(int32(be.Uint32(head[snapOffCount:])))
	if n < 0 {
		return ErrSnapshotCount
	}
	if n > (size-snapOffEntries)/snapshotEntrySize {
		return ErrSnapshotTruncated
	}
	br := bufio.NewReader(io.NewSectionReader(r, snapOffEntries, n*snapshotEntrySize))
	var entry [snapOffEntries + snapshotEntrySize]byte // snapshotEntry reads entry 0 at snapOffEntries
	for i := range int(n) {
		if _, err := io.ReadFull(br, entry[snapOffEntries:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // shorter than size said
			}
			return err
		}
		e := snapshotEntry(entry[:], 0)
		each(i, &e)
	}
	return nil
}
