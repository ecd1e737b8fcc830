package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/codec"
)

func init() {
	register(command{
		name:    "dump",
		summary: "print Kafka .log segments and their .index/.timeindex/.txnindex/.snapshot files, like kafka-dump-log (--deep, --json, --check, --strict)",
		run:     runDump,
	})
}

// defaultDumpLimit caps the decompressed bytes of one batch; maxDumpLimit
// bounds --max-decompressed.
const (
	defaultDumpLimit = 64 << 20
	maxDumpLimit     = 1 << 30
)

// runDump is `mirrorpath dump [--deep] [--json] [--check] [--strict] FILE...`: one line
// per batch, control records decoded; for a .index or .timeindex file one
// line per entry with absolute offsets (base offset from the file name),
// and with --check a verdict line after checking every entry against the
// .log beside it (skipped, with a note on stderr, when there is none); for
// a .txnindex file one line per aborted transaction and for a producer
// .snapshot one line per producer, in DumpLogSegments' words.
// Exit 1 when any batch, index entry or file is invalid (with --strict, also
// when a batch breaks a rule of dump_strict.go), 2 on a usage error. A
// .log is streamed one batch at a time (codec.BatchReader): a batch above
// --max-batch is a framing error, decompression is capped per batch by
// --max-decompressed, so memory stays within the largest batch + the cap
// whatever the file size. Index, .txnindex and .snapshot files are
// streamed one entry at a time too (a .snapshot in two passes: its CRC,
// then its entries); --check reads the .log beside an index through a
// 64 KiB window.
func runDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	deep := fs.Bool("deep", false, "also print every record (offset and timestamp deltas, key, value, headers)")
	asJSON := fs.Bool("json", false, "one JSON object per batch per line")
	limit := intFlag(fs, "max-decompressed", defaultDumpLimit, 0, maxDumpLimit, "most decompressed `BYTES` accepted from one batch")
	maxBatch := intFlag(fs, "max-batch", codec.DefaultMaxBatch, codec.HeaderSize, math.MaxInt32+codec.LogOverhead, "largest batch `BYTES` (12-byte prefix included) read from a .log; a batchLength claiming more is a framing error (Kafka's max.message.bytes, raised)")
	check := fs.Bool("check", false, "check each .index and .timeindex entry against the segment's .log beside it")
	strict := fs.Bool("strict", false, "also flag batches Kafka's reader accepts but the v2 format (KIP-98) rules out; exit 1 on any violation")
	help := func() {
		fmt.Fprintln(stderr, "usage: mirrorpath dump [--deep] [--json] [--check] [--strict] [--max-decompressed BYTES] [--max-batch BYTES] FILE...")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, `
Without --strict, dump reads batches as Kafka does and flags only what Kafka
refuses. With --strict it also reports, per batch (its position) and field:
violations (exit 1):
  records[i].keyLength, .valueLength, .headers[j].valueLength below -1;
  recordsCount other than 1 in a control batch;
  records[i].offsetDelta not above the previous one, or (last record)
    beyond lastOffsetDelta;
  lastOffsetDelta below recordsCount-1, or baseOffset+lastOffsetDelta
    overflowing int64;
  maxTimestamp other than the largest record timestamp (CreateTime);
  attributes.transactional with no producer ID; producerEpoch < 0 with a
    producer ID; baseSequence < 0 in an idempotent data batch;
  lz4.contentChecksum wrong (Kafka does not compare it);
  compression.tail: bytes after the compressed stream that Kafka's reader
    never reads (after an LZ4 frame, the last gzip member, a 1-3 byte
    xerial snappy tail).
warnings (printed, no exit 1): baseSequence >= 0 or producerEpoch != -1
  with producerId -1; producerId below -1.
Text output puts each finding on a line "! position: P field: F
violation|warning: MESSAGE" after its batch; JSON adds "strict": [...].`)
	}
	if code, ok := parseFlagsHelp(fs, args, stderr, help); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(fs, stderr, "no FILE given")
	}
	d := dumper{deep: *deep, json: *asJSON, strict: *strict, limit: *limit, maxBatch: *maxBatch, out: stdout}
	invalid := false
	for _, name := range fs.Args() {
		if !isIndexFile(name) && !strings.HasSuffix(name, txnIndexSuffix) && !strings.HasSuffix(name, snapshotSuffix) {
			bad, err := d.logFile(name)
			if err != nil {
				fmt.Fprintf(stderr, "dump: %v\n", err)
			}
			invalid = bad || err != nil || invalid
			continue
		}
		f, _, err := openStream(name)
		if err != nil {
			fmt.Fprintf(stderr, "dump: %v\n", err)
			invalid = true
			continue
		}
		if isIndexFile(name) {
			if _, ok := indexBase(name); !ok {
				fmt.Fprintf(stderr, "dump: %s: name is not <20-digit base offset>%s; offsets assume base 0\n", name, filepath.Ext(name))
			}
			var log *os.File
			var logSize int64
			if *check {
				if log, err = openSegmentLog(name); err != nil {
					fmt.Fprintf(stderr, "dump: %v\n", err)
					invalid = true
				} else if log == nil {
					fmt.Fprintf(stderr, "dump: %s: no %s beside it; entries not checked\n", name, filepath.Base(segmentLog(name)))
				} else if logSize, err = fileSize(log); err != nil {
					fmt.Fprintf(stderr, "dump: %v\n", err)
					log.Close()
					log, invalid = nil, true
				}
			}
			var bad bool
			if log != nil {
				bad, err = d.indexStream(name, f, log, logSize)
				log.Close()
			} else {
				bad, err = d.indexStream(name, f, nil, 0)
			}
			invalid = bad || invalid
			if err != nil {
				fmt.Fprintf(stderr, "dump: %s: %v\n", segmentLog(name), err)
				invalid = true
			}
			f.Close()
			continue
		}
		switch {
		case strings.HasSuffix(name, txnIndexSuffix):
			invalid = d.txnIndexStream(name, f) || invalid
		case strings.HasSuffix(name, snapshotSuffix):
			invalid = d.snapshotStream(name, f) || invalid
		}
		f.Close()
	}
	if invalid {
		return 1
	}
	return 0
}

