package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// recordEveryStep runs s under strategy st step by step and fails t at the
// first step after which a replica's log holds a batch the oracle did not
// record when it was written.
func recordEveryStep(t *testing.T, s *Script, st string, opts Options, src []byte) {
	t.Helper()
	w := newWorld(st, opts)
	for i := range s.commands {
		c := &s.commands[i]
		if err := w.exec(c); err != nil {
			return // a run that stops early is runStrategy's to report
		}
		w.or.afterStep()
		if missed := w.or.unrecorded(); len(missed) > 0 {
			t.Fatalf("%s: after line %d (%s) written without being recorded: %v\n%s", st, c.Line, c.opcode, missed, src)
		}
	}
}

// TestEveryWriteRecorded: whatever writes a batch (a send, a marker, a
// mirror or replica fetch, STOPPING, a cleaning), the oracle has recorded
// it by the end of the step, on every replica, for every file of the
// catalog and of the oracle's checks, under every strategy.
func TestEveryWriteRecorded(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../scenarios/*.scn", "testdata/oracle/*.scn"} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("no files match %s: %v", pattern, err)
		}
		files = append(files, m...)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(filepath.Base(file), src)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := resolveOptions(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range opts.Strategies() {
			recordEveryStep(t, s, st, opts, src)
		}
	}
}

// TestUnrecordedWriteSeen: a batch appended behind the recorder's back is
// reported, so TestEveryWriteRecorded and FuzzScenario can fail.
func TestUnrecordedWriteSeen(t *testing.T) {
	w := newWorld("verbatim", DefaultOptions())
	if err := w.exec(&command{opcode: opCluster, Args: []string{"A"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.exec(&command{opcode: opTopic, Args: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	p := w.byName["A"].part("t/0")
	raw := p.reps[0].(*recorder).replica
	b, err := dataBatch{pid: 5, seq: 0, records: 1, producer: "p", ts: w.tick()}.build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.AppendClient(b); err != nil {
		t.Fatal(err)
	}
	if got := w.or.unrecorded(); len(got) != 1 {
		t.Fatalf("unrecorded = %v, want the one batch appended behind the recorder", got)
	}
	w.or.record(p, raw, 0)
	if got := w.or.unrecorded(); len(got) != 0 {
		t.Fatalf("unrecorded = %v once the batch is recorded", got)
	}
}
