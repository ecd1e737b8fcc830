package codec

// Control records (Kafka's ControlRecordType, EndTransactionMarker; ours:
// MIRROR_PID_RESET and the salt records, docs/format.md).
//
// A control batch (attribute bit 5) carries records whose key is
//
//	version int16   0; a higher version is read as version 0, a negative one is invalid
//	type    int16   ControlType; bytes after the first 4 are ignored
//
// and whose value depends on the type:
//
//	ABORT, COMMIT      EndTxnMarker: version int16, coordinatorEpoch int32 (6 bytes)
//	MIRROR_PID_RESET   MirrorPidReset: version int16, sourceClusterId compact string,
//	                   tagged fields
//
// The mirror-state log (docs/format.md, "The mirror-state log") uses the coordinator-record
// convention: MirrorPidCollisionKey (type 3, non-flexible) and
// MirrorPidCollisionValue (version 0, flexible).
//
// Defects in any of these are ErrBadControl. Decoders that return strings
// allocate them; everything else here is allocation-free.

// ControlKeySize is the size of a control record key.
const ControlKeySize = 4

// ParseControlKey reads a control record key (ControlRecordType.parseTypeId):
// shorter than 4 bytes or a negative version is ErrBadControl; a version above
// 0 is parsed as version 0. typ is the raw type number; unknown numbers are
// returned as they are (ControlType.Known reports false), not as an error.
func ParseControlKey(key []byte) (version int16, typ ControlType, err error) {
	if len(key) < ControlKeySize {
		return 0, 0, ErrBadControl
	}
	version = int16(be.Uint16(key))
	if version < 0 {
		return 0, 0, ErrBadControl
	}
	return version, ControlType(be.Uint16(key[2:])), nil
}

// AppendControlKey appends a version 0 key of type t.
func AppendControlKey(dst []byte, t ControlType) []byte {
	return append(dst, 0, 0, byte(uint16(t)>>8), byte(t))
}

// EndTxnMarker is the value of an ABORT or COMMIT control record
// (EndTransactionMarker).
type EndTxnMarker struct {
	Version          int16
	CoordinatorEpoch int32
}

// EndTxnMarkerSize is the size of a version 0 marker value.
const EndTxnMarkerSize = 6

// ParseEndTxnMarker reads a marker value: shorter than 6 bytes or a negative
// version is ErrBadControl; a higher version is read as version 0 and
// trailing bytes are ignored. No allocation.
func ParseEndTxnMarker(value []byte) (EndTxnMarker, error) {
	if len(value) < EndTxnMarkerSize {
		return EndTxnMarker{}, ErrBadControl
	}
	m := EndTxnMarker{Version: int16(be.Uint16(value)), CoordinatorEpoch: int32(be.Uint32(value[2:]))}
	if m.Version < 0 {
		return EndTxnMarker{}, ErrBadControl
	}
	return m, nil
}

// AppendTo appends the 6-byte value.
func (m EndTxnMarker) AppendTo(dst []byte) []byte {
	dst = be.AppendUint16(dst, uint16(m.Version))
	return be.AppendUint32(dst, uint32(m.CoordinatorEpoch))
}

// MirrorPidReset is the value of a MIRROR_PID_RESET control record, the
// barrier of the barrier strategy (MirrorPidResetRecord, flexible;
// docs/format.md).
type MirrorPidReset struct {
	Version         int16
	SourceClusterID string
	// SourceAbsent is the form without SourceClusterId: Version, then the
	// tagged fields (what the prototype's later line writes). Both forms
	// are barriers; the reset never depends on the id.
	SourceAbsent bool
}

// ParseMirrorPidReset reads a barrier value in either form: Version,
// SourceClusterId (compact string), tagged fields; or Version and tagged
// fields only (SourceAbsent). The first form is tried first; a value it
// does not read is the second form when its tagged-field section takes
// exactly the rest. A negative version, a short value, or malformed tagged
// fields are ErrBadControl. Unknown tagged fields are skipped. A version
// above 0 is still a barrier: its SourceClusterId is read and whatever
// follows is ignored, since a later version may add fields before the
// tagged fields. Allocates the string.
func ParseMirrorPidReset(value []byte) (MirrorPidReset, error) {
	v, id, absent, err := parseMirrorPidReset(value)
	if err != nil {
		return MirrorPidReset{}, err
	}
	return MirrorPidReset{Version: v, SourceClusterID: string(id), SourceAbsent: absent}, nil
}

// parseMirrorPidReset is ParseMirrorPidReset without the string
// allocation: id aliases value.
func parseMirrorPidReset(value []byte) (version int16, id []byte, absent bool, err error) {
	if len(value) < 2 {
		return 0, nil, false, ErrBadControl
	}
	version = int16(be.Uint16(value))
	if version < 0 {
		return 0, nil, false, ErrBadControl
	}
	id, n, err := readCompactString(value[2:])
	if err == nil && version == 0 {
		_, err = skipTaggedFields(value[2+n:])
	}
	if err != nil {
		// The form without SourceClusterId: only tagged fields follow.
		if k, terr := skipTaggedFields(value[2:]); terr == nil && 2+k == len(value) {
			return version, nil, true, nil
		}
		return 0, nil, false, err
	}
	return version, id, false, nil
}

