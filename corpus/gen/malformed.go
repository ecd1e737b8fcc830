package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mirrorpath/mirrorpath/corpus"
)

// defect is one hand-made defective segment: a copy of a good file with one thing broken in one batch.
// Every edit inside the CRC range recomputes the CRC, so that the named defect is the only one, except
// crc-mismatch, whose whole point is the stale CRC.
type defect struct {
	name   string // file name without .log
	about  string
	source string // good case directory
	batch  int    // index of the damaged batch
	apply  func(seg []byte, b batchView) ([]byte, error)
}

func defects() []defect {
	return []defect{
		{name: "truncated-tail", source: "kgo-plain", batch: 2,
			about: "file ends halfway through its last batch (a partial batch, which readers skip)",
			apply: func(seg []byte, b batchView) ([]byte, error) {
				end := len(seg) - len(b) + len(b)/2
				return seg[:end], nil
			}},
		{name: "bad-batch-length-short", source: "kgo-plain", batch: 1,
			about: "batchLength 13: below Kafka's framing floor of 14 and the v2 minimum of 49",
			apply: setInt32(corpus.OffBatchLength, func(int32) int32 { return 13 })},
		{name: "bad-batch-length-negative", source: "kgo-plain", batch: 1,
			about: "batchLength -1",
			apply: setInt32(corpus.OffBatchLength, func(int32) int32 { return -1 })},
		{name: "bad-batch-length-overrun", source: "kgo-plain", batch: 1,
			about: "batchLength one more than the batch: framing takes a byte of the next batch, the CRC then fails and the next batch is misframed",
			apply: setInt32(corpus.OffBatchLength, func(v int32) int32 { return v + 1 })},
		{name: "bad-magic", source: "kgo-plain", batch: 1,
			about: "magic 3 (magic is outside the CRC, which still verifies)",
			apply: func(seg []byte, b batchView) ([]byte, error) {
				b[corpus.OffMagic] = 3
				return seg, nil
			}},
		{name: "crc-mismatch", source: "kgo-plain", batch: 1,
			about: "one payload bit flipped (byte in the middle of the records, xor 0x01), stored CRC left as it was",
			apply: func(seg []byte, b batchView) ([]byte, error) {
				b[corpus.HeaderSize+len(b.payload())/2] ^= 0x01
				return seg, nil
			}},
		{name: "codec-5", source: "kgo-plain", batch: 1,
			about: "attributes codec bits set to 5, which no Kafka version defines; CRC recomputed",
			apply: func(seg []byte, b batchView) ([]byte, error) {
				binary.BigEndian.PutUint16(b[corpus.OffAttributes:], b.attributes()&^7|5)
				b.updateCRC()
				return seg, nil
			}},
		{name: "records-count-larger", source: "kgo-plain", batch: 1,
			about: "uncompressed, recordsCount one more than the records present (lastOffsetDelta unchanged); CRC recomputed",
			apply: setInt32CRC(corpus.OffRecordsCount, func(v int32) int32 { return v + 1 })},
		{name: "records-count-smaller", source: "kgo-plain", batch: 1,
			about: "uncompressed, recordsCount one less than the records present, leaving a record over (lastOffsetDelta unchanged); CRC recomputed",
			apply: setInt32CRC(corpus.OffRecordsCount, func(v int32) int32 { return v - 1 })},
		{name: "records-count-larger-compressed", source: "kgo-codec-zstd", batch: 1,
			about: "zstd, recordsCount one more than the records in the decompressed stream; CRC recomputed",
			apply: setInt32CRC(corpus.OffRecordsCount, func(v int32) int32 { return v + 1 })},
		{name: "records-count-smaller-compressed", source: "kgo-codec-zstd", batch: 1,
			about: "zstd, recordsCount one less than the records in the decompressed stream; CRC recomputed",
			apply: setInt32CRC(corpus.OffRecordsCount, func(v int32) int32 { return v - 1 })},
		{name: "record-length-overrun", source: "kgo-plain", batch: 1,
			about: "the last record's length varint grown (same width) so its body runs past the end of the batch; CRC recomputed",
			apply: overrunLastRecord},
		{name: "control-key-2-bytes", source: "kgo-txn-abort", batch: 2,
			about: "ABORT marker whose control record key is 2 bytes (version only, no type); lengths and CRC recomputed",
			apply: shortenControlKey},
	}
}

// writeMalformed rebuilds <dir>/malformed/ from the good files, replacing whatever .log files were there.
func writeMalformed(dir string) error {
	out := filepath.Join(dir, "malformed")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(out, "*.log"))
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	for _, d := range defects() {
		src, err := os.ReadFile(filepath.Join(dir, d.source, segmentName))
		if err != nil {
			return fmt.Errorf("%s: %w (run the good mode first)", d.name, err)
		}
		bs, err := split(src)
		if err != nil {
			return fmt.Errorf("%s: source %s: %w", d.name, d.source, err)
		}
		if d.batch >= len(bs) {
			return fmt.Errorf("%s: source %s has %d batches, want batch %d", d.name, d.source, len(bs), d.batch)
		}
		// Re-split the copy so the view handed to apply aliases the bytes being edited.
		seg := bytes.Clone(src)
		bs, _ = split(seg)
		seg, err = d.apply(seg, bs[d.batch])
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		if bytes.Equal(seg, src) {
			return fmt.Errorf("%s: edit changed nothing", d.name)
		}
		if err := os.WriteFile(filepath.Join(out, d.name+".log"), seg, 0o644); err != nil {
			return err
		}
		fmt.Printf("malformed/%-34s %6d bytes\n", d.name+".log", len(seg))
	}
	return nil
}

