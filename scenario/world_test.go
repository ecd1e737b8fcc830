package scenario

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/pid"
)

// runWorld executes a file step by step and returns the world for
// inspection.
func runWorld(t *testing.T, file, strategy string) *world {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(strategy, opts)
	for i := range s.Commands {
		if err := w.exec(&s.Commands[i]); err != nil {
			t.Fatal(err)
		}
		w.or.afterStep()
	}
	return w
}

// TestLeaderChangeDuringStopping is catalog 23's second claim: the barrier
// is written twice (once by each leader) and the log end offset grows by the
// control record only: every replica ends with the 10 mirrored records, one
// barrier (barrier strategy) and the 10 local records.
func TestLeaderChangeDuringStopping(t *testing.T) {
	for _, st := range []string{"barrier", "negate"} {
		w := runWorld(t, "../scenarios/23-leader-change-stopping.scn", st)
		p := w.byName["B"].part("t/0")
		wantBarriers := 0
		if st == "barrier" {
			wantBarriers = 1
		}
		for i, r := range p.reps {
			var kinds []string
			for _, b := range batchesFrom(r, 0) {
				switch {
				case b.IsControl():
					kinds = append(kinds, readTruth(b).control.String())
				default:
					kinds = append(kinds, fmt.Sprintf("%s×%d", readTruth(b).producer, b.RecordsCount()))
				}
			}
			want := []string{"p×10", "q×10"}
			if wantBarriers == 1 {
				want = []string{"p×10", "MIRROR_PID_RESET", "q×10"}
			}
			if fmt.Sprint(kinds) != fmt.Sprint(want) {
				t.Errorf("%s replica %d: log %v, want %v", st, i, kinds, want)
			}
			if got, want := r.LogEndOffset(), int64(20+wantBarriers); got != want {
				t.Errorf("%s replica %d: LEO %d, want %d (data + barrier only)", st, i, got, want)
			}
		}
	}
}

// TestFailbackTruncatesToDivergence: in catalog 03, A keeps its own batch
// below the divergence point and appends B's log after it as-is (the barrier
// included, under barrier).
func TestFailbackTruncatesToDivergence(t *testing.T) {
	w := runWorld(t, "../scenarios/03-failback.scn", "barrier")
	a := w.byName["A"].part("t/0")
	var kinds []string
	for _, b := range batchesFrom(a.lead(), 0) {
		if b.IsControl() {
			kinds = append(kinds, readTruth(b).control.String())
		} else {
			kinds = append(kinds, readTruth(b).producer)
		}
	}
	want := []string{"p", "MIRROR_PID_RESET", "q", "MIRROR_PID_RESET", "r"}
	if len(kinds) != len(want) {
		t.Fatalf("A's log: %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("A's log: %v, want %v", kinds, want)
		}
	}
}

// TestReadCommittedView checks the read_committed comparison on its own: the
// last sync of m5-read-committed.scn mirrors an aborted transaction that B
// does not track, so B delivers what A skips.
func TestReadCommittedView(t *testing.T) {
	src, err := os.ReadFile("testdata/oracle/m5-read-committed.scn")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("m5.scn", src)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := Resolve(s, nil)
	for _, st := range []string{"negate", "verbatim"} {
		w := newWorld(st, opts)
		for i := range s.Commands {
			if err := w.exec(&s.Commands[i]); err != nil {
				t.Fatal(err)
			}
		}
		p := w.byName["B"].part("t/0")
		if len(p.pairs) != 2 {
			t.Fatalf("%s: %d mirrored data batches paired, want 2", st, len(p.pairs))
		}
		w.or.checkReadCommitted(p)
		got := codesOf(w.or)
		want := map[string]string{"negate": "M5", "verbatim": ""}[st]
		if got != want {
			t.Errorf("%s: %q %+v, want %q", st, got, w.or.violations, want)
		}
		if st == "negate" && !strings.Contains(w.or.violations[0].Detail, "delivered on B, skipped at offset 0 on A") {
			t.Errorf("detail %q", w.or.violations[0].Detail)
		}
		if len(p.pairs) != 0 {
			t.Errorf("%s: decided pairs kept: %v", st, p.pairs)
		}
	}
}

func TestMirrorCycleIsAFileError(t *testing.T) {
	s, err := Parse("cycle.scn", []byte("cluster A\ncluster B\ntopic t\nmirror B from A\nmirror A from B\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(s, map[string]string{"strategy": "verbatim"})
	if !errors.Is(err, ErrScenario) || !strings.HasPrefix(err.Error(), "cycle.scn:5: mirror: ") {
		t.Fatalf("err = %v, want cycle.scn:5 and ErrScenario", err)
	}
}

// TestStrategyNamesMatchPID: the names are spelled as package pid spells
// them (one name per strategy everywhere).
func TestStrategyNamesMatchPID(t *testing.T) {
	all := pid.Strategies()
	if len(all) != len(StrategyNames) {
		t.Fatalf("pid has %d strategies, scenario %d", len(all), len(StrategyNames))
	}
	for i, st := range all {
		if st.String() != StrategyNames[i] {
			t.Errorf("strategy %d: pid %q, scenario %q", i, st, StrategyNames[i])
		}
	}
}
