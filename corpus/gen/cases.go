package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// mode says how one producer of a case is configured.
type mode uint8

const (
	modePlain         mode = iota // idempotence off: producerId -1
	modeIdempotent                // idempotent, no transactional id
	modeTransactional             // transactional id set; the case's outcomes say how transactions end
)

// codec names a batch compression codec by its attributes value (0-4).
type codec uint8

const (
	codecNone codec = iota
	codecGzip
	codecSnappy
	codecLZ4
	codecZstd
)

func (c codec) String() string {
	switch c {
	case codecNone:
		return "none"
	case codecGzip:
		return "gzip"
	case codecSnappy:
		return "snappy"
	case codecLZ4:
		return "lz4"
	case codecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// header is one record header; a nil value is a null header value.
type header struct {
	key   string
	value []byte
}

// record is one record as a producer hands it to its client. A nil key or value is null.
type record struct {
	key, value []byte
	headers    []header
	timestamp  int64 // milliseconds since the epoch, CreateTime
}

// spec is one corpus case: what is produced, by which kind of producer, in which batches. Both clients
// produce the same records for a case, so their files decode to the same records.
//
// Batch i is produced by producers[i % len(producers)], in order, each flushed before the next starts, so the
// partition holds them in that order. A case with a transactional producer has exactly one producer and
// runs len(outcomes) transactions of len(batches)/len(outcomes) batches each, committing where outcomes is
// true; each transaction ends with the marker the broker writes.
type spec struct {
	name      string
	about     string
	producers []mode
	outcomes  []bool // per transaction: true commits, false aborts
	codec     codec
	batches   [][]record // each inner slice is flushed as one batch
}

// transactional reports whether the case's (single) producer is transactional.
func (s spec) transactional() bool { return s.producers[0] == modeTransactional }

// txnSize is the number of batches in each transaction of a transactional case.
func (s spec) txnSize() int { return len(s.batches) / len(s.outcomes) }

// producer is the index of the producer that produces batch i.
func (s spec) producer(i int) int { return i % len(s.producers) }

var (
	plain         = []mode{modePlain}
	idempotent    = []mode{modeIdempotent}
	transactional = []mode{modeTransactional}
)

// baseTimestamp is 2026-01-01T00:00:00Z: record timestamps are fixed so that files do not depend on the clock.
const baseTimestamp int64 = 1767225600000

// largeValueSize is the value size of the large-value case: 100 KiB of incompressible bytes.
const largeValueSize = 100 << 10

// specs returns the good cases. Every case draws its keys and values from a PRNG seeded with its name, so
// a run produces the same records every time.
func specs() []spec {
	return []spec{
		{name: "plain", about: "idempotence off, no codec, 3 batches of 5 keyed records",
			producers: plain, batches: batches("plain", 3, 5, textRecord)},
		{name: "idempotent", about: "idempotent producer, no codec, 3 batches of 5 keyed records (sequences 0, 5, 10)",
			producers: idempotent, batches: batches("idempotent", 3, 5, textRecord)},
		{name: "txn-commit", about: "transactional producer, 2 data batches of 4 records then the COMMIT marker",
			producers: transactional, outcomes: []bool{true}, batches: batches("txn-commit", 2, 4, textRecord)},
		{name: "txn-abort", about: "transactional producer, 2 data batches of 4 records then the ABORT marker",
			producers: transactional, outcomes: []bool{false}, batches: batches("txn-abort", 2, 4, textRecord)},
		{name: "txn-abort-commit", about: "one transactional producer, two transactions of one 3-record batch: the first aborted, the second committed",
			producers: transactional, outcomes: []bool{false, true}, batches: batches("txn-abort-commit", 2, 3, textRecord)},
		{name: "interleaved", about: "three producers in one partition, batches of 2 records in turn: idempotent A, idempotent B, idempotence off C; A, B, C, A, B, C",
			producers: []mode{modeIdempotent, modeIdempotent, modePlain}, batches: batches("interleaved", 6, 2, textRecord)},
		codecSpec(codecNone),
		codecSpec(codecGzip),
		codecSpec(codecSnappy),
		codecSpec(codecLZ4),
		codecSpec(codecZstd),
		multiblockSpec(codecSnappy, "several 32 KiB xerial chunks from sarama, one raw block from kgo"),
		multiblockSpec(codecLZ4, "two 64 KiB LZ4 blocks from sarama, one 4 MiB-bounded block from kgo"),
		{name: "headers", about: "one batch of 6 records carrying 0-3 headers, including empty and null header values",
			producers: plain, batches: batches("headers", 1, 6, headerRecord)},
		{name: "nulls", about: "one batch of 4 records: null key, null value, both null, empty (non-null) key and value",
			producers: plain, batches: [][]record{nullRecords()}},
		{name: "large-value", about: "one batch holding one record with a 100 KiB incompressible value",
			producers: plain, batches: batches("large-value", 1, 1, largeRecord)},
		{name: "many-records", about: "one batch of 1000 small records (4-byte key, 8-byte value)",
			producers: plain, batches: batches("many-records", 1, 1000, smallRecord)},
	}
}

// codecSpec is the case for one codec: the same 2 batches of 20 compressible records for every codec, so a
// decoder's output for codec X can be compared with the codec-none file.
func codecSpec(c codec) spec {
	return spec{
		name:      "codec-" + c.String(),
		about:     "idempotence off, codec " + c.String() + ", 2 batches of 20 compressible records (same records for every codec)",
		producers: plain,
		codec:     c,
		batches:   batches("codec", 2, 20, textRecord),
	}
}

// multiblockSpec is one batch of about 100 KB of compressible records, enough for the codec's stream to
// need more than one chunk or block with some clients. Both multiblock cases hold the same records.
func multiblockSpec(c codec, blocks string) spec {
	return spec{
		name:      "codec-" + c.String() + "-multiblock",
		about:     "idempotence off, codec " + c.String() + ", one batch of 1000 compressible records (~100 KB before compression: " + blocks + ")",
		producers: plain,
		codec:     c,
		batches:   batches("multiblock", 1, 1000, textRecord),
	}
}

// makeRecord builds record i of a case from the case's PRNG.
type makeRecord func(r *rand.Rand, i int) record

// batches builds n batches of per records each, numbering records across batches so timestamps increase.
func batches(seed string, n, per int, mk makeRecord) [][]record {
	r := rng(seed)
	out := make([][]record, n)
	for b := range out {
		out[b] = make([]record, per)
		for j := range out[b] {
			i := b*per + j
			rec := mk(r, i)
			rec.timestamp = baseTimestamp + int64(i)
			out[b][j] = rec
		}
	}
	return out
}

// rng is a PRNG seeded from a case name.
func rng(seed string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(seed))
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

var words = []string{"mirror", "batch", "offset", "epoch", "leader", "replica", "sequence", "producer",
	"marker", "commit", "abort", "segment", "partition", "cluster", "fetch", "append"}

// textRecord has a short key and a value of 8-15 words: text that every codec shrinks.
func textRecord(r *rand.Rand, i int) record {
	v := []byte(fmt.Sprintf("record %d:", i))
	for n := 8 + r.IntN(8); n > 0; n-- {
		v = append(v, ' ')
		v = append(v, words[r.IntN(len(words))]...)
	}
	return record{key: []byte(fmt.Sprintf("key-%03d", r.IntN(1000))), value: v}
}

// headerRecord carries i%4 headers; header 1 has an empty value and header 2 a null value.
func headerRecord(r *rand.Rand, i int) record {
	rec := textRecord(r, i)
	for h := range i % 4 {
		var v []byte
		switch h {
		case 0:
			v = []byte(fmt.Sprintf("trace-%08x", r.Uint32()))
		case 1:
			v = []byte{}
		case 2:
			v = nil
		}
		rec.headers = append(rec.headers, header{key: fmt.Sprintf("h%d", h), value: v})
	}
	return rec
}

// nullRecords are the four null/empty combinations of key and value.
func nullRecords() []record {
	recs := []record{
		{key: nil, value: []byte("null key")},
		{key: []byte("null value"), value: nil},
		{key: nil, value: nil},
		{key: []byte{}, value: []byte{}},
	}
	for i := range recs {
		recs[i].timestamp = baseTimestamp + int64(i)
	}
	return recs
}

// largeRecord has a largeValueSize value of PRNG bytes, which no codec shrinks.
func largeRecord(r *rand.Rand, _ int) record {
	v := make([]byte, largeValueSize)
	for i := 0; i < len(v); i += 8 {
		x := r.Uint64()
		for j := 0; j < 8 && i+j < len(v); j++ {
			v[i+j] = byte(x >> (8 * j))
		}
	}
	return record{key: []byte("large"), value: v}
}

// smallRecord has a 4-byte key and an 8-byte value.
func smallRecord(r *rand.Rand, i int) record {
	k := []byte(fmt.Sprintf("%04d", i))
	v := []byte(fmt.Sprintf("%08x", r.Uint32()))
	return record{key: k, value: v}
}
