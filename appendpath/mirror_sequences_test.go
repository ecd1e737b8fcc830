package appendpath

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testbatch"
	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/cockroachdb/datadriven"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// TestMirrorSequences replays the mirror state machine's sequences in
// testdata/mirror (MIRRORING, STOPPING, STOPPED and failback): each file is a
// run of commands on named partitions with the expected output. Regenerate
// the output with
//
//	go test ./appendpath -run TestMirrorSequences -rewrite
//
// and review the diff: it is the specification.
//
// Commands (name= names the partition, default p):
//
//	open [name=] [state=mirroring] [strategy=S] [fault=STEP:N] [file] [nonneg]
//	  a partition; fault fails STOPPING step STEP its first N times, file
//	  gives it a file-backed log (MemFS), nonneg the NonNegativeOne PID rule
//	reopen [name=] [state=S]           close and open the same log again
//	mirror [name=] source=A|B          append the input batches as mirrored
//	client [name=]                     append each input batch as CLIENT
//	stop [name=] [variant=abort|truncate]
//	failback [name=] divergence=N
//	copy from= to= offset=N [batches=N] source=A|B
//	  read from offset N of one (N batches, default all), mirror into the other
//	start-mirroring [name=]
//	show [name=]                       the mirror state, offsets, checkpoint, transactions
//	log [name=]                        every batch of the log
//	compare a= b=                      logs and producer state, byte for byte
//
// The input batch lines are internal/testbatch's; offset= and leader-epoch=
// (mirrored input only) place a batch as its source log stores it:
//
//	data pid=P [epoch=E] [seq=S] [records=N] [txn] [offset=O] [leader-epoch=L]
//	marker pid=P [epoch=E] [coord=C] commit|abort [offset=O] [leader-epoch=L]
func TestMirrorSequences(t *testing.T) {
	datadriven.Walk(t, "testdata/mirror", func(t *testing.T, path string) {
		w := &mirrorWorld{parts: map[string]*Partition{}, cfgs: map[string]Config{}}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return w.run(t, d)
		})
	})
}

type mirrorWorld struct {
	parts map[string]*Partition
	cfgs  map[string]Config
}

func (w *mirrorWorld) part(t *testing.T, d *datadriven.TestData, key string) *Partition {
	name := "p"
	d.MaybeScanArgs(t, key, &name)
	p, ok := w.parts[name]
	if !ok {
		t.Fatalf("%s: no partition %q", d.Pos, name)
	}
	return p
}

func sourceArg(t *testing.T, d *datadriven.TestData) [16]byte {
	var s string
	d.ScanArgs(t, "source", &s)
	switch s {
	case "A":
		return srcA
	case "B":
		return srcB
	}
	t.Fatalf("%s: unknown source %q", d.Pos, s)
	return [16]byte{}
}

func sourceName(s [16]byte) string {
	switch s {
	case srcA:
		return "A"
	case srcB:
		return "B"
	}
	return fmt.Sprintf("%x", s)
}

func errOr(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return ok + "\n"
}

func (w *mirrorWorld) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "open", "reopen":
		name := "p"
		d.MaybeScanArgs(t, "name", &name)
		cfg := w.cfgs[name]
		if d.Cmd == "open" {
			cfg = Config{}
			if d.HasArg("file") {
				cfg.Dir, cfg.FS = "/l", vfs.NewMemFS()
			}
			if d.HasArg("nonneg") {
				cfg.PSMOptions = nonNegOne
			}
			var s string
			if d.MaybeScanArgs(t, "strategy", &s) {
				st, err := pid.ParseStrategy(s)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				cfg.Strategy = st
			}
			if d.MaybeScanArgs(t, "fault", &s) {
				stepName, n, _ := strings.Cut(s, ":")
				var step StopStep
				if err := step.UnmarshalText([]byte(stepName)); err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				left, err := strconv.Atoi(n)
				if err != nil {
					t.Fatalf("%s: fault=%s: %v", d.Pos, s, err)
				}
				cfg.Hazards.Fault = func(at StopStep) error {
					if at == step && left > 0 {
						left--
						return errors.New("disk full")
					}
					return nil
				}
			}
		} else if err := w.parts[name].Close(); err != nil {
			t.Fatalf("%s: close: %v", d.Pos, err)
		}
		cfg.State = Stopped
		var s string
		if d.MaybeScanArgs(t, "state", &s) {
			found := false
			for i, n := range stateNames {
				if strings.EqualFold(n, s) {
					cfg.State, found = MirrorState(i), true
				}
			}
			if !found {
				t.Fatalf("%s: unknown state %q", d.Pos, s)
			}
		}
		w.cfgs[name] = cfg
		w.parts[name] = mustOpen(t, cfg)
		return w.show(w.parts[name])
	case "mirror":
		p := w.part(t, d, "name")
		res, err := p.AppendMirrored(bytes.Join(inputBatches(t, d, true), nil), sourceArg(t, d))
		return errOr(err, fmt.Sprintf("appended %s", offsetRange(res.FirstOffset, res.LastOffset)))
	case "client":
		p := w.part(t, d, "name")
		var b strings.Builder
		for _, batch := range inputBatches(t, d, false) {
			res, err := p.AppendClient(batch)
			b.WriteString(errOr(err, fmt.Sprintf("appended %s", offsetRange(res.FirstOffset, res.LastOffset))))
		}
		return b.String()
	case "stop":
		p := w.part(t, d, "name")
		var opt StopOptions
		var s string
		if d.MaybeScanArgs(t, "variant", &s) {
			if err := opt.Variant.UnmarshalText([]byte(s)); err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
		}
		return errOr(p.Stop(opt), "ok") + w.show(p)
	case "failback":
		p := w.part(t, d, "name")
		var at int64
		d.ScanArgs(t, "divergence", &at)
		return errOr(p.Failback(at), "ok") + w.show(p)
	case "start-mirroring":
		p := w.part(t, d, "name")
		return errOr(p.StartMirroring(), "ok") + w.show(p)
	case "copy":
		from, to := w.part(t, d, "from"), w.part(t, d, "to")
		var off int64
		d.ScanArgs(t, "offset", &off)
		data, err := from.Read(off, 1<<20)
		if err != nil {
			t.Fatalf("%s: read: %v", d.Pos, err)
		}
		var n int
		if d.MaybeScanArgs(t, "batches", &n) {
			end := 0
			for range n {
				end += int(codec.Batch(data[end:]).BatchLength()) + codec.LogOverhead
			}
			data = data[:end]
		}
		res, err := to.AppendMirrored(data, sourceArg(t, d))
		return errOr(err, fmt.Sprintf("appended %s", offsetRange(res.FirstOffset, res.LastOffset)))
	case "show":
		return w.show(w.part(t, d, "name"))
	case "log":
		var b strings.Builder
		for _, raw := range readAll(t, w.part(t, d, "name")) {
			b.WriteString(describeBatch(codec.Batch(raw)))
		}
		return b.String()
	case "compare":
		a, b := w.part(t, d, "a"), w.part(t, d, "b")
		la, _ := a.Read(a.LogStartOffset(), 1<<20)
		lb, _ := b.Read(b.LogStartOffset(), 1<<20)
		return fmt.Sprintf("logs equal: %v\nproducer state equal: %v\n", bytes.Equal(la, lb), bytes.Equal(a.Snapshot(), b.Snapshot()))
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

