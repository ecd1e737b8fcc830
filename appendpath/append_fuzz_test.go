package appendpath

import (
	"bytes"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// repair fixes the CRC of every whole batch in buf so that mutations reach
// the checks behind the CRC (style habit 6: a repairing harness).
func repair(buf []byte) {
	for rest := buf; len(rest) > 0; {
		b, r, err := codec.Next(rest)
		if err != nil {
			return
		}
		b.UpdateCRC()
		rest = r
	}
}

func fuzzSeeds(f *testing.F) {
	f.Add(chunk(testlog.WithOffsets(mkBatch(f, bspec{PID: 5, Seq: 0, Records: 2}), 10, 1),
		testlog.WithOffsets(mkBatch(f, bspec{PID: 6, Seq: 0, Txn: true}), 12, 1),
		testlog.WithOffsets(mkMarker(6, 0, 1, true), 13, 1)), uint8(0))
	f.Add(chunk(testlog.WithOffsets(mkBatch(f, bspec{PID: 1 << 31, Seq: 0}), 10, 1)), uint8(3))
	f.Add(chunk(testlog.WithOffsets(codec.AppendBarrier(nil, 2, "x", 5), 10, 2),
		testlog.WithOffsets(mkBatch(f, bspec{PID: 5, Epoch: 1, Seq: 7}), 11, 2)), uint8(1))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49}, uint8(2))
	// Batches over fuseMin between small ones: copied in the CRC's pass.
	mixed := chunk(testlog.WithOffsets(mkBatch(f, bspec{PID: 5, Seq: 0}), 10, 1),
		testlog.WithOffsets(mkBatch(f, bspec{PID: 6, Seq: 0, Records: 20, Value: 80}), 11, 1),
		testlog.WithOffsets(mkBatch(f, bspec{PID: 5, Seq: 1}), 31, 1),
		testlog.WithOffsets(mkBatch(f, bspec{PID: 7, Seq: 0, Records: 12, Value: 90}), 32, 1))
	f.Add(mixed, uint8(0))
	f.Add(mixed, uint8(12))
}

// FuzzAppendMirrored: a hostile chunk never panics; a rejected chunk leaves
// the caller's bytes, the log and producer state unchanged; an accepted
// chunk stores CRC-valid batches and leaves the same producer state as
// appending its batches one at a time (the reference).
func FuzzAppendMirrored(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		data = bytes.Clone(data)
		repair(data)
		s := pid.Strategies()[int(mode)%len(pid.Strategies())]
		fix := pid.CRCFix(mode / 8 % 2)
		open := func() *Partition {
			p := mustOpen(t, Config{State: Mirroring, Strategy: s, CRCFix: fix, PSMOptions: nonNegOne})
			seed := chunk(testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0, Txn: true}), 0, 0),
				testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Epoch: 2, Seq: 3}), 1, 0))
			if _, err := p.AppendMirrored(seed, srcA); err != nil {
				t.Fatal(err)
			}
			return p
		}
		p := open()
		in := bytes.Clone(data)
		before, leo := p.Snapshot(), p.LogEndOffset()
		r, err := p.AppendMirrored(in, srcA)
		if !bytes.Equal(in, data) {
			t.Fatal("caller's chunk modified")
		}
		if err != nil {
			if p.LogEndOffset() != leo || !bytes.Equal(before, p.Snapshot()) || len(readAll(t, p)) != 2 {
				t.Fatalf("rejected chunk (%v) changed the partition", err)
			}
			return
		}
		all := readAll(t, p)
		if len(all) != 2+r.Batches {
			t.Fatalf("%d batches stored, result %+v", len(all), r)
		}
		for _, b := range all {
			if codec.Batch(b).VerifyCRC() != nil {
				t.Fatal("stored batch with a bad CRC")
			}
		}
		q := open()
		for rest := data; len(rest) > 0; {
			b, r, _ := codec.Next(rest)
			if _, err := q.AppendMirrored(b, srcA); err != nil {
				t.Fatalf("batch alone rejected (%v) but accepted in its chunk", err)
			}
			rest = r
		}
		if !bytes.Equal(p.Snapshot(), q.Snapshot()) || p.LogEndOffset() != q.LogEndOffset() {
			t.Fatal("chunk and batch-by-batch appends disagree")
		}
	})
}

