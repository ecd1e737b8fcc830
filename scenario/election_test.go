package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestElectionKeepsProducerState is the simulator's invariant of a leader
// change: the new leader's producer state is the one it held as a follower,
// entry for entry and window batch for batch (Kafka's Partition#makeLeader
// reloads nothing). It holds at every election of the catalog under every
// strategy whose new leader's log the election leaves as it was (a clean
// election of a STOPPED partition that lacks its STOPPING output runs
// STOPPING again, which appends).
func TestElectionKeepsProducerState(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.scn")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog files: %v", err)
	}
	type held struct {
		end     int64
		entries []producerEntry
	}
	compared := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "\nelect ") {
			continue
		}
		for _, st := range strategyNames {
			before := map[replica]held{}
			runSourceUntil(t, file, src, st, nil, func(w *world, c *command) bool {
				if c.opcode == opElect {
					lead := w.byName[c.Args[0]].part(c.Args[1]).lead()
					if was, ok := before[lead]; ok && was.end == lead.LogEndOffset() {
						compared++
						if got := lead.Producers(); !reflect.DeepEqual(got, was.entries) {
							t.Errorf("%s line %d under %s: the new leader's producer state\n%s\nis not the follower's\n%s",
								filepath.Base(file), c.Line, st, summarize(got), summarize(was.entries))
						}
					}
				}
				for _, cl := range w.clusters {
					for _, p := range cl.parts {
						for _, r := range p.reps {
							before[r] = held{r.LogEndOffset(), r.Producers()}
						}
					}
				}
				return false
			})
		}
	}
	if compared == 0 {
		t.Fatal("no election of the catalog was compared")
	}
}
