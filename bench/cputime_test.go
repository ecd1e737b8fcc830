package bench

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
	"testing"
	"time"

	kafkaprotocol "github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// processCPU is the process's user+system CPU time: it includes sarama's
// response-reader goroutine and the garbage collector, which the walks that
// allocate make work.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCPUTimeRecordWalk measures CPU time per walk (not wall time), which a
// machine shared with other jobs does not inflate by descheduling; the
// minimum of 7 interleaved rounds is reported. Opt-in:
// MIRRORPATH_CPUTIME=1.
func TestCPUTimeRecordWalk(t *testing.T) {
	if os.Getenv("MIRRORPATH_CPUTIME") == "" {
		t.Skip("set MIRRORPATH_CPUTIME=1")
	}
	raw := batch16KiB(t)
	var rb kmsg.RecordBatch
	var rec kmsg.Record
	framed := binary.BigEndian.AppendUint32(nil, uint32(len(raw)))
	framed = append(framed, raw...)
	r := bytes.NewReader(framed)
	var rs kafkaprotocol.RecordSet
	br, req := saramaBroker(t, fetchResponseV4(raw))
	brEmpty, reqEmpty := saramaBroker(t, fetchResponseV4(nil))
	walks := []struct {
		name string
		f    func()
	}{
		{"mirrorpath", func() { walkMirrorpath(raw) }},
		{"kmsg", func() { walkKmsg(raw, &rb, &rec) }},
		{"kafkago", func() { r.Reset(framed); walkKafkaGo(r, &rs) }},
		{"sarama", func() { walkSarama(br, req) }},
		{"sarama-emptyfetch", func() { brEmpty.Fetch(reqEmpty) }},
	}
	const n = 3000
	best := make([]time.Duration, len(walks))
	for round := 0; round < 7; round++ {
		for i, w := range walks {
			start := processCPU()
			for range n {
				w.f()
			}
			d := (processCPU() - start) / n
			if round == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	for i, w := range walks {
		t.Logf("%-18s %9v/op  %6.2fx mirrorpath  (min CPU time of 7 rounds of %d)", w.name, best[i],
			float64(best[i])/float64(best[0]), n)
	}
}
