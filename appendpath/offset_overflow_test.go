package appendpath

import (
	"errors"
	"math"
	"testing"
)

// A replicated batch that keeps its offsets and ends at math.MaxInt64
// would leave the log's next offset past int64: refused with
// ErrOffsetOverflow (LogSegment#ensureOffsetInRange), alone or inside a
// chunk, and nothing of the append is written.
func TestReplicatedOffsetOverflowRefused(t *testing.T) {
	at := func(base int64, records int) []byte {
		return mkBatch(t, bspec{PID: 1, Records: records, Base: base})
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"one batch at MaxInt64", at(math.MaxInt64, 1)},
		{"one batch ending at MaxInt64", at(math.MaxInt64-4, 5)},
		{"a chunk whose second batch ends at MaxInt64", chunk(at(0, 1), at(math.MaxInt64-1, 2))},
	} {
		for _, open := range []struct {
			name   string
			cfg    Config
			append func(*Partition, []byte) error
		}{
			{"AppendReplica", Config{}, func(p *Partition, b []byte) error { _, err := p.AppendReplica(b); return err }},
			{"AppendMirrored preserving offsets", Config{State: Mirroring, MirrorOffsets: PreserveOffsets},
				func(p *Partition, b []byte) error { _, err := p.AppendMirrored(b, srcA); return err }},
		} {
			p := mustOpen(t, open.cfg)
			if err := open.append(p, c.in); !errors.Is(err, ErrOffsetOverflow) || p.LogEndOffset() != 0 {
				t.Errorf("%s, %s: %v, log end %d; want ErrOffsetOverflow and nothing written", open.name, c.name, err, p.LogEndOffset())
			}
		}
	}
	p := mustOpen(t, Config{})
	if _, err := p.AppendReplica(at(math.MaxInt64-2, 2)); err != nil || p.LogEndOffset() != math.MaxInt64 {
		t.Fatalf("a batch ending just below MaxInt64: %v, log end %d", err, p.LogEndOffset())
	}
}