// FuzzAppendClient keeps the raw CRC check: most mutations stop there, the
// rest reach the LogValidator rules. Never a panic; a rejection changes
// nothing.
func FuzzAppendClient(f *testing.F) {
	f.Add(mkBatch(f, bspec{PID: 5, Seq: 0, Records: 2}))
	f.Add(mkBatch(f, bspec{PID: -1, Seq: -1}))
	f.Add(mkMarker(5, 0, 0, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := mustOpen(t, Config{})
		before := p.Snapshot()
		in := bytes.Clone(data)
		_, err := p.AppendClient(in)
		if !bytes.Equal(in, data) {
			t.Fatal("caller's batch modified")
		}
		if err != nil && (p.LogEndOffset() != 0 || !bytes.Equal(before, p.Snapshot())) {
			t.Fatalf("rejected batch (%v) changed the partition", err)
		}
	})
}

// FuzzRecover: any bytes as a segment file open without a panic, and what
// is kept is a prefix of the file made of whole CRC-valid batches.
func FuzzRecover(f *testing.F) {
	f.Add(chunk(mkBatch(f, bspec{PID: 1, Seq: 0}), testlog.WithOffsets(mkBatch(f, bspec{PID: 1, Seq: 1}), 1, 0)), []byte{})
	f.Add(mkBatch(f, bspec{PID: 1, Seq: 0})[:40], []byte{0, 0})
	f.Fuzz(func(t *testing.T, seg, txnIndex []byte) {
		fs := vfs.NewMemFS()
		fs.WriteFile("/l/00000000000000000000.log", seg, true)
		fs.WriteFile("/l/00000000000000000000.txnindex", txnIndex, true)
		p, err := Open(Config{Dir: "/l", FS: fs, Now: testNow})
		if err != nil {
			return // replay refused the log (e.g. INVALID_TXN_STATE): an error, not a panic
		}
		kept, _ := fs.ReadFile("/l/00000000000000000000.log")
		if !bytes.HasPrefix(seg, kept) {
			t.Fatal("recovery kept bytes that are not a prefix of the file")
		}
		n := 0
		for b, err := range p.Batches(0) {
			if err != nil || b.VerifyCRC() != nil {
				t.Fatalf("bad batch kept: %v", err)
			}
			n += len(b)
		}
		if n != len(kept) {
			t.Fatalf("%d bytes of batches, %d kept", n, len(kept))
		}
	})
}

// FuzzAddData: what addData, the append path's header-only build of a data
// batch's psm.Batch, hands to Add equals psm.BatchOf (the reference) on every
// data batch whose header is whole.
func FuzzAddData(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, _ uint8) {
		if len(data) < codec.HeaderSize {
			return
		}
		b := codec.Batch(data)
		if b.IsControl() {
			return // BatchOf reads the control record: not addData's case
		}
		want, err := psm.BatchOf(b)
		if err != nil {
			t.Fatalf("BatchOf of a data batch: %v", err)
		}
		// pb starts as garbage: addData must write every field. Add only
		// reads it (its verdict does not matter here), so pb afterwards is
		// what Add was given.
		app := psm.NewStore(psm.Options{}).BeginAppend(0, psm.Replication)
		pb := psm.Batch{ProducerID: 7, ProducerEpoch: 7, BaseSequence: 7, LastOffsetDelta: 7, BaseOffset: 7,
			MaxTimestamp: 7, RecordsCount: 7, Transactional: true, Control: true, ControlType: codec.ControlAbort,
			CoordinatorEpoch: 7, ControlTimestamp: 7}
		pc := pb
		addData(app, b, &pb)
		app.Abort()
		if pb != want {
			t.Fatalf("addData gave %+v, BatchOf %+v", pb, want)
		}
		app.BeginChunk(psm.Replication)
		addChunkData(app, b, &pc, b.BaseOffset(), b.LastOffsetDelta())
		app.Abort()
		if pc != want {
			t.Fatalf("addChunkData gave %+v, BatchOf %+v", pc, want)
		}
	})
}

// FuzzFrameSize: frameSize, the append path's inlined framing check, accepts
// exactly what codec.Next (the reference) frames, with the same size.
func FuzzFrameSize(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 2}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, _ uint8) {
		if len(data) == 0 {
			return // codec.Next's io.EOF; the append path never frames an empty rest
		}
		b, _, err := codec.Next(data)
		got := frameSize(data)
		if (err == nil) != (got >= 0) || (err == nil && got != len(b)) {
			t.Fatalf("frameSize %d, codec.Next %d bytes, %v", got, len(b), err)
		}
	})
}
