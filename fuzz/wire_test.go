package fuzz

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/conform"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

// wireTimeout bounds one input: topic creation, produce, fetch.
const wireTimeout = 20 * time.Second

// wireCodecs are the producers' batch compressions, one client each.
var wireCodecs = []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(),
	kgo.Lz4Compression(), kgo.ZstdCompression()}

// wire is the source cluster of the process: franz-go's kfake, a
// connection that creates topics and fetches raw batches, and one
// idempotent producer per codec. Started once; fuzz workers are processes.
var wire struct {
	once      sync.Once
	err       error
	kfake     *conform.Kfake
	target    *conform.Target
	producers []*kgo.Client
	topics    atomic.Int64
}

func wireSource(tb testing.TB) {
	wire.once.Do(func() {
		if wire.kfake, wire.err = conform.StartKfake(); wire.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), wireTimeout)
		defer cancel()
		if wire.target, wire.err = wire.kfake.Dial(ctx, wireTimeout); wire.err != nil {
			return
		}
		for _, c := range wireCodecs {
			cl, err := kgo.NewClient(kgo.SeedBrokers(wire.kfake.Addr), kgo.ProducerBatchCompression(c),
				kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()),
				kgo.MetadataMinAge(10*time.Millisecond)) // each input's topic is new: no 5 s wait for it
			if err != nil {
				wire.err = err
				return
			}
			wire.producers = append(wire.producers, cl)
		}
	})
	if wire.err != nil {
		tb.Fatalf("source cluster: %v", wire.err)
	}
}

// wireRecords cuts data into at most 32 records: per record a key length
// (0..16, or 17 for a null key), a value length and a header count (0..2),
// then the bytes, as far as data lasts.
func wireRecords(topic string, data []byte) []*kgo.Record {
	take := func(n int) []byte {
		if n < 0 {
			return nil
		}
		n = min(n, len(data))
		b := append([]byte{}, data[:n]...)
		data = data[n:]
		return b
	}
	var recs []*kgo.Record
	for len(data) >= 3 && len(recs) < 32 {
		kl, vl, hc := int(data[0]%18), int(data[1]), int(data[2]%3)
		if kl == 17 {
			kl = -1
		}
		data = data[3:]
		r := &kgo.Record{Topic: topic, Key: take(kl), Value: take(vl)}
		for range hc {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(take(2)), Value: take(3)})
		}
		recs = append(recs, r)
	}
	return recs
}

// FuzzMirrorOverWire: records produced by franz-go's idempotent producer to
// kfake with any codec, fetched over the wire as raw batches and mirrored
// into a partition under any strategy, CRC fix and policy, are accepted
// (but by bitfield under policy reject: kfake's producer IDs do not fit);
// read back with codec they are the records produced (key, value, headers, the offsets and
// timestamps the produce returned), in order; and the partition's producer
// state holds the producer's last sequence and epoch.
func FuzzMirrorOverWire(f *testing.F) {
	f.Add([]byte("\x03\x05\x01keyvalue\x01\x02hh\x00\x11\x00\x00"), uint8(0))
	f.Add([]byte("\x00\xff\x02"+string(make([]byte, 300))), uint8(1))
	// every codec, strategy and CRC fix under policy reject, and bitfield
	// under policy alias (modes 75-79, 105-109)
	for mode := range uint8(120) {
		if mode%7 == 0 || mode == 77 || mode == 108 {
			f.Add([]byte("\x02\x10\x01k1value-of-sixteenab\x10\x00\x00\x00\x01\x00x"), mode)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		wireSource(t)
		topic := fmt.Sprintf("mirror-%d", wire.topics.Add(1))
		recs := wireRecords(topic, data)
		if len(recs) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), wireTimeout)
		defer cancel()
		if err := wire.target.CreateTopic(ctx, topic); err != nil {
			t.Fatal(err)
		}
		defer wire.target.DeleteTopic(context.Background(), topic)
		if err := wire.producers[int(mode)%len(wireCodecs)].ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		_, resp, err := wire.target.Fetch(ctx, topic, 0, 0) // read_uncommitted
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("fetch answered %+v", resp.Topics)
		}
		fetched := resp.Topics[0].Partitions[0].RecordBatches

		strategies := pid.Strategies()
		s := strategies[int(mode)/len(wireCodecs)%len(strategies)]
		n := len(wireCodecs) * len(strategies)
		policy := pid.Policy(int(mode) / (2 * n) % 2)
		p, err := appendpath.Open(appendpath.Config{State: appendpath.Mirroring, Strategy: s,
			CRCFix: pid.CRCFix(int(mode) / n % 2), Policy: policy, Now: time.Now,
			PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne}})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.AppendMirrored(fetched, source); err != nil {
			// kfake draws random 63-bit producer IDs, which the bit-field
			// layout (< 2^31) holds only under policy alias: the one
			// refusal allowed, and it fails the partition.
			if s == pid.Bitfield && policy == pid.Reject && errors.Is(err, pid.ErrUnmappable) && p.State() == appendpath.Failed && p.LogEndOffset() == 0 {
				return
			}
			t.Fatalf("strategy %v refused kfake's %d fetched bytes: %v", s, len(fetched), err)
		}
		i := 0
		var last codec.Batch
		for b, err := range p.Batches(0) {
			if err != nil {
				t.Fatal(err)
			}
			last = b
			it, _, err := b.OpenRecords(nil, 1<<24)
			if err != nil {
				t.Fatalf("stored batch: %v", err)
			}
			for r, err := range it.All() {
				if err != nil {
					t.Fatalf("stored record %d: %v", i, err)
				}
				if i >= len(recs) {
					t.Fatalf("more records stored than the %d produced", len(recs))
				}
				w := recs[i]
				same := bytesSame(r.Key, w.Key) && bytesSame(r.Value, w.Value) && r.Headers.Len() == len(w.Headers) &&
					it.Offset(&r) == w.Offset && it.Timestamp(&r) == w.Timestamp.UnixMilli()
				j := 0
				for h := range r.Headers.All() {
					same = same && string(h.Key) == w.Headers[j].Key && bytesSame(h.Value, w.Headers[j].Value)
					j++
				}
				if !same {
					t.Fatalf("record %d stored as %+v at offset %d, produced %+v", i, r, it.Offset(&r), w)
				}
				i++
			}
		}
		if i != len(recs) {
			t.Fatalf("%d records stored, %d produced", i, len(recs))
		}
		info, ok := p.Producer(last.ProducerID())
		if !ok || info.LastSeq() != int32(len(recs)-1) || info.Epoch != last.ProducerEpoch() {
			t.Fatalf("producer %d: state %+v (known %v), want last sequence %d epoch %d",
				last.ProducerID(), info, ok, len(recs)-1, last.ProducerEpoch())
		}
	})
}
