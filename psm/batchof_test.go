package psm

import (
	"bytes"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

func buildBatch(t testing.TB, h codec.BatchHeader, recs []codec.Record) codec.Batch {
	t.Helper()
	raw, err := codec.AppendBatch(nil, h, recs, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	b, err := codec.ParseBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBatchOf(t *testing.T) {
	recs := []codec.Record{{OffsetDelta: 0, Value: []byte("a")}, {OffsetDelta: 1, TimestampDelta: 5, Value: []byte("b")}}
	d := buildBatch(t, codec.BatchHeader{BaseOffset: 40, Attributes: codec.AttrTransactional, BaseTimestamp: 1000,
		ProducerID: 77, ProducerEpoch: 3, BaseSequence: 9}, recs)
	got, err := BatchOf(d)
	want := Batch{ProducerID: 77, ProducerEpoch: 3, BaseSequence: 9, LastOffsetDelta: 1, BaseOffset: 40,
		MaxTimestamp: 1005, RecordsCount: 2, Transactional: true, ControlType: codec.ControlUnknown,
		CRC: d.CRC(), HasCRC: true}
	if err != nil || got != want {
		t.Fatalf("data batch: %+v %v\nwant %+v", got, err, want)
	}

	m, _ := codec.ParseBatch(codec.AppendEndTxnMarker(nil, 77, 4, 12, true, 2500))
	got, err = BatchOf(m)
	want = Batch{ProducerID: 77, ProducerEpoch: 4, BaseSequence: -1, RecordsCount: 1, MaxTimestamp: 2500,
		Transactional: true, Control: true, ControlType: codec.ControlAbort, CoordinatorEpoch: 12, ControlTimestamp: 2500,
		CRC: m.CRC(), HasCRC: true}
	if err != nil || got != want {
		t.Fatalf("marker: %+v %v\nwant %+v", got, err, want)
	}

	bar, _ := codec.ParseBatch(codec.AppendBarrier(nil, 5, "src", 3000))
	got, err = BatchOf(bar)
	if err != nil || !got.isBarrier() || got.ProducerID != -1 || got.ControlTimestamp != 3000 {
		t.Fatalf("barrier: %+v %v", got, err)
	}

	ctl := codec.BatchHeader{Attributes: codec.AttrControl | codec.AttrTransactional, ProducerID: 1, BaseSequence: -1}
	short := buildBatch(t, ctl, []codec.Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0}}})
	if _, err := BatchOf(short); err != kafkaerr.InvalidRecord {
		t.Fatalf("short marker value: %v", err)
	}
	badKey := buildBatch(t, ctl, []codec.Record{{Key: []byte{0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}})
	if _, err := BatchOf(badKey); err != kafkaerr.InvalidRecord {
		t.Fatalf("short key: %v", err)
	}
	leader := buildBatch(t, ctl, []codec.Record{{Key: []byte{0, 0, 0, 2}, Value: []byte{0, 0}}})
	if got, err := BatchOf(leader); err != nil || got.ControlType != codec.ControlLeaderChange {
		t.Fatalf("leader change: %+v %v", got, err)
	}
	ctl.LastOffsetDelta = 0
	empty := buildBatch(t, ctl, nil)
	if got, err := BatchOf(empty); err != nil || got.RecordsCount != 0 || got.isBarrier() {
		t.Fatalf("empty control batch: %+v %v", got, err)
	}
	if n := testing.AllocsPerRun(100, func() { BatchOf(m); BatchOf(d); BatchOf(short) }); n != 0 {
		t.Fatalf("BatchOf allocates %v", n)
	}
}

// FuzzBatchOf: any batch that codec.ParseBatch accepts is read without panic,
// the header fields equal codec's getters, and a control record that reads
// as a marker gives the same answer through the append.
func FuzzBatchOf(f *testing.F) {
	f.Add(codec.AppendEndTxnMarker(nil, 7, 1, 3, false, 10))
	f.Add(codec.AppendBarrier(nil, 1, "cluster", 20))
	raw, _ := codec.AppendBatch(nil, codec.BatchHeader{ProducerID: 3, BaseSequence: 0},
		[]codec.Record{{Value: []byte("v")}}, codec.CompressionNone)
	f.Add(raw)
	f.Fuzz(func(t *testing.T, src []byte) {
		b, err := codec.ParseBatch(src)
		if err != nil {
			return
		}
		keep := bytes.Clone(src)
		got, err := BatchOf(b)
		if !bytes.Equal(keep, src) {
			t.Fatal("BatchOf wrote to its input")
		}
		if got.ProducerID != b.ProducerID() || got.ProducerEpoch != b.ProducerEpoch() ||
			got.BaseSequence != b.BaseSequence() || got.LastOffsetDelta != b.LastOffsetDelta() ||
			got.BaseOffset != b.BaseOffset() || got.RecordsCount != b.RecordsCount() ||
			got.Control != b.IsControl() || got.Transactional != b.IsTransactional() {
			t.Fatalf("header fields differ: %+v", got)
		}
		if err != nil && err != kafkaerr.InvalidRecord {
			t.Fatalf("error %v is not a kafkaerr sentinel", err)
		}
		if err != nil {
			return
		}
		// Whatever it reads, both implementations answer the same.
		for _, origin := range []Origin{Client, Coordinator, Replication} {
			mo, merr := NewModel(Options{}).Begin(0, origin).Add(&got)
			so, serr := NewStore(Options{}).Begin(0, origin).Add(&got)
			if val(mo) != val(so) || merr != serr || (mo == nil) != (merr != nil) {
				t.Fatalf("%v: model %+v %v, store %+v %v", origin, val(mo), merr, val(so), serr)
			}
		}
	})
}
