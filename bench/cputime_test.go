package bench

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
	kafkaprotocol "github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
	const n = 3000
	one := cputime.Single
	walks := []cputime.Job{
		{Name: "mirrorpath", N: n, Run: one(func() { walkMirrorpath(raw) })},
		{Name: "kmsg", N: n, Run: one(func() { walkKmsg(raw, &rb, &rec) })},
		{Name: "kafkago", N: n, Run: one(func() { r.Reset(framed); walkKafkaGo(r, &rs) })},
		{Name: "sarama", N: n, Run: one(func() { walkSarama(br, req) })},
		{Name: "sarama-emptyfetch", N: n, Run: one(func() { brEmpty.Fetch(reqEmpty) })},
	}
	best := cputime.MinPerOp(7, walks)
	for _, w := range walks {
		t.Logf("%-18s %9.0f ns/op  %6.2fx mirrorpath  (min CPU time of 7 rounds of %d)", w.Name, best[w.Name],
			best[w.Name]/best["mirrorpath"], n)
	}
}
