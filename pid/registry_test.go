package pid

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testhex"
)

// The salt record's key and value, byte for byte (docs/format.md).
func TestSaltRecordLayout(t *testing.T) {
	wantKey := testhex.Unhex(t, `
		0003                                 # 0..1    type int16 = 3 (MirrorPidCollisionKey)
		70010203 04050607 08090a0b 0c0d0e0f  # 2..17   TopicId uuid
		00000003                             # 18..21  Partition int32 = 3
		0016                                 # 22..23  SourceClusterId length int16 = 22
		61366534454a327445644741744144415439517779 41 # 24..45 "a6e4EJ2tEdGAtADAT9QwyA"
		0000000000000005                     # 46..53  OriginalPid int64 = 5
	`)
	wantValue := testhex.Unhex(t, `
		0000                                 # 0..1    version int16 = 0
		000000001234abcd                     # 2..9    Salt int64
		17                                   # 10      CollidingClusterId compact length: uvarint 22+1
		4d6b55334f4556424e5463774e544a454e444d3251 67 # 11..32 "MkU3OEVBNTcwNTJENDM2Qg"
		0000018bcfe56800                     # 33..40  TimestampMs int64 = 1700000000000
		00                                   # 41      tagged fields: count 0
	`)
	s := Salt{
		TopicID: topicT, Partition: 3,
		Cluster: uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), PID: 5,
		Salt: 0x1234abcd, CollidingCluster: "MkU3OEVBNTcwNTJENDM2Qg", TimestampMs: 1_700_000_000_000,
	}
	b, err := appendSaltBatch(nil, 41, s)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := codec.ParseBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.VerifyCRC(); err != nil {
		t.Fatal(err)
	}
	if batch.BaseOffset() != 41 || batch.RecordsCount() != 1 || batch.ProducerID() != -1 ||
		batch.ProducerEpoch() != -1 || batch.BaseSequence() != -1 || batch.Attributes() != 0 ||
		batch.BaseTimestamp() != s.TimestampMs || batch.MaxTimestamp() != s.TimestampMs {
		t.Errorf("header: %+v", batch.Header())
	}
	it := batch.Records()
	rec, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Key, wantKey) {
		t.Errorf("key\n got %x\nwant %x", rec.Key, wantKey)
	}
	if !bytes.Equal(rec.Value, wantValue) {
		t.Errorf("value\n got %x\nwant %x", rec.Value, wantValue)
	}
}

// buildLog writes n salts of clB (PIDs 0..n-1) through a Mapper and returns
// the log and the batch boundaries.
func buildLog(t *testing.T, n int) (log []byte, ends []int) {
	t.Helper()
	w := &flakyWriter{}
	m := newTestMapper(NewRegistry(w, func() int64 { return 77 }), 1)
	for p := range int64(n) {
		mustMap(t, m, clA, p)
		before := len(w.buf)
		mustMap(t, m, clB, p)
		if len(w.buf) == before {
			t.Fatal("no salt record written")
		}
		ends = append(ends, len(w.buf))
	}
	return w.buf, ends
}

