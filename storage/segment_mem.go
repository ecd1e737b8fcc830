package storage

import (
	"io"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
)

// memStore keeps a log's segments in byte slices (Config.Dir == ""). Every
// committed offset is "durable" at once; nothing is synced. Segments that
// retention or truncation drops are recycled with their buffers.
type memStore struct {
	free    []*segment // recycled segments
	pending *segment   // the next Roll's segment, once StageRolled staged into it
}

// memReader reads a memory segment's bytes.
type memReader segment

func (m *memReader) ReadAt(dst []byte, pos int64) (int, error) {
	s := (*segment)(m)
	if int64(len(dst)) > s.size-pos {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(dst, s.mem[pos:]), nil
}

func (m *memStore) take() *segment {
	if m.pending != nil {
		// StageRolled's bytes sit at the start of its buffer: reset keeps
		// them (it empties mem, not its capacity) and Commit takes them.
		s := m.pending
		m.pending = nil
		return s
	}
	if n := len(m.free); n > 0 {
		s := m.free[n-1]
		m.free = m.free[:n-1]
		return s
	}
	return &segment{}
}

func (*memStore) open(s *segment, _ bool) error {
	s.r = (*memReader)(s)
	return nil
}

func (m *memStore) remove(s *segment) error {
	m.free = append(m.free, s)
	return nil
}

// stage grows the active segment's buffer.
func (*memStore) stage(a *segment, n int) []byte {
	grown := make([]byte, len(a.mem), max(2*cap(a.mem), len(a.mem)+n, 64<<10))
	copy(grown, a.mem)
	a.mem = grown
	return a.mem[len(a.mem) : len(a.mem)+n]
}

// stageRolled stages at the start of the buffer the next Roll's segment
// takes.
func (m *memStore) stageRolled(n int) []byte {
	s := m.pending
	if s == nil {
		s = m.take()
		m.pending = s
	}
	if cap(s.mem) < n {
		s.mem = make([]byte, 0, max(n, 64<<10))
	}
	return s.mem[:n:n]
}

// commit takes the staged bytes at the end of a's buffer, after checking
// they are the ones Stage returned, and indexes them (offset index only).
func (*memStore) commit(l *Log, a *segment, data []byte, next int64) error {
	pos := a.size
	if len(data) > 0 && (cap(a.mem)-len(a.mem) < len(data) || &a.mem[:len(a.mem)+1][len(a.mem)] != &data[0]) {
		// Not the bytes Stage (or StageRolled, then Roll) returned:
		// taking the segment's tail would store whatever it holds.
		return ErrNotStaged
	}
	a.mem = a.mem[:len(a.mem)+len(data)]
	for off := 0; off < len(data); {
		b := codec.Batch(data[off:])
		if at := pos + int64(off); at-a.lastIndexed > IndexIntervalBytes {
			a.index = append(a.index, indexEntry{b.LastOffset(), at})
			a.lastIndexed = at
		}
		off += int(b.BatchLength()) + codec.LogOverhead
	}
	a.size += int64(len(data))
	a.next = next
	l.end = next
	l.synced = next
	return nil
}

func (*memStore) indexDue(a *segment) int64 { return a.lastIndexed + IndexIntervalBytes - a.size }

func (*memStore) commitIndexed(l *Log, a *segment, data []byte, next int64, idx []OffsetPosition) error {
	if len(data) > 0 && (cap(a.mem)-len(a.mem) < len(data) || &a.mem[:len(a.mem)+1][len(a.mem)] != &data[0]) {
		return ErrNotStaged
	}
	if invariants.Enabled {
		checkIndexed(data, a.lastIndexed-a.size, idx)
	}
	a.mem = a.mem[:len(a.mem)+len(data)]
	for _, e := range idx {
		at := a.size + e.Position
		a.index = append(a.index, indexEntry{e.Offset, at})
		a.lastIndexed = at
	}
	a.size += int64(len(data))
	a.next = next
	l.end = next
	l.synced = next
	return nil
}

func (*memStore) appendAborted(*segment, AbortedTxn) error { return nil }

func (*memStore) truncateAborted(s *segment, keep int) error {
	s.truncateAborted(keep)
	return nil
}

func (*memStore) truncate(s *segment, pos, next int64, keep int) error {
	s.mem = s.mem[:pos]
	s.size, s.next = pos, next
	s.truncateOffsetIndex(pos)
	s.truncateAborted(keep)
	return nil
}

// batches aliases the segment's buffer.
func (*memStore) batches(s *segment, pos int64) ([]byte, error) {
	return s.mem[pos:s.size], nil
}

func (*memStore) roll(*Log, *segment) error { return nil }
func (*memStore) sync(*Log) error           { return nil }
func (*memStore) maybeSync(*Log) error      { return nil }
func (*memStore) close(*Log) error          { return nil }
