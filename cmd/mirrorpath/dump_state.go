package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
)

// The producer-state files beside a segment (LogFileUtils): dump picks the
// decoder by suffix, as Kafka's DumpLogSegments does.
const (
	txnIndexSuffix = ".txnindex"
	snapshotSuffix = ".snapshot"
)

// stateInfo is one output line of a .txnindex or .snapshot dump: an entry
// or a file-level error. Pointers keep absent fields out of the JSON.
type stateInfo struct {
	File  string `json:"file"`
	Entry *int   `json:"entry,omitempty"`
	// .txnindex (AbortedTxn)
	Version          *int   `json:"version,omitempty"`
	FirstOffset      *int64 `json:"firstOffset,omitempty"`
	LastOffset       *int64 `json:"lastOffset,omitempty"`
	LastStableOffset *int64 `json:"lastStableOffset,omitempty"`
	// .snapshot (ProducerStateEntry); ProducerID is shared with .txnindex
	ProducerID            *int64 `json:"producerId,omitempty"`
	ProducerEpoch         *int16 `json:"producerEpoch,omitempty"`
	CoordinatorEpoch      *int32 `json:"coordinatorEpoch,omitempty"`
	CurrentTxnFirstOffset *int64 `json:"currentTxnFirstOffset,omitempty"`
	LastTimestamp         *int64 `json:"lastTimestamp,omitempty"`
	// the entry's cached batch, when it has one
	FirstSequence *int32 `json:"firstSequence,omitempty"`
	LastSequence  *int32 `json:"lastSequence,omitempty"`
	BatchOffset   *int64 `json:"batchLastOffset,omitempty"`
	OffsetDelta   *int32 `json:"offsetDelta,omitempty"`
	Timestamp     *int64 `json:"timestamp,omitempty"`
	Error         string `json:"error,omitempty"`
}

// txnIndexFile dumps the .txnindex file held in data as txnIndexStream
// does.
func (d *dumper) txnIndexFile(name string, data []byte) (invalid bool) {
	return d.txnIndexStream(name, bytes.NewReader(data))
}

// txnIndexStream dumps a .txnindex file read from src: one line per
// 34-byte AbortedTxn entry in Kafka's DumpLogSegments words ("version: 0
// producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 3"). An
// entry whose version is not 0, a cut trailing entry or a read error is
// reported and makes the file invalid; the entries before it are printed.
// Streamed: memory one read buffer whatever the file's size; O(size).
func (d *dumper) txnIndexStream(name string, src io.Reader) (invalid bool) {
	if !d.json {
		fmt.Fprintf(d.out, "Dumping %s\n", name)
	}
	r := bufio.NewReader(src)
	var buf [storage.AbortedTxnSize]byte
	for i := 0; ; i++ {
		n, err := io.ReadFull(r, buf[:])
		if err == io.EOF {
			return false
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			d.emitState(&stateInfo{File: name, Entry: ptr(i), Error: fmt.Sprintf("entry %d: %v", i, err)})
			return true
		}
		t, err := storage.ParseAbortedTxn(buf[:n])
		if err != nil {
			d.emitState(&stateInfo{File: name, Entry: ptr(i), Error: fmt.Sprintf("entry %d: %v", i, err)})
			return true
		}
		d.emitState(&stateInfo{File: name, Entry: ptr(i), Version: ptr(0), ProducerID: ptr(t.ProducerID),
			FirstOffset: ptr(t.FirstOffset), LastOffset: ptr(t.LastOffset), LastStableOffset: ptr(t.LastStableOffset)})
	}
}

// snapshotFile dumps the producer snapshot held in data as snapshotStream
// does.
func (d *dumper) snapshotFile(name string, data []byte) (invalid bool) {
	return d.snapshotAt(name, bytes.NewReader(data), int64(len(data)))
}

// snapshotStream dumps the producer snapshot file f as snapshotAt does.
func (d *dumper) snapshotStream(name string, f *os.File) (invalid bool) {
	size, err := fileSize(f)
	if err != nil {
		if !d.json {
			fmt.Fprintf(d.out, "Dumping %s\n", name)
		}
		d.emitState(&stateInfo{File: name, Error: err.Error()})
		return true
	}
	return d.snapshotAt(name, f, size)
}

// snapshotAt dumps a producer snapshot (<offset>.snapshot, version 1) of
// size bytes read from r: one line per producer in Kafka's DumpLogSegments
// words, with the entry's cached batch when it has one. A corrupt file
// (CRC, version, size) is reported and is invalid, before any entry is
// printed. Streamed in two passes (psm.ScanSnapshot): memory one read
// buffer whatever the file's size; O(size).
func (d *dumper) snapshotAt(name string, r io.ReaderAt, size int64) (invalid bool) {
	if !d.json {
		fmt.Fprintf(d.out, "Dumping %s\n", name)
	}
	err := psm.ScanSnapshot(r, size, func(i int, e *psm.ProducerInfo) {
		info := stateInfo{File: name, Entry: ptr(i), ProducerID: ptr(e.ProducerID), ProducerEpoch: ptr(e.Epoch),
			CoordinatorEpoch: ptr(e.CoordinatorEpoch), CurrentTxnFirstOffset: ptr(e.TxnFirstOffset),
			LastTimestamp: ptr(e.LastTimestamp)}
		if e.NumBatches > 0 {
			m := e.Batches[0]
			info.FirstSequence, info.LastSequence = ptr(m.FirstSeq()), ptr(m.LastSeq)
			info.BatchOffset, info.OffsetDelta, info.Timestamp = ptr(m.LastOffset), ptr(m.OffsetDelta), ptr(m.Timestamp)
		}
		d.emitState(&info)
	})
	if err != nil {
		d.emitState(&stateInfo{File: name, Error: err.Error()})
		return true
	}
	return false
}

// fileSize is the size of the open file f.
func fileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (d *dumper) emitState(info *stateInfo) { emitLine(d, info, stateText) }

// stateText renders info as DumpLogSegments prints .txnindex and .snapshot
// entries.
func stateText(info *stateInfo) string {
	var parts []string
	kv := func(k string, v int64) { parts = append(parts, k+": "+strconv.FormatInt(v, 10)) }
	switch {
	case info.Error != "":
		return "error: " + strconv.Quote(info.Error) + "\n"
	case info.Version != nil:
		kv("version", int64(*info.Version))
		kv("producerId", *info.ProducerID)
		kv("firstOffset", *info.FirstOffset)
		kv("lastOffset", *info.LastOffset)
		kv("lastStableOffset", *info.LastStableOffset)
	default:
		kv("producerId", *info.ProducerID)
		kv("producerEpoch", int64(*info.ProducerEpoch))
		kv("coordinatorEpoch", int64(*info.CoordinatorEpoch))
		kv("currentTxnFirstOffset", *info.CurrentTxnFirstOffset)
		kv("lastTimestamp", *info.LastTimestamp)
		if info.FirstSequence != nil {
			kv("firstSequence", int64(*info.FirstSequence))
			kv("lastSequence", int64(*info.LastSequence))
			kv("lastOffset", *info.BatchOffset)
			kv("offsetDelta", int64(*info.OffsetDelta))
			kv("timestamp", *info.Timestamp)
		}
	}
	return strings.Join(parts, " ") + "\n"
}
