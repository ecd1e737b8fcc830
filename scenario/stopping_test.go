package scenario

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
)

// barriersOf returns the barrier values in r's log.
func barriersOf(t *testing.T, r replica) []codec.MirrorPidReset {
	t.Helper()
	var out []codec.MirrorPidReset
	for _, b := range batchesFrom(r, 0) {
		if !b.IsControl() {
			continue
		}
		cr, err := b.ControlRecord()
		if err != nil || cr.Type != codec.ControlMirrorPidReset {
			continue
		}
		m, err := codec.ParseMirrorPidReset(cr.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestBarrierSourceForms is catalog 68's claim: under barrier-source=on
// every barrier of B and A carries the id of the cluster its writer mirrored
// (B's: A's id; A's own, after the failback: B's id), under off none does,
// and the failback copies B's barrier to A in the form B wrote.
func TestBarrierSourceForms(t *testing.T) {
	for _, v := range []string{"on", "off"} {
		w, _ := runWorldUntil(t, "../scenarios/68-barrier-with-source.scn", "barrier", map[string]string{"barrier-source": v}, nil)
		a, b := w.byName["A"], w.byName["B"]
		onB := barriersOf(t, b.part("t/0").lead())
		onA := barriersOf(t, a.part("t/0").lead())
		if len(onB) != 1 || len(onA) != 2 {
			t.Fatalf("%s: %d barriers on B, %d on A; want 1 and 2", v, len(onB), len(onA))
		}
		want := []codec.MirrorPidReset{{SourceAbsent: true}, {SourceAbsent: true}}
		if v == "on" {
			want = []codec.MirrorPidReset{{SourceClusterID: pid.FormatClusterID(a.id)}, {SourceClusterID: pid.FormatClusterID(b.id)}}
		}
		if onB[0] != want[0] || onA[0] != want[0] || onA[1] != want[1] {
			t.Errorf("%s: barriers B %+v, A %+v; want B [%+v], A %+v", v, onB, onA, want[0], want)
		}
	}
}

// TestUncleanRecoveryBarrier is catalog 69's claim read from B's producer
// state right after the crash: PID 5, whose batch lies below the barrier,
// is back under recovery-barrier=ignore and gone under apply, while the log
// holds the barrier either way.
func TestUncleanRecoveryBarrier(t *testing.T) {
	unclean := func(_ *world, c *command) bool { return c.opcode == opRestart && c.Has("unclean") }
	for _, v := range []string{"ignore", "apply"} {
		w, crashed := runWorldUntil(t, "../scenarios/69-crash-after-stopped.scn", "barrier",
			map[string]string{"recovery-barrier": v}, unclean)
		if !crashed {
			t.Fatal("no unclean restart in the file")
		}
		lead := w.byName["B"].part("t/0").lead()
		if n := len(barriersOf(t, lead)); n != 1 {
			t.Fatalf("%s: %d barriers in B's log, want 1", v, n)
		}
		has5 := false
		for _, e := range lead.Producers() {
			has5 = has5 || e.PID == 5
		}
		if has5 != (v == "ignore") {
			t.Errorf("%s: PID 5 in B's producer state after the crash = %v", v, has5)
		}
	}
}

// TestHazardR1Alias: hazard-r1=on|off still set unknown-source (skip|write),
// in a file and through Set; other values are refused.
func TestHazardR1Alias(t *testing.T) {
	for v, want := range map[string]string{"on": "skip", "off": "write"} {
		o := DefaultOptions()
		if err := o.Set("hazard-r1", v); err != nil || o.Get("unknown-source") != want {
			t.Fatalf("Set hazard-r1=%s: %v, unknown-source=%s", v, err, o.Get("unknown-source"))
		}
		s, err := Parse("a.scn", []byte("set hazard-r1="+v+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		o, err = resolveOptions(s, nil)
		if err != nil || o.Get("unknown-source") != want {
			t.Fatalf("file hazard-r1=%s: %v, unknown-source=%s", v, err, o.Get("unknown-source"))
		}
	}
	o := DefaultOptions()
	if err := o.Set("hazard-r1", "maybe"); err == nil {
		t.Fatal("hazard-r1=maybe accepted")
	}
}

// TestMultiPartitionStopBarriers is catalog 65's mechanism: under
// stop-completion=first the partition after the first gets a second barrier
// at the next stop, after q's batch; under each every partition has one.
func TestMultiPartitionStopBarriers(t *testing.T) {
	for v, want := range map[string][2]int{"first": {1, 2}, "each": {1, 1}} {
		w, _ := runWorldUntil(t, "../scenarios/65-multi-partition-stop.scn", "barrier", map[string]string{"stop-completion": v}, nil)
		b := w.byName["B"]
		got := [2]int{len(barriersOf(t, b.part("t/0").lead())), len(barriersOf(t, b.part("t/1").lead()))}
		if got != want {
			t.Errorf("stop-completion=%s: barriers on t/0, t/1 = %v, want %v", v, got, want)
		}
	}
}