// show prints the partition's mirror state and what depends on it.
func (w *mirrorWorld) show(p *Partition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state=%s leader-epoch=%d log-start=%d log-end=%d lso=%d producers=%d\n", p.State(), p.LeaderEpoch(),
		p.LogStartOffset(), p.LogEndOffset(), p.LastStableOffset(), p.ProducerCount())
	if cp := p.Checkpoint(); cp.Valid {
		fmt.Fprintf(&b, "checkpoint: offset=%d epoch=%d source=%s\n", cp.Offset, cp.Epoch, sourceName(cp.Source))
	}
	for _, o := range p.OpenTxns(nil) {
		fmt.Fprintf(&b, "open txn: pid=%d from %d\n", o.ProducerID, o.FirstOffset)
	}
	for _, a := range p.AbortedTxns(nil, 0, 1<<40) {
		fmt.Fprintf(&b, "aborted txn: pid=%d %s lso=%d\n", a.ProducerID, offsetRange(a.FirstOffset, a.LastOffset), a.LastStableOffset)
	}
	return b.String()
}

func offsetRange(first, last int64) string {
	if first == last {
		return strconv.FormatInt(first, 10)
	}
	return fmt.Sprintf("%d..%d", first, last)
}

// describeBatch prints one stored batch: offsets, leader epoch, producer and,
// for a control batch, its type and coordinator epoch.
func describeBatch(b codec.Batch) string {
	s := fmt.Sprintf("%s leader-epoch=%d pid=%d epoch=%d", offsetRange(b.BaseOffset(), b.LastOffset()),
		b.PartitionLeaderEpoch(), b.ProducerID(), b.ProducerEpoch())
	if b.IsTransactional() {
		s += " txn"
	}
	if !b.IsControl() {
		return s + fmt.Sprintf(" seq=%d records=%d\n", b.BaseSequence(), b.RecordsCount())
	}
	cr, err := b.ControlRecord()
	if err != nil {
		return s + fmt.Sprintf(" control: %v\n", err)
	}
	s += " " + cr.Type.String()
	if m, err := cr.EndTxnMarker(); err == nil {
		s += fmt.Sprintf(" coord=%d", m.CoordinatorEpoch)
	}
	return s + "\n"
}

// Timestamps of the input batches: testlog.Batch's default for data, half a
// second later for markers.
const (
	dataTS   = 1700000000000
	markerTS = 1700000000500
)

// inputBatches builds the input's batch lines (internal/testbatch's
// grammar); sourceLog places each at its offset= and leader-epoch= as a
// source log stores it, else those are refused.
func inputBatches(t *testing.T, d *datadriven.TestData, sourceLog bool) [][]byte {
	lines, err := testbatch.Lines(d.Input)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	var out [][]byte
	for _, l := range lines {
		ts := int64(dataTS)
		if l.Marker {
			ts = markerTS
		}
		b := l.Bytes(t, ts)
		if sourceLog {
			b = testlog.WithOffsets(b, l.Offset, l.LeaderEpoch)
		} else if l.Placed {
			t.Fatalf("%s: offset= and leader-epoch= are for mirrored input only", d.Pos)
		}
		out = append(out, b)
	}
	return out
}