func TestRegistryLoadErrors(t *testing.T) {
	log, ends := buildLog(t, 3)

	// A CRC mismatch in the second batch: the first stays applied.
	bad := bytes.Clone(log)
	bad[ends[0]+codec.HeaderSize+3] ^= 0x40
	r := NewRegistry(nil, nil)
	err := r.Load(bad)
	var le *LogError
	if !errors.As(err, &le) || !errors.Is(err, ErrBadLog) || !errors.Is(err, codec.ErrCRC) ||
		le.Pos != int64(ends[0]) || le.Offset != 1 {
		t.Fatalf("CRC error: %v (%+v)", err, le)
	}
	if msg := err.Error(); !strings.Contains(msg, "position") || !strings.Contains(msg, "CRC") {
		t.Errorf("message %q", msg)
	}
	if r.Len() != 1 || r.NextOffset() != 1 {
		t.Errorf("after the CRC error: %d salts, next offset %d", r.Len(), r.NextOffset())
	}

	// A trailing header cut short: no batch, so no offset (-1).
	r = NewRegistry(nil, nil)
	if err := r.Load(append(bytes.Clone(log[:ends[0]]), 0, 0, 0)); !errors.As(err, &le) || le.Offset != -1 || le.Pos != int64(ends[0]) {
		t.Errorf("cut header: %v (%+v)", err, le)
	}

	// A cut trailing batch.
	r = NewRegistry(nil, nil)
	if err := r.Load(log[:len(log)-5]); !errors.Is(err, codec.ErrPartial) || !errors.Is(err, ErrBadLog) {
		t.Errorf("partial: %v", err)
	}
	if r.Len() != 2 {
		t.Errorf("partial: %d salts", r.Len())
	}

	// Other record types and control batches are skipped; a tombstone
	// removes; a key whose cluster ID is unreadable stops the load.
	hdr := codec.BatchHeader{BaseOffset: 3, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	// (A key of two bytes is enough to tell the type.)
	other, _ := codec.AppendBatch(nil, hdr, []codec.Record{{Key: []byte{0, 9, 1, 2}, Value: []byte("x")}, {Key: []byte{0, 9}}}, codec.CompressionNone)
	hdr.BaseOffset = 4
	hdr.Attributes = codec.AttrControl
	ctl, _ := codec.AppendBatch(nil, hdr, []codec.Record{{Key: []byte{0, 0, 0, 7}, Value: []byte{0}}}, codec.CompressionNone)
	hdr.BaseOffset = 5
	hdr.Attributes = 0
	key := codec.MirrorPidCollisionKey{TopicID: topicT, Partition: 3, SourceClusterID: uuid.UUID(clB).String(), OriginalPID: 1}
	tomb, _ := codec.AppendBatch(nil, hdr, []codec.Record{{Key: key.AppendTo(nil)}}, codec.CompressionNone)
	full := append(append(append(bytes.Clone(log), other...), ctl...), tomb...)
	r = NewRegistry(nil, nil)
	if err := r.Load(full); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup(topicT, 3, clB, 1); ok || r.Len() != 2 || r.NextOffset() != 6 {
		t.Errorf("tombstone: %d salts, next offset %d", r.Len(), r.NextOffset())
	}
	if _, ok := r.Lookup(topicT, 3, clB, 2); !ok {
		t.Error("salt of B.2 lost")
	}

	key.SourceClusterID = "not-a-cluster"
	hdr.BaseOffset = 6
	badID, _ := codec.AppendBatch(nil, hdr, []codec.Record{{Key: key.AppendTo(nil), Value: []byte{0}}}, codec.CompressionNone)
	if err := NewRegistry(nil, nil).Load(badID); !errors.Is(err, ErrClusterID) || !errors.Is(err, ErrBadLog) {
		t.Errorf("bad cluster id: %v", err)
	}
	key.SourceClusterID = FormatClusterID(clB)
	badVal, _ := codec.AppendBatch(nil, hdr, []codec.Record{{Key: key.AppendTo(nil), Value: []byte{0, 0, 1}}}, codec.CompressionNone)
	if err := NewRegistry(nil, nil).Load(badVal); !errors.Is(err, codec.ErrBadControl) {
		t.Errorf("bad value: %v", err)
	}
	gz, err := codec.AppendBatch(nil, hdr, []codec.Record{{Key: key.AppendTo(nil), Value: []byte{0}}}, codec.CompressionGzip)
	if err != nil {
		t.Fatal(err)
	}
	if err := NewRegistry(nil, nil).Load(gz); !errors.Is(err, codec.ErrUnsupportedCodec) {
		t.Errorf("compressed: %v", err)
	}
	if err := NewRegistry(nil, nil).Load([]byte("garbage that is not a log")); !errors.Is(err, ErrBadLog) {
		t.Errorf("garbage: %v", err)
	}
	if err := NewRegistry(nil, nil).Load(nil); err != nil {
		t.Errorf("empty log: %v", err)
	}
}

// Load adds to what the registry holds, and a salt loaded while a Mapper
// runs is seen by its next Map.
func TestRegistryLoadLive(t *testing.T) {
	log, _ := buildLog(t, 2)
	reg := NewRegistry(nil, nil)
	m := newTestMapper(reg, 9)
	before := mustMap(t, m, clB, 1)
	if before != mustMapPure(42, 1) {
		t.Fatal("unexpected salt")
	}
	if err := reg.Load(log); err != nil {
		t.Fatal(err)
	}
	after := mustMap(t, m, clB, 1) // no Reset: the fast path must notice the new snapshot
	salt, ok := reg.Lookup(topicT, 3, clB, 1)
	if !ok || after != Compose(42^salt, 1) {
		t.Errorf("after Load: %d (salt %#x, %v)", after, salt, ok)
	}
}

// A new leader loads the log and keeps appending to it: offsets continue and
// a third leader sees the salts of both.
func TestRegistryContinuesLog(t *testing.T) {
	w := &flakyWriter{}
	m1 := newTestMapper(NewRegistry(w, nil), 1)
	mustMap(t, m1, clA, 1)
	b1 := mustMap(t, m1, clB, 1)

	reg2 := NewRegistry(w, nil)
	if err := reg2.Load(bytes.Clone(w.buf)); err != nil {
		t.Fatal(err)
	}
	m2 := newTestMapper(reg2, 2)
	mustMap(t, m2, clA, 2)
	b2 := mustMap(t, m2, clB, 2)
	if reg2.NextOffset() != 2 {
		t.Errorf("next offset %d, want 2", reg2.NextOffset())
	}

	reg3 := NewRegistry(nil, nil)
	if err := reg3.Load(w.buf); err != nil {
		t.Fatal(err)
	}
	var offs []int64
	rd := codec.NewReader(w.buf, 0)
	for {
		b, _, err := rd.Next()
		if err != nil {
			break
		}
		offs = append(offs, b.BaseOffset())
	}
	if len(offs) != 2 || offs[0] != 0 || offs[1] != 1 {
		t.Errorf("log offsets %v, want [0 1]", offs)
	}
	m3 := newTestMapper(reg3, 3)
	if mustMap(t, m3, clB, 1) != b1 || mustMap(t, m3, clB, 2) != b2 {
		t.Error("third leader maps B differently")
	}
}