// setInt32 rewrites one int32 header field and leaves the CRC alone.
func setInt32(off int, f func(int32) int32) func([]byte, batchView) ([]byte, error) {
	return func(seg []byte, b batchView) ([]byte, error) {
		binary.BigEndian.PutUint32(b[off:], uint32(f(int32(binary.BigEndian.Uint32(b[off:])))))
		return seg, nil
	}
}

// setInt32CRC rewrites one int32 field inside the CRC range and recomputes the CRC.
func setInt32CRC(off int, f func(int32) int32) func([]byte, batchView) ([]byte, error) {
	set := setInt32(off, f)
	return func(seg []byte, b batchView) ([]byte, error) {
		seg, err := set(seg, b)
		b.updateCRC()
		return seg, err
	}
}

// recordSpan is where one record sits in an uncompressed records section: [start, end), with the length
// varint occupying [start, start+lenWidth).
type recordSpan struct {
	start, end, lenWidth int
	length               int64
}

// recordSpans walks the length prefixes of an uncompressed records section.
func recordSpans(p []byte) ([]recordSpan, error) {
	var out []recordSpan
	for pos := 0; pos < len(p); {
		l, n := binary.Varint(p[pos:])
		if n <= 0 || l < 0 || int64(len(p)-pos-n) < l {
			return nil, fmt.Errorf("bad record at payload offset %d", pos)
		}
		out = append(out, recordSpan{start: pos, end: pos + n + int(l), lenWidth: n, length: l})
		pos += n + int(l)
	}
	return out, nil
}

// overrunLastRecord grows the last record's declared length by as much as its varint width allows (at
// least 1) without changing the width, so the batch length stays the same and only the record lies.
func overrunLastRecord(seg []byte, b batchView) ([]byte, error) {
	if b.codec() != codecNone {
		return nil, fmt.Errorf("batch is compressed")
	}
	spans, err := recordSpans(b.payload())
	if err != nil {
		return nil, err
	}
	last := spans[len(spans)-1]
	grown := last.length + 1
	for binary.PutVarint(make([]byte, binary.MaxVarintLen64), grown+1) == last.lenWidth && grown-last.length < 16 {
		grown++
	}
	var buf [binary.MaxVarintLen64]byte
	if n := binary.PutVarint(buf[:], grown); n != last.lenWidth {
		return nil, fmt.Errorf("cannot grow record length %d within %d varint bytes", last.length, last.lenWidth)
	}
	copy(b.payload()[last.start:], buf[:last.lenWidth])
	b.updateCRC()
	return seg, nil
}

// shortenControlKey rewrites the single record of a control batch with its 4-byte key cut to the 2-byte
// version field, then fixes the record length, batchLength and CRC.
func shortenControlKey(seg []byte, b batchView) ([]byte, error) {
	if !b.control() || b.codec() != codecNone {
		return nil, fmt.Errorf("batch is not an uncompressed control batch")
	}
	spans, err := recordSpans(b.payload())
	if err != nil || len(spans) != 1 {
		return nil, fmt.Errorf("control batch does not hold exactly one record")
	}
	body := b.payload()[spans[0].lenWidth:spans[0].end]
	// body: attributes int8, timestampDelta varlong, offsetDelta varint, keyLength varint, key, rest.
	pos := 1
	for range 2 {
		_, n := binary.Varint(body[pos:])
		if n <= 0 {
			return nil, fmt.Errorf("bad varint in control record")
		}
		pos += n
	}
	kl, n := binary.Varint(body[pos:])
	if n <= 0 || kl != 4 {
		return nil, fmt.Errorf("control key length %d, want 4", kl)
	}
	key := body[pos+n : pos+n+4]
	var nb []byte
	nb = append(nb, body[:pos]...)
	nb = binary.AppendVarint(nb, 2)
	nb = append(nb, key[:2]...)
	nb = append(nb, body[pos+n+4:]...)

	out := bytes.Clone(seg[:len(seg)-len(b)]) // everything before the batch (the marker is last)
	if &seg[len(seg)-1] != &b[len(b)-1] {
		return nil, fmt.Errorf("control batch is not the last batch")
	}
	nbatch := append(bytes.Clone(b[:corpus.HeaderSize]), binary.AppendVarint(nil, int64(len(nb)))...)
	nbatch = append(nbatch, nb...)
	binary.BigEndian.PutUint32(nbatch[corpus.OffBatchLength:], uint32(len(nbatch)-corpus.LogOverhead))
	batchView(nbatch).updateCRC()
	return append(out, nbatch...), nil
}
