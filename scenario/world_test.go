package scenario

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// runWorld executes a file step by step and returns the world for
// inspection.
func runWorld(t *testing.T, file, strategy string) *world {
	t.Helper()
	w, _ := runWorldUntil(t, file, strategy, nil, nil)
	return w
}

// runWorldUntil executes a file step by step with option flags over the
// file's, up to and including the first command stop accepts (nil: to the
// end), and returns the world for inspection and whether stop accepted one.
func runWorldUntil(t *testing.T, file, strategy string, flags map[string]string, stop func(*world, *command) bool) (*world, bool) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return runSourceUntil(t, file, src, strategy, flags, stop)
}

// runSourceUntil is runWorldUntil on scenario text src named name; stop
// sees the world after each command and ends the run when it returns true.
func runSourceUntil(t *testing.T, name string, src []byte, strategy string, flags map[string]string, stop func(*world, *command) bool) (*world, bool) {
	t.Helper()
	s, err := Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := resolveOptions(s, flags)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(strategy, opts)
	for i := range s.commands {
		c := &s.commands[i]
		if err := w.exec(c); err != nil {
			t.Fatalf("%s line %d %s: %v", name, c.Line, c.opcode, err)
		}
		w.or.afterStep()
		if stop != nil && stop(w, c) {
			return w, true
		}
	}
	return w, false
}