// AppendTo appends the value with an empty tagged-field section, without
// SourceClusterId when SourceAbsent.
func (m MirrorPidReset) AppendTo(dst []byte) []byte {
	dst = be.AppendUint16(dst, uint16(m.Version))
	if !m.SourceAbsent {
		dst = appendCompactString(dst, m.SourceClusterID)
	}
	return append(dst, 0)
}

// size is the length AppendTo writes.
func (m MirrorPidReset) size() int {
	if m.SourceAbsent {
		return 3
	}
	return 2 + sizeUvarint32(uint32(len(m.SourceClusterID))+1) + len(m.SourceClusterID) + 1
}

// MirrorPidCollisionKeyType is the record type prefix of MirrorPidCollisionKey.
const MirrorPidCollisionKeyType int16 = 3

// MirrorPidCollisionKey keys a salt record in the mirror-state log
// (docs/format.md): type int16 = 3, then, non-flexible, TopicId uuid (16
// bytes), Partition int32, SourceClusterId string (int16 length + UTF-8),
// OriginalPid int64.
type MirrorPidCollisionKey struct {
	TopicID         [16]byte
	Partition       int32
	SourceClusterID string
	OriginalPID     int64
}

// AppendTo appends the key, type prefix included.
func (k MirrorPidCollisionKey) AppendTo(dst []byte) []byte {
	dst = be.AppendUint16(dst, uint16(MirrorPidCollisionKeyType))
	dst = append(dst, k.TopicID[:]...)
	dst = be.AppendUint32(dst, uint32(k.Partition))
	dst = be.AppendUint16(dst, uint16(len(k.SourceClusterID)))
	dst = append(dst, k.SourceClusterID...)
	return be.AppendUint64(dst, uint64(k.OriginalPID))
}

// ParseMirrorPidCollisionKey reads a key. A type other than 3, a negative
// (null) or overlong string length, or a length other than exactly the
// fields is ErrBadControl: keys are compared byte for byte by compaction,
// so trailing bytes are not tolerated. Allocates the string.
func ParseMirrorPidCollisionKey(src []byte) (MirrorPidCollisionKey, error) {
	const fixed = 2 + 16 + 4 + 2 + 8
	if len(src) < fixed || int16(be.Uint16(src)) != MirrorPidCollisionKeyType {
		return MirrorPidCollisionKey{}, ErrBadControl
	}
	var k MirrorPidCollisionKey
	copy(k.TopicID[:], src[2:18])
	k.Partition = int32(be.Uint32(src[18:]))
	sl := int16(be.Uint16(src[22:]))
	if sl < 0 || len(src) != fixed+int(sl) {
		return MirrorPidCollisionKey{}, ErrBadControl
	}
	k.SourceClusterID = string(src[24 : 24+int(sl)])
	k.OriginalPID = int64(be.Uint64(src[24+int(sl):]))
	return k, nil
}

// MirrorPidCollisionValue is the salt record's value (docs/format.md):
// version int16 = 0, then, flexible, Salt int64, CollidingClusterId compact
// string, TimestampMs int64, tagged fields.
type MirrorPidCollisionValue struct {
	Salt               int64
	CollidingClusterID string
	TimestampMs        int64
}

// AppendTo appends the value, version 0, with no tagged fields.
func (v MirrorPidCollisionValue) AppendTo(dst []byte) []byte {
	dst = be.AppendUint16(dst, 0)
	dst = be.AppendUint64(dst, uint64(v.Salt))
	dst = appendCompactString(dst, v.CollidingClusterID)
	dst = be.AppendUint64(dst, uint64(v.TimestampMs))
	return append(dst, 0)
}

// ParseMirrorPidCollisionValue reads a value. A negative version, a short
// buffer, a null or overlong string or malformed tagged fields are
// ErrBadControl; unknown tagged fields are skipped. A higher version is read
// as version 0 and what follows TimestampMs is ignored. Allocates the string.
func ParseMirrorPidCollisionValue(src []byte) (MirrorPidCollisionValue, error) {
	if len(src) < 2+8 {
		return MirrorPidCollisionValue{}, ErrBadControl
	}
	version := int16(be.Uint16(src))
	if version < 0 {
		return MirrorPidCollisionValue{}, ErrBadControl
	}
	var v MirrorPidCollisionValue
	v.Salt = int64(be.Uint64(src[2:]))
	s, n, err := readCompactString(src[10:])
	if err != nil {
		return MirrorPidCollisionValue{}, err
	}
	p := 10 + n
	if len(src)-p < 8 {
		return MirrorPidCollisionValue{}, ErrBadControl
	}
	v.TimestampMs = int64(be.Uint64(src[p:]))
	p += 8
	if version == 0 {
		if _, err := skipTaggedFields(src[p:]); err != nil {
			return MirrorPidCollisionValue{}, err
		}
	}
	v.CollidingClusterID = string(s)
	return v, nil
}

