package bench

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"

	"github.com/IBM/sarama"
	"github.com/mirrorpath/mirrorpath/codec"
	kafkaprotocol "github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// walkRecords is the record count of the 16 KiB batch of docs/measuring.md:
// 129 records of 10-byte keys and 106-byte values.
const walkRecords = 129

// batch16KiB builds an uncompressed idempotent batch of 129 records, each
// with a 10-byte key and a 106-byte value: 16,411 bytes in all.
func batch16KiB(tb testing.TB) []byte {
	recs := make([]codec.Record, walkRecords)
	for i := range recs {
		key := []byte("key-000000")
		key[9] = byte('0' + i%10)
		val := bytes.Repeat([]byte{byte(i)}, 106)
		recs[i] = codec.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: key, Value: val}
	}
	h := codec.BatchHeader{BaseTimestamp: 1700000000000, ProducerID: 4242, ProducerEpoch: 1, BaseSequence: 0,
		PartitionLeaderEpoch: 3}
	b, err := codec.AppendBatch(nil, h, recs, codec.CompressionNone)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Each walk verifies the CRC where the implementation does, visits every
// record, and returns the total key+value bytes seen.

func walkMirrorpath(raw []byte) (int, error) {
	b, err := codec.ParseBatch(raw)
	if err != nil {
		return 0, err
	}
	if err := b.VerifyCRC(); err != nil {
		return 0, err
	}
	it := b.Records()
	n := 0
	var r codec.Record
	for {
		err := it.Read(&r)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += len(r.Key) + len(r.Value)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// walkKmsg is how franz-go's consumer reads a batch: RecordBatch.ReadFrom,
// the CRC over bytes 21.., then Record.ReadFrom per record, each record cut
// at its length varint.
func walkKmsg(raw []byte, rb *kmsg.RecordBatch, rec *kmsg.Record) (int, error) {
	if err := rb.ReadFrom(raw); err != nil {
		return 0, err
	}
	if uint32(rb.CRC) != crc32.Checksum(raw[21:], castagnoli) {
		return 0, io.ErrUnexpectedEOF
	}
	in := rb.Records
	n := 0
	for i := int32(0); i < rb.NumRecords; i++ {
		l, used := binary.Varint(in)
		if used <= 0 || int(l) > len(in)-used {
			return n, io.ErrUnexpectedEOF
		}
		if err := rec.ReadFrom(in[:used+int(l)]); err != nil {
			return n, err
		}
		in = in[used+int(l):]
		n += len(rec.Key) + len(rec.Value)
	}
	return n, nil
}

// walkKafkaGo reads the batch with kafka-go's protocol.RecordSet (which
// verifies the CRC) and visits every record.
func walkKafkaGo(framed *bytes.Reader, rs *kafkaprotocol.RecordSet) (int, error) {
	if _, err := rs.ReadFrom(framed); err != nil {
		return 0, err
	}
	n := 0
	for {
		r, err := rs.Records.ReadRecord()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if r.Key != nil {
			n += r.Key.Len()
			r.Key.Close()
		}
		if r.Value != nil {
			n += r.Value.Len()
			r.Value.Close()
		}
	}
}

// saramaBroker returns a sarama Broker connected to an in-memory fake that
// answers every fetch with body.
func saramaBroker(tb testing.TB, body []byte) (*sarama.Broker, *sarama.FetchRequest) {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	conf.ApiVersionsRequest = false
	conf.Net.Proxy.Enable = true
	conf.Net.Proxy.Dialer = fakeDialer{conn: newFakeConn(body)}
	br := sarama.NewBroker("mem:9092")
	if err := br.Open(conf); err != nil {
		tb.Fatal(err)
	}
	req := &sarama.FetchRequest{Version: 4, MaxWaitTime: 0, MinBytes: 1, MaxBytes: 1 << 20}
	req.AddBlock("t", 0, 0, 1<<20, -1)
	tb.Cleanup(func() { br.Close() })
	return br, req
}

// walkSarama fetches the batch through sarama's Broker.Fetch (its public
// entry point to the batch decoder, which checks the CRC) and visits every
// record.
func walkSarama(br *sarama.Broker, req *sarama.FetchRequest) (int, error) {
	resp, err := br.Fetch(req)
	if err != nil {
		return 0, err
	}
	blk := resp.GetBlock("t", 0)
	if blk == nil || blk.Err != sarama.ErrNoError {
		return 0, io.ErrUnexpectedEOF
	}
	n := 0
	for _, rs := range blk.RecordsSet {
		if rs.RecordBatch == nil {
			continue
		}
		for _, r := range rs.RecordBatch.Records {
			n += len(r.Key) + len(r.Value)
		}
	}
	return n, nil
}

// expectedBytes is what every walk must return for batch16KiB.
const expectedBytes = walkRecords * (10 + 106)

func TestWalksAgree(t *testing.T) {
	raw := batch16KiB(t)
	var rb kmsg.RecordBatch
	var rec kmsg.Record
	br, req := saramaBroker(t, fetchResponseV4(raw))
	framed := binary.BigEndian.AppendUint32(nil, uint32(len(raw)))
	framed = append(framed, raw...)
	var rs kafkaprotocol.RecordSet
	for name, walk := range map[string]func() (int, error){
		"mirrorpath": func() (int, error) { return walkMirrorpath(raw) },
		"kmsg":       func() (int, error) { return walkKmsg(raw, &rb, &rec) },
		"sarama":     func() (int, error) { return walkSarama(br, req) },
		"kafkago":    func() (int, error) { return walkKafkaGo(bytes.NewReader(framed), &rs) },
	} {
		n, err := walk()
		if err != nil || n != expectedBytes {
			t.Errorf("%s: %d bytes, %v; want %d", name, n, err, expectedBytes)
		}
	}
	// Every walk rejects a flipped payload bit.
	bad := bytes.Clone(raw)
	bad[len(bad)/2] ^= 1
	if _, err := walkMirrorpath(bad); err == nil {
		t.Error("mirrorpath accepted a bad CRC")
	}
	if _, err := walkKmsg(bad, &rb, &rec); err == nil {
		t.Error("kmsg walk accepted a bad CRC")
	}
}

func BenchmarkRecordWalk(b *testing.B) {
	raw := batch16KiB(b)
	const name = "/batch=16KiB"
	check := func(b *testing.B, n int, err error) {
		if err != nil || n != expectedBytes {
			b.Fatalf("%d bytes, %v", n, err)
		}
	}
	b.Run("impl=mirrorpath"+name, func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			n, err := walkMirrorpath(raw)
			check(b, n, err)
		}
	})
	b.Run("impl=kmsg"+name, func(b *testing.B) {
		var rb kmsg.RecordBatch
		var rec kmsg.Record
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			n, err := walkKmsg(raw, &rb, &rec)
			check(b, n, err)
		}
	})
	b.Run("impl=sarama"+name, func(b *testing.B) {
		br, req := saramaBroker(b, fetchResponseV4(raw))
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			n, err := walkSarama(br, req)
			check(b, n, err)
		}
	})
	b.Run("impl=kafkago"+name, func(b *testing.B) {
		framed := binary.BigEndian.AppendUint32(nil, uint32(len(raw)))
		framed = append(framed, raw...)
		r := bytes.NewReader(framed)
		var rs kafkaprotocol.RecordSet
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(framed)
			n, err := walkKafkaGo(r, &rs)
			check(b, n, err)
		}
	})
}

// BenchmarkSaramaFetchOverhead is sarama's Broker.Fetch with an empty record
// set: the request/response round trip through the in-memory connection that
// the sarama walk pays on top of decoding. results/codec.md subtracts it.
func BenchmarkSaramaFetchOverhead(b *testing.B) {
	br, req := saramaBroker(b, fetchResponseV4(nil))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := br.Fetch(req); err != nil {
			b.Fatal(err)
		}
	}
}