// logOf lists r's batches as producer@baseOffset, from offset 0.
func logOf(r replica) []string {
	var got []string
	for _, b := range batchesFrom(r, 0) {
		got = append(got, fmt.Sprintf("%s@%d", readTruth(b).producer, b.BaseOffset()))
	}
	return got
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
	opts, _ := resolveOptions(s, nil)
	for _, st := range []string{"negate", "verbatim"} {
		w := newWorld(st, opts)
		for i := range s.commands {
			if err := w.exec(&s.commands[i]); err != nil {
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

// TestMirrorLoop: a mirror that would close a loop (A⇒B⇒A, A⇒B⇒C⇒A)
// moves the partition to FAILED under mirror-loop=fail (FAIL, and the
// producer on it is refused) and is not made under refuse (nothing to
// report).
func TestMirrorLoop(t *testing.T) {
	for _, src := range []string{
		"cluster A\ncluster B\ntopic t\nmirror B from A\nmirror A from B\nproducer p on A\nsend p t/0\nsync\n",
		"cluster A\ncluster B\ncluster C\ntopic t\nmirror B from A\nmirror C from B\nmirror A from C\nproducer p on A\nsend p t/0\nsync\n",
		// FAILED for good: neither an election nor a stop revives it.
		"cluster A replicas=2\ncluster B\ntopic t\nmirror B from A\nmirror A from B\nelect A t/0\nstop A\nproducer p on A\nsend p t/0\nsync\n",
	} {
		s, err := Parse("loop.scn", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"fail", "refuse"} {
			rs, err := Run(s, map[string]string{"strategy": "verbatim", "mirror-loop": mode})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(rs[0].Codes())
			want := "[ERR FAIL]" // the loop's FAIL, then READ_ONLY_TOPIC for p
			if mode == "refuse" {
				want = "[]"
			}
			if got != want {
				t.Errorf("%q mirror-loop=%s: codes %s, want %s (%+v)", src, mode, got, want, rs[0].Violations)
			}
		}
	}
}

// TestFollowerEndsNotBeyondItsLeader: a truncation inside a batch leaves each
// replica's log end at the truncation offset with the batch gone; a new
// leader reopens and ends after its last batch instead, below its followers.
// The followers must truncate to the leader's end (Kafka's
// OffsetsForLeaderEpoch answer) rather than keep ending beyond it: otherwise
// they count as caught up once the leader's new batches reach their end,
// hold none of them, and their producer state differs from the leader's
// (I2).
func TestFollowerEndsNotBeyondItsLeader(t *testing.T) {
	src := "cluster A replicas=3\ntopic t\nproducer p on A\nsend p t/0 records=4\nsync\n" +
		"producer q on A\nsend q t/0 records=3\nsync\n"
	s, err := Parse("inline", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld("verbatim", DefaultOptions())
	run := func(cmds []command) {
		for i := range cmds {
			if err := w.exec(&cmds[i]); err != nil {
				t.Fatal(err)
			}
			w.or.afterStep()
		}
	}
	run(s.commands[:5])
	p := w.byName["A"].part("t/0")
	for i, r := range p.reps {
		if err := r.Truncate(3); err != nil { // inside the batch [0, 3]
			t.Fatalf("truncate replica %d: %v", i, err)
		}
	}
	w.or.rescan(p)
	if err := w.elect(p, 2, false); err != nil {
		t.Fatal(err)
	}
	for i, r := range p.reps {
		if r.LogEndOffset() > p.lead().LogEndOffset() {
			t.Errorf("replica %d ends at %d, beyond its leader's %d", i, r.LogEndOffset(), p.lead().LogEndOffset())
		}
	}
	run(s.commands[5:])
	for _, v := range w.or.violations {
		t.Errorf("%s at step %d: %s", v.Code, v.Step, v.Detail)
	}
	want := summarize(p.lead().Producers())
	for i, r := range p.reps {
		if r.LogEndOffset() != p.lead().LogEndOffset() || summarize(r.Producers()) != want {
			t.Errorf("replica %d: end %d, producers %s; leader: end %d, producers %s",
				i, r.LogEndOffset(), summarize(r.Producers()), p.lead().LogEndOffset(), want)
		}
	}
}

// TestFailbackAfterLostTail: A lost the batch B mirrored from it in an
// unclean restart after B stopped, then wrote a new batch across B's stop
// position. The failback shares no history past the lowest log end A had
// since B stopped (0): A truncates there, not inside its new batch (which
// left a leader whose log end no batch reaches, and a follower that could
// never fetch), and fetches B's copy of the lost batch back, offset for
// offset.
func TestFailbackAfterLostTail(t *testing.T) {
	src := "cluster A replicas=2\ncluster B\ntopic t\nmirror B from A\nproducer p on A\nsend p t/0 records=1\nsync\n" +
		"stop B\nmirror A from B\nstop A\nrestart A unclean\nproducer q on A\nsend q t/0 records=4\n" +
		"mirror A from B\nsync\n"
	w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		if c.Line == 11 && w.byName["A"].part("t/0").lead().LogEndOffset() != 0 {
			t.Fatal("the unclean restart kept p's batch: the test no longer loses A's tail")
		}
		return false
	})
	for i, r := range w.byName["A"].part("t/0").reps {
		if got := logOf(r); len(got) != 1 || got[0] != "p@0" || r.LogEndOffset() != 1 {
			t.Errorf("A replica %d: %v ending at %d, want [p@0] ending at 1", i, got, r.LogEndOffset())
		}
	}
}

// TestFailbackAfterLostTailResent: as TestFailbackAfterLostTail, but what
// raises A's log end again after the cut is p's own resend of its
// unacknowledged batch, inside the restart command. The failback still
// sees the cut (0): A truncates there and fetches B's copy of its lost
// batch back under every strategy, instead of fetching B inside that
// batch (FAIL), and ends with B's log; under negate the copy comes back
// with p's own PID, which is no I6.
func TestFailbackAfterLostTailResent(t *testing.T) {
	src := "cluster A replicas=2\ncluster B\ntopic t\nmirror B from A\nproducer p on A\nsend p t/0 records=2\nsync\n" +
		"send p t/0 records=1\nstop B\nrestart A unclean\nmirror A from B\nsync\n"
	for _, st := range strategyNames {
		w, _ := runSourceUntil(t, "inline", []byte(src), st, nil, func(w *world, c *command) bool {
			if c.Line == 10 && w.byName["A"].part("t/0").lead().LogEndOffset() != 1 {
				t.Fatalf("%s: the restart left A ending at %d, want 1 (p's resend alone)", st,
					w.byName["A"].part("t/0").lead().LogEndOffset())
			}
			return false
		})
		for _, v := range w.or.violations {
			if v.Code != CodeRPO && v.Code != CodeERR {
				t.Errorf("%s: %s at step %d: %s", st, v.Code, v.Step, v.Detail)
			}
		}
		b := w.byName["B"].part("t/0").lead()
		want := fmt.Sprint(logOf(b))
		for i, rep := range w.byName["A"].part("t/0").reps {
			if got := logOf(rep); fmt.Sprint(got) != want || len(got) == 0 || got[0] != "p@0" || rep.LogEndOffset() != b.LogEndOffset() {
				t.Errorf("%s: A replica %d: %v ending at %d, want B's log %s ending at %d, p's first batch at 0",
					st, i, got, rep.LogEndOffset(), want, b.LogEndOffset())
			}
		}
	}
}

func TestFailbackAfterSourceLostTail(t *testing.T) {
	src := "cluster A\ncluster B replicas=2\ntopic t\nmirror B from A\nproducer p on A\nsend p t/0 records=1\nsync\n" +
		"stop B\nrestart B unclean\nproducer q on B\nsend q t/0 records=4\nmirror A from B\nsync\n" +
		"stop A\nmirror B from A\nsync\n"
	w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		if c.Line == 9 && w.byName["B"].part("t/0").lead().LogEndOffset() != 0 {
			t.Fatal("the unclean restart kept B's mirrored batch: the test no longer loses B's tail")
		}
		return false
	})
	for _, name := range []string{"A", "B"} {
		for i, r := range w.byName[name].part("t/0").reps {
			if got := logOf(r); len(got) != 1 || got[0] != "q@0" || r.LogEndOffset() != 4 {
				t.Errorf("%s replica %d: %v ending at %d, want [q@0] ending at 4", name, i, got, r.LogEndOffset())
			}
		}
	}
}

// TestSnapshotWindowAfterMarker: the election reloads the leader from a
// snapshot taken after the first ABORT, whose timestamp the reloaded batch
// takes; the second ABORT (of a transaction with no data on the partition)
// moves the entry's last timestamp on. The followers, which applied the
// batch itself, agree with it: no I2.
func TestSnapshotWindowAfterMarker(t *testing.T) {
	src := "cluster A replicas=3\ntopic t\nproducer p on A transactional=x\nbegin p\nsend p t/0 records=1\nabort p\n" +
		"begin p\nadd p t/0\nelect A t/0 replica=0\nabort p\nsync\n"
	r := runInline(t, src)
	for _, v := range r.Violations {
		t.Errorf("%s at step %d: %s", v.Code, v.Step, v.Detail)
	}
}

// TestElectLaggingMirrorReplica: C mirrors B and its replica 0 is held back
// (paused, still in the ISR) while C takes B's transaction and B's STOPPING
// ABORT. A clean election of replica 0 leaves a leader without that tail;
// the mirror fetcher goes back as far and brings the ABORT again, so C's
// LSO is not pinned (no M6) once it caught up.
func TestElectLaggingMirrorReplica(t *testing.T) {
	src := "cluster A\ncluster B replicas=3 fetch-bytes=90\ncluster C replicas=3\ntopic t\nmirror B from A\n" +
		"mirror C from B\nproducer p on A transactional=x\npause C t/0 replica=0\nbegin p\nsend p t/0 records=2\n" +
		"sync\nstop B\nelect C t/0 replica=2\nsync\nelect C t/0\nsync\n"
	s, err := Parse("inline", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	if err := opts.Set("unknown-source", "write"); err != nil {
		t.Fatal(err)
	}
	for _, st := range strategyNames {
		r, err := runStrategy(s, st, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Violations {
			t.Errorf("%s: %s at step %d on %s: %s", st, v.Code, v.Step, v.Cluster, v.Detail)
		}
	}
}

// runInline parses the inline script src and runs it under verbatim with
// the default options.
func runInline(t *testing.T, src string) Result {
	t.Helper()
	s, err := Parse("inline", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, err := runStrategy(s, "verbatim", DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
