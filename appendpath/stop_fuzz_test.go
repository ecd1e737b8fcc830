package appendpath

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// stopFuzzOptions decodes FuzzStop's options: the STOPPING switches and the
// ABORT's form and version from opt, and the producer-state release.
func stopFuzzOptions(opt uint16) (StopOptions, psm.Release) {
	return StopOptions{
		Variant:    StopVariant(opt & 1),
		TxnVersion: psm.TxnVersion(opt>>3&3) - 1, // TVUnknown, TV0, TV1, TV2
		Hazards: StopHazards{
			AbortMarker:         AbortMarker(opt >> 1 % 4 % 3),
			UnknownSource:       UnknownSource(opt >> 5 & 3),
			StepErrors:          StepErrors(opt >> 7 % 4 % 3),
			IgnoreMarkerFailure: opt>>9&1 == 1,
			BarrierNoSource:     opt>>10&1 == 1,
			HangWhenEmpty:       opt>>11&1 == 1,
		},
	}, psm.Release(opt >> 12 % 4 % 3)
}

// FuzzStop: STOPPING of a partition that mirrored a hostile chunk, after a
// transaction it left open, under any switches, with a fault injected at one
// step, then retried without it. Never a panic; every stored batch is
// CRC-valid; a Stop that succeeds leaves the partition STOPPED with its
// checkpoint inside the log and no open transaction it could have closed
// (truncate: none at all; abort without hazard R2: only those whose producer
// entry a barrier removed); a Stop that fails leaves it STOPPING or FAILED and
// refusing client writes; and Kafka 4.2 refuses the prototype's ABORT, which
// states no transaction version, so that Stop of a partition with an open
// transaction to abort fails.
func FuzzStop(f *testing.F) {
	seed := chunk(testlog.WithOffsets(mkBatch(f, bspec{PID: 6, Seq: 0, Txn: true}), 2, 1),
		testlog.WithOffsets(mkBatch(f, bspec{PID: 9, Seq: 0}), 3, 1))
	for _, opt := range []uint16{0, 1, 3 << 3, 2<<1 | 3<<3, 1<<1 | 3<<3, 1 << 5, 2 << 5, 3 << 5, 1 << 7, 2 << 7,
		1 << 9, 1 << 11, 1 << 12, 2 << 12, 1 << 15} {
		f.Add(seed, opt, uint8(0))
		f.Add(seed, opt, uint8(1+StepMarker))
	}
	f.Add(chunk(testlog.WithOffsets(codec.AppendBarrier(nil, 2, "x", 5), 2, 2)), uint16(0), uint8(1+StepAbort))
	f.Add([]byte{}, uint16(1<<11|1<<15), uint8(1+StepPersist))
	f.Fuzz(func(t *testing.T, data []byte, opt uint16, faultAt uint8) {
		data = bytes.Clone(data)
		repair(data)
		so, release := stopFuzzOptions(opt)
		strategy := pid.Barrier
		if opt>>14&1 == 1 {
			strategy = pid.Verbatim
		}
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs, State: Mirroring, Strategy: strategy,
			PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne, Release: release}}
		p := mustOpen(t, cfg)
		if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0, Txn: true, Records: 2}), 0, 1), srcA); err != nil {
			t.Fatal(err)
		}
		p.AppendMirrored(data, srcA) // a refused chunk changes nothing
		if opt>>15&1 == 1 {
			// A reopened partition knows no source cluster id until its
			// next mirrored append (UnknownSource).
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			p = mustOpen(t, cfg)
		}
		toAbort := false
		for _, tx := range p.OpenTxns(nil) {
			if _, ok := p.Producer(tx.ProducerID); ok {
				toAbort = true
			}
		}
		fault := StopStep(faultAt) - 1 // 0: no fault
		for attempt := range 2 {
			o := so
			if attempt == 0 && faultAt > 0 {
				o.Hazards.Fault = func(s StopStep) error {
					if s == fault {
						return errors.New("fuzz fault")
					}
					return nil
				}
			}
			err := p.Stop(o)
			for _, b := range readAll(t, p) {
				if codec.Batch(b).VerifyCRC() != nil {
					t.Fatalf("attempt %d: stored batch with a bad CRC", attempt)
				}
			}
			if attempt == 0 && err == nil && toAbort && so.Variant == StopAbort && so.Hazards.AbortMarker == AbortPrototype &&
				release == psm.Kafka4 && !so.Hazards.IgnoreMarkerFailure {
				t.Fatalf("Kafka 4.2 accepted the prototype's ABORT (options %+v)", so)
			}
			if err != nil {
				if st := p.State(); st != Stopping && st != Failed {
					if attempt == 1 && st == Stopped && errors.Is(err, ErrState) {
						return // the first attempt succeeded
					}
					t.Fatalf("attempt %d: Stop failed (%v) and left %s", attempt, err, st)
				}
				end := p.LogEndOffset()
				if _, cerr := p.AppendClient(mkBatch(t, bspec{PID: 77, Seq: 0})); cerr == nil || p.LogEndOffset() != end {
					t.Fatalf("attempt %d: a client write after a failed Stop (%v): %v", attempt, err, cerr)
				}
				continue
			}
			if st := p.State(); st != Stopped {
				t.Fatalf("attempt %d: Stop returned nil and left %s", attempt, st)
			}
			if cp := p.Checkpoint(); !cp.Valid || cp.Offset > p.LogEndOffset() {
				t.Fatalf("attempt %d: checkpoint %+v, log end %d", attempt, cp, p.LogEndOffset())
			}
			for _, tx := range p.OpenTxns(nil) {
				_, entry := p.Producer(tx.ProducerID)
				if so.Variant == StopTruncate || entry && !so.Hazards.IgnoreMarkerFailure {
					t.Fatalf("attempt %d: STOPPED with transaction %+v open (entry %v, options %+v)", attempt, tx, entry, so)
				}
			}
			return
		}
	})
}