// readCompactString reads uvarint(len+1) then len bytes; null (0) is
// ErrBadControl since every compact string here is non-nullable. It returns
// the bytes (aliasing b) and the bytes consumed.
func readCompactString(b []byte) ([]byte, int, error) {
	u, k := readUvarint32(b)
	if k <= 0 || u == 0 || uint64(u-1) > uint64(len(b)-k) {
		return nil, 0, ErrBadControl
	}
	end := k + int(u-1)
	return b[k:end:end], end, nil
}

func appendCompactString(dst []byte, s string) []byte {
	dst = appendUvarint32(dst, uint32(len(s))+1)
	return append(dst, s...)
}

// skipTaggedFields walks a tagged-field section (uvarint count, then per
// field uvarint tag, uvarint size, bytes) and returns its length. Tags must
// be strictly increasing, as Kafka's readers require. No allocation.
func skipTaggedFields(b []byte) (int, error) {
	count, p := readUvarint32(b)
	if p <= 0 || uint64(count) > uint64(len(b)) {
		return 0, ErrBadControl
	}
	last := int64(-1)
	for range count {
		tag, k := readUvarint32(b[p:])
		if k <= 0 || int64(tag) <= last {
			return 0, ErrBadControl
		}
		last = int64(tag)
		p += k
		size, k := readUvarint32(b[p:])
		if k <= 0 {
			return 0, ErrBadControl
		}
		p += k
		if uint64(size) > uint64(len(b)-p) {
			return 0, ErrBadControl
		}
		p += int(size)
	}
	return p, nil
}

// ControlRecord is the first record of a control batch, decoded.
type ControlRecord struct {
	Type    ControlType // raw type from the key; may be unknown (Type.Known() == false)
	Version int16       // key version
	// Timestamp is the record's timestamp: the batch maxTimestamp for a
	// LogAppendTime batch, else baseTimestamp + timestampDelta.
	Timestamp  int64
	Key, Value []byte // alias the batch
}

// ControlRecord decodes the key of the first record of an uncompressed
// control batch, the record producer state and the barrier check read
// (Kafka looks at the first record only: ProducerAppendInfo#append,
// CompletedFetch#containsAbortMarker). It does
// not decode the value: use ParseEndTxnMarker or ParseMirrorPidReset on
// Value. Errors: ErrNoRecords for recordsCount 0 (not a defect), ErrBadControl
// for a batch without the control bit or a bad key, ErrCompressed for a
// compressed batch, record errors (ErrBadRecord) for a malformed first record.
// An unknown type is not an error. O(first record), no allocation; Key and
// Value alias b.
func (b Batch) ControlRecord() (ControlRecord, error) {
	if !b.IsControl() {
		return ControlRecord{}, ErrBadControl
	}
	n := b.RecordsCount()
	switch {
	case n == 0:
		return ControlRecord{}, ErrNoRecords
	case n < 0:
		return ControlRecord{}, ErrRecordsCount
	case b.Compression() != CompressionNone:
		return ControlRecord{}, ErrCompressed
	}
	r, _, err := ReadRecord(b[HeaderSize:])
	if err != nil {
		return ControlRecord{}, err
	}
	return ParseControlRecord(b, r)
}

// ParseControlRecord interprets a record r of control batch b (for example
// one read from decompressed records). No allocation.
func ParseControlRecord(b Batch, r Record) (ControlRecord, error) {
	version, typ, err := ParseControlKey(r.Key)
	if err != nil {
		return ControlRecord{}, err
	}
	ts := b.BaseTimestamp() + r.TimestampDelta
	if b.Attributes().LogAppendTime() {
		ts = b.MaxTimestamp()
	}
	return ControlRecord{Type: typ, Version: version, Timestamp: ts, Key: r.Key, Value: r.Value}, nil
}

// EndTxnMarker decodes the value of an ABORT or COMMIT record; other types
// are ErrBadControl (EndTransactionMarker.deserialize).
func (c ControlRecord) EndTxnMarker() (EndTxnMarker, error) {
	if c.Type != ControlAbort && c.Type != ControlCommit {
		return EndTxnMarker{}, ErrBadControl
	}
	return ParseEndTxnMarker(c.Value)
}

// checkValue validates the value of a control record whose type has a
// known value schema (markers and the barrier). No allocation.
func (c ControlRecord) checkValue() error {
	switch c.Type {
	case ControlAbort, ControlCommit:
		_, err := ParseEndTxnMarker(c.Value)
		return err
	case ControlMirrorPidReset:
		_, _, _, err := parseMirrorPidReset(c.Value)
		return err
	}
	return nil
}