type dumper struct {
	deep, json bool
	strict     bool
	limit      int
	maxBatch   int // codec.BatchReader's bound; 0 is its default
	out        io.Writer
	buf        []byte // decompression buffer, reused
	enc        *json.Encoder
}

// batchInfo is one output line. The JSON keys are the dump tool's contract
// (docs/dump.md); optional fields are pointers or
// omitempty so that they appear only when they apply.
type batchInfo struct {
	File                 string        `json:"file"`
	Position             int64         `json:"position"`
	BaseOffset           *int64        `json:"baseOffset,omitempty"`
	LastOffset           *int64        `json:"lastOffset,omitempty"`
	BatchLength          *int32        `json:"batchLength,omitempty"`
	PartitionLeaderEpoch *int32        `json:"partitionLeaderEpoch,omitempty"`
	Magic                *int8         `json:"magic,omitempty"`
	CRC                  *uint32       `json:"crc,omitempty"`
	CRCValid             *bool         `json:"crcValid,omitempty"`
	Attributes           *int16        `json:"attributes,omitempty"`
	Compression          string        `json:"compression,omitempty"`
	TimestampType        string        `json:"timestampType,omitempty"`
	IsTransactional      *bool         `json:"isTransactional,omitempty"`
	IsControl            *bool         `json:"isControl,omitempty"`
	LastOffsetDelta      *int32        `json:"lastOffsetDelta,omitempty"`
	BaseTimestamp        *int64        `json:"baseTimestamp,omitempty"`
	MaxTimestamp         *int64        `json:"maxTimestamp,omitempty"`
	ProducerID           *int64        `json:"producerId,omitempty"`
	ProducerEpoch        *int16        `json:"producerEpoch,omitempty"`
	BaseSequence         *int32        `json:"baseSequence,omitempty"`
	LastSequence         *int32        `json:"lastSequence,omitempty"`
	RecordCount          *int32        `json:"recordCount,omitempty"`
	ControlType          string        `json:"controlType,omitempty"`
	CoordinatorEpoch     *int32        `json:"coordinatorEpoch,omitempty"`
	SourceClusterID      *string       `json:"sourceClusterId,omitempty"`
	Records              *[]recordInfo `json:"records,omitempty"`
	Error                string        `json:"error,omitempty"`
	// Strict holds the --strict findings; absent without --strict.
	Strict *[]strictFinding `json:"strict,omitempty"`
}

