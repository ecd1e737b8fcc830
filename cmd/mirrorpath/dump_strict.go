package main

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mirrorpath/mirrorpath/codec"
)

// dump --strict: rules of the v2 format (KIP-98) that Kafka's reader does
// not enforce, so a broker stores batches that break them; a client or
// broker under test should never write one. Each finding names the field;
// the batch is the line's position. Violations make dump exit 1; warnings
// are printed and do not: they are oddities real clients write.
//
// Violations:
//
//	records[i].keyLength, .valueLength, .headers[j].valueLength
//	                      a length below -1 (only -1 means null)
//	recordsCount          a control batch with other than one record
//	records[i].offsetDelta
//	                      not above the previous record's; or, for the last
//	                      record, beyond lastOffsetDelta
//	lastOffsetDelta       below recordsCount-1; or baseOffset+lastOffsetDelta
//	                      overflows int64
//	maxTimestamp          not the largest record timestamp (CreateTime batch
//	                      with records)
//	attributes.transactional
//	                      a transactional batch without a producer ID
//	producerEpoch         a producer ID (>= 0) with a negative epoch
//	baseSequence          an idempotent data batch (producer ID >= 0, not
//	                      control) without a sequence (< 0)
//	lz4.contentChecksum   an LZ4 frame whose content checksum is wrong (Kafka
//	                      does not compare it)
//	compression.tail      bytes after the compressed stream that Kafka's
//	                      reader never reads (codec.IgnoredTail)
//
// Warnings:
//
//	baseSequence          >= 0 with producerId -1 (clients that leave the
//	                      sequence at 0 when not idempotent)
//	producerEpoch         not -1 with producerId -1
//	producerId            below -1: no producer ID to Kafka (HasProducerID is
//	                      producerId > -1); a mirrored log written with a
//	                      negating PID strategy holds such IDs on purpose

// strictFinding is one --strict result.
type strictFinding struct {
	Field    string `json:"field"`
	Severity string `json:"severity"` // "violation" or "warning"
	Message  string `json:"message"`
}

type strictChecker struct {
	out []strictFinding
}

func (s *strictChecker) violation(field, format string, args ...any) {
	s.out = append(s.out, strictFinding{Field: field, Severity: "violation", Message: fmt.Sprintf(format, args...)})
}

func (s *strictChecker) warning(field, format string, args ...any) {
	s.out = append(s.out, strictFinding{Field: field, Severity: "warning", Message: fmt.Sprintf(format, args...)})
}

// strictHeader checks the header fields of b.
func (s *strictChecker) strictHeader(b codec.Batch) {
	count, lod := b.RecordsCount(), b.LastOffsetDelta()
	if b.IsControl() && count != 1 {
		s.violation("recordsCount", "control batch with %d records, not 1", count)
	}
	if count > 0 && int64(lod) < int64(count)-1 {
		s.violation("lastOffsetDelta", "%d < recordsCount-1 = %d", lod, count-1)
	}
	if base := b.BaseOffset(); lod > 0 && base > math.MaxInt64-int64(lod) {
		s.violation("lastOffsetDelta", "baseOffset %d + lastOffsetDelta %d overflows int64", base, lod)
	}
	pid, epoch, seq := b.ProducerID(), b.ProducerEpoch(), b.BaseSequence()
	switch {
	case pid >= 0:
		if epoch < 0 {
			s.violation("producerEpoch", "%d with producerId %d", epoch, pid)
		}
		if seq < 0 && !b.IsControl() {
			s.violation("baseSequence", "%d in an idempotent data batch (producerId %d)", seq, pid)
		}
	case pid == codec.NoProducerID:
		if seq >= 0 {
			s.warning("baseSequence", "%d with producerId -1", seq)
		}
		if epoch != -1 {
			s.warning("producerEpoch", "%d with producerId -1", epoch)
		}
	default:
		s.warning("producerId", "%d < -1: no producer ID to Kafka", pid)
	}
	if b.IsTransactional() && pid < 0 {
		s.violation("attributes.transactional", "transactional batch with producerId %d", pid)
	}
}

// strictRecords checks the count records encoded in data (b's records
// section or its decompression), which the full reader has accepted.
func (s *strictChecker) strictRecords(b codec.Batch, data []byte, count int32) {
	lod := b.LastOffsetDelta()
	maxTS := int64(math.MinInt64)
	prev := int64(math.MinInt64)
	p := 0
	rd32 := func() int32 {
		p = min(p, len(data))
		u, n := binary.Uvarint(data[p:])
		if n <= 0 {
			n = len(data) - p // cannot happen on records the full reader accepted
		}
		p += n
		v := uint32(u)
		return int32(v>>1) ^ -int32(v&1)
	}
	for i := range count {
		if p >= len(data) {
			return
		}
		rd32() // length
		p++    // attributes
		if p >= len(data) {
			return
		}
		u, n := binary.Uvarint(data[p:])
		if n <= 0 {
			return
		}
		p += n
		tsDelta := int64(u>>1) ^ -int64(u&1)
		off := rd32()
		if int64(off) <= prev {
			s.violation(fmt.Sprintf("records[%d].offsetDelta", i), "%d, not above the previous record's %d", off, prev)
		}
		prev = int64(off)
		if i == count-1 && off > lod {
			s.violation(fmt.Sprintf("records[%d].offsetDelta", i), "%d beyond lastOffsetDelta %d", off, lod)
		}
		maxTS = max(maxTS, b.BaseTimestamp()+tsDelta)
		for _, f := range []string{"keyLength", "valueLength"} {
			l := rd32()
			if l < -1 {
				s.violation(fmt.Sprintf("records[%d].%s", i, f), "%d < -1", l)
			}
			p += max(int(l), 0)
		}
		hc := rd32()
		for j := range max(hc, 0) {
			p += max(int(rd32()), 0)
			l := rd32()
			if l < -1 {
				s.violation(fmt.Sprintf("records[%d].headers[%d].valueLength", i, j), "%d < -1", l)
			}
			p += max(int(l), 0)
			if p > len(data) {
				return
			}
		}
	}
	if count > 0 && !b.Attributes().LogAppendTime() && b.MaxTimestamp() != maxTS {
		s.violation("maxTimestamp", "%d, the largest record timestamp is %d", b.MaxTimestamp(), maxTS)
	}
}

// violations counts the findings that are violations.
func (s *strictChecker) violations() int {
	n := 0
	for _, f := range s.out {
		if f.Severity == "violation" {
			n++
		}
	}
	return n
}
