package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// batchKey is what makes two batches of two logs one piece of history,
// whatever PID a strategy rewrote: offsets, partition leader epoch, kind,
// true producer (or control type and timestamp) and sequences.
type batchKey struct {
	base, last int64
	epoch      int32
	control    bool
	truth      truth
	seq        int32
}

func keysOf(r replica) []batchKey {
	var out []batchKey
	for _, b := range batchesFrom(r, 0) {
		out = append(out, batchKey{b.BaseOffset(), b.LastOffset(), b.PartitionLeaderEpoch(), b.IsControl(), readTruth(b), b.BaseSequence()})
	}
	return out
}

// diverges reports whether src's log, ending at srcEnd, does not hold k: it
// ends at or before k, or holds another batch at k's offset. A source batch
// missing where the source has more after it is a batch the cleaner
// removed, no divergence.
func diverges(k batchKey, src []batchKey, srcEnd int64) bool {
	if k.last >= srcEnd {
		return true
	}
	for _, s := range src {
		if s.base <= k.last && k.base <= s.last {
			return s != k
		}
	}
	return false
}

// TestReparentAgreesWithSource is the simulator's invariant of
// align=divergence: after the re-parent, the member's log agrees with its
// new source batch for batch (offsets, leader epoch, true producer,
// sequences) up to its log end, the divergence point; and when it truncated,
// the first batch it removed is one the source does not hold: nothing
// shared was truncated. Every re-parent of the catalog, every strategy.
func TestReparentAgreesWithSource(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.scn")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog files: %v", err)
	}
	checked := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "align=divergence") {
			continue
		}
		for _, st := range strategyNames {
			before := map[*partition][]batchKey{}
			runSourceUntil(t, file, src, st, nil, func(w *world, c *command) bool {
				if c.opcode == opMirror && argStr(c, "align") == "divergence" {
					for _, p := range w.byName[c.Args[0]].parts {
						if topic := argStr(c, "topic"); topic != "" && p.topic != topic || p.source == nil {
							continue
						}
						checked++
						sp := p.source.part(p.key)
						srcKeys, srcEnd := keysOf(sp.lead()), sp.lead().LogEndOffset()
						now := keysOf(p.lead())
						for _, k := range now {
							if diverges(k, srcKeys, srcEnd) {
								t.Errorf("%s line %d under %s: %s %s keeps batch %+v that %s does not hold",
									filepath.Base(file), c.Line, st, p.c.name, p.key, k, p.source.name)
							}
						}
						if prev := before[p]; len(now) < len(prev) && !diverges(prev[len(now)], srcKeys, srcEnd) {
							t.Errorf("%s line %d under %s: %s %s truncated batch %+v that %s holds at the same offset",
								filepath.Base(file), c.Line, st, p.c.name, p.key, prev[len(now)], p.source.name)
						}
					}
				}
				for _, cl := range w.clusters {
					for _, p := range cl.parts {
						before[p] = keysOf(p.lead())
					}
				}
				return false
			})
		}
	}
	if checked == 0 {
		t.Fatal("no re-parent of the catalog was checked")
	}
}