type recordInfo struct {
	OffsetDelta    int32        `json:"offsetDelta"`
	TimestampDelta int64        `json:"timestampDelta"`
	Key            []byte       `json:"key"`   // base64; null when null
	Value          []byte       `json:"value"` // base64; null when null
	Headers        []headerInfo `json:"headers"`
}

type headerInfo struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

func ptr[T any](v T) *T { return &v }

// logFile dumps the segment in file name, streamed, and reports whether
// anything in it was invalid; err is a failure to open or read the file
// (reported after the batches before it).
func (d *dumper) logFile(name string) (invalid bool, err error) {
	f, size, err := openStream(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return d.file(name, f, size)
}

// file dumps one segment read from src (size bytes, or -1 when unknown) and
// reports whether anything in it was invalid; err is a failure of src.
func (d *dumper) file(name string, src io.Reader, size int64) (invalid bool, err error) {
	if !d.json {
		fmt.Fprintf(d.out, "Dumping %s\n", name)
	}
	r := codec.NewBatchReader(src, 0, size, d.maxBatch)
	for {
		b, pos, err := r.Next()
		if err == io.EOF {
			return invalid, nil
		}
		info := batchInfo{File: name, Position: pos}
		if b == nil {
			var fe *codec.FormatError
			if !errors.As(err, &fe) {
				return true, err
			}
			// Framing failed: show what the prefix says, then stop (the
			// rest of the file cannot be framed).
			rest := r.Pending()
			if len(rest) >= codec.LogOverhead {
				info.BaseOffset = ptr(int64(beUint64(rest[codec.OffBaseOffset:])))
				info.BatchLength = ptr(int32(beUint32(rest[codec.OffBatchLength:])))
			}
			if len(rest) >= codec.HeaderSizeUpToMagic {
				info.Magic = ptr(int8(rest[codec.OffMagic]))
			}
			info.Error = err.Error()
			d.emit(&info)
			invalid = true
			continue
		}
		if d.batch(&info, b, err) {
			invalid = true
		}
		d.emit(&info)
	}
}

// batch fills info from b; crcErr is the reader's CRC verdict. It reports
// whether the batch is invalid.
func (d *dumper) batch(info *batchInfo, b codec.Batch, crcErr error) bool {
	a := b.Attributes()
	info.BaseOffset = ptr(b.BaseOffset())
	info.LastOffset = ptr(b.LastOffset())
	info.BatchLength = ptr(b.BatchLength())
	info.PartitionLeaderEpoch = ptr(b.PartitionLeaderEpoch())
	info.Magic = ptr(b.Magic())
	info.CRC = ptr(b.CRC())
	info.CRCValid = ptr(crcErr == nil)
	info.Attributes = ptr(int16(a))
	info.Compression = a.Compression().String()
	info.TimestampType = a.TimestampType()
	info.IsTransactional = ptr(a.Transactional())
	info.IsControl = ptr(a.Control())
	info.LastOffsetDelta = ptr(b.LastOffsetDelta())
	info.BaseTimestamp = ptr(b.BaseTimestamp())
	info.MaxTimestamp = ptr(b.MaxTimestamp())
	info.ProducerID = ptr(b.ProducerID())
	info.ProducerEpoch = ptr(b.ProducerEpoch())
	info.BaseSequence = ptr(b.BaseSequence())
	info.LastSequence = ptr(b.LastSequence())
	info.RecordCount = ptr(b.RecordsCount())
	if d.deep {
		info.Records = ptr([]recordInfo{})
	}
	var errs []string
	if crcErr != nil {
		errs = append(errs, crcErr.Error())
	}
	if !a.Compression().Valid() {
		info.Error = strings.Join(append(errs, codec.ErrUnsupportedCodec.Error()), "; ")
		return true
	}
	it, buf, err := b.OpenRecords(d.buf, d.limit)
	d.buf = buf
	var rec codec.Record
	i := 0
	for ; err == nil; i++ {
		if err = it.Read(&rec); err != nil {
			break
		}
		if i == 0 && b.IsControl() {
			if cerr := d.control(info, b, rec); cerr != nil {
				errs = append(errs, cerr.Error())
			}
		}
		if d.deep {
			*info.Records = append(*info.Records, recordOf(rec))
		}
	}
	if err != nil && err != io.EOF {
		errs = append(errs, fmt.Sprintf("record %d (byte %d of the records): %v", i, it.Pos(), err))
	}
	info.Error = strings.Join(errs, "; ")
	violated := false
	if d.strict {
		var s strictChecker
		s.strictHeader(b)
		if err == io.EOF {
			records := []byte(b[codec.HeaderSize:])
			if b.Compression() != codec.CompressionNone && b.RecordsCount() > 0 {
				records = buf
				if cerr := codec.VerifyLZ4ContentChecksum(b, buf); cerr != nil {
					s.violation("lz4.contentChecksum", "%v", cerr)
				}
				if n := codec.IgnoredTail(b, d.limit); n > 0 {
					s.violation("compression.tail", "%d bytes after the %s stream, never read by Kafka", n, b.Compression())
				}
			}
			s.strictRecords(b, records, b.RecordsCount())
		}
		info.Strict = ptr(s.out)
		if info.Strict != nil && len(*info.Strict) == 0 {
			*info.Strict = []strictFinding{}
		}
		violated = s.violations() > 0
	}
	return len(errs) > 0 || violated
}

// control decodes the first record of a control batch into info.
func (d *dumper) control(info *batchInfo, b codec.Batch, rec codec.Record) error {
	c, err := codec.ParseControlRecord(b, rec)
	if err != nil {
		return fmt.Errorf("control record key: %w", err)
	}
	info.ControlType = c.Type.String()
	switch c.Type {
	case codec.ControlAbort, codec.ControlCommit:
		m, err := codec.ParseEndTxnMarker(c.Value)
		if err != nil {
			return fmt.Errorf("end transaction marker: %w", err)
		}
		info.CoordinatorEpoch = ptr(m.CoordinatorEpoch)
	case codec.ControlMirrorPidReset:
		m, err := codec.ParseMirrorPidReset(c.Value)
		if err != nil {
			return fmt.Errorf("MIRROR_PID_RESET value: %w", err)
		}
		if !m.SourceAbsent { // the form without SourceClusterId shows none
			info.SourceClusterID = ptr(m.SourceClusterID)
		}
	}
	return nil
}

func recordOf(r codec.Record) recordInfo {
	ri := recordInfo{OffsetDelta: r.OffsetDelta, TimestampDelta: r.TimestampDelta, Key: r.Key, Value: r.Value,
		Headers: []headerInfo{}}
	for h := range r.Headers.All() {
		ri.Headers = append(ri.Headers, headerInfo{Key: string(h.Key), Value: h.Value})
	}
	return ri
}

func (d *dumper) emit(info *batchInfo) {
	if d.json {
		// An Encoder writes from its pooled buffer: json.Marshal would copy
		// each line (base64 values included) and append a copy again.
		if d.enc == nil {
			d.enc = json.NewEncoder(d.out)
		}
		d.enc.Encode(info) // every field is marshalable; write errors are ignored as in text mode
		return
	}
	d.out.Write(textLine(info))
}

// textLine renders info in the manner of Kafka's DumpLogSegments:
// "key: value" pairs on one line per batch, "| " lines per record.
func textLine(info *batchInfo) []byte {
	var s []byte
	kv := func(k, v string) {
		if len(s) > 0 {
			s = append(s, ' ')
		}
		s = append(s, k...)
		s = append(s, ": "...)
		s = append(s, v...)
	}
	i64 := func(p *int64) string { return strconv.FormatInt(*p, 10) }
	i32 := func(p *int32) string { return strconv.FormatInt(int64(*p), 10) }
	kv("position", strconv.FormatInt(info.Position, 10))
	if info.BaseOffset != nil {
		kv("baseOffset", i64(info.BaseOffset))
	}
	if info.LastOffset != nil {
		kv("lastOffset", i64(info.LastOffset))
		kv("count", i32(info.RecordCount))
		kv("baseSequence", i32(info.BaseSequence))
		kv("lastSequence", i32(info.LastSequence))
		kv("producerId", i64(info.ProducerID))
		kv("producerEpoch", strconv.Itoa(int(*info.ProducerEpoch)))
		kv("partitionLeaderEpoch", i32(info.PartitionLeaderEpoch))
		kv("isTransactional", strconv.FormatBool(*info.IsTransactional))
		kv("isControl", strconv.FormatBool(*info.IsControl))
		kv(info.TimestampType, i64(info.MaxTimestamp))
		kv("size", strconv.FormatInt(int64(*info.BatchLength)+codec.LogOverhead, 10))
		kv("magic", strconv.Itoa(int(*info.Magic)))
		kv("compresscodec", info.Compression)
		kv("crc", strconv.FormatUint(uint64(*info.CRC), 10))
		kv("isvalid", strconv.FormatBool(info.Error == ""))
	} else {
		if info.BatchLength != nil {
			kv("batchLength", i32(info.BatchLength))
		}
		if info.Magic != nil {
			kv("magic", strconv.Itoa(int(*info.Magic)))
		}
	}
	if info.ControlType != "" {
		kv("controlType", info.ControlType)
	}
	if info.CoordinatorEpoch != nil {
		kv("coordinatorEpoch", i32(info.CoordinatorEpoch))
	}
	if info.SourceClusterID != nil {
		kv("sourceClusterId", strconv.Quote(*info.SourceClusterID))
	}
	if info.Error != "" {
		kv("error", strconv.Quote(info.Error))
	}
	s = append(s, '\n')
	if info.Strict != nil {
		for _, f := range *info.Strict {
			s = append(s, "! position: "...)
			s = strconv.AppendInt(s, info.Position, 10)
			s = append(s, " field: "...)
			s = append(s, f.Field...)
			s = append(s, ' ')
			s = append(s, f.Severity...)
			s = append(s, ": "...)
			s = append(s, f.Message...)
			s = append(s, '\n')
		}
	}
	if info.Records != nil {
		for _, r := range *info.Records {
			s = append(s, "| offsetDelta: "...)
			s = strconv.AppendInt(s, int64(r.OffsetDelta), 10)
			s = append(s, " timestampDelta: "...)
			s = strconv.AppendInt(s, r.TimestampDelta, 10)
			s = append(s, " keySize: "...)
			s = strconv.AppendInt(s, int64(sizeOrNull(r.Key)), 10)
			s = append(s, " valueSize: "...)
			s = strconv.AppendInt(s, int64(sizeOrNull(r.Value)), 10)
			s = append(s, " headerKeys: ["...)
			for j, h := range r.Headers {
				if j > 0 {
					s = append(s, ',')
				}
				s = strconv.AppendQuote(s, h.Key)
			}
			s = append(s, "]\n"...)
		}
	}
	return s
}

// sizeOrNull is Kafka's keySize/valueSize: -1 for null.
func sizeOrNull(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

func beUint64(b []byte) uint64 {
	return uint64(beUint32(b))<<32 | uint64(beUint32(b[4:]))
}

func beUint32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
