package storage

// Truncate removes every batch whose last offset is at least offset (so a
// batch that holds offset goes as a whole) and sets the log end offset to
// offset. Transaction-index entries of removed markers go too. A file log
// syncs before Truncate returns: a crash never brings back batches that
// producer state, snapshots and the mirror checkpoint already dropped.
func (l *Log) Truncate(offset int64) error {
	if offset >= l.end {
		return nil
	}
	if offset <= l.start {
		// Nothing below offset survives: start over at offset. The newest
		// segment goes first (deleteSegment makes each deletion durable),
		// so that a crash leaves a prefix of the log, never a tail
		// without its head.
		for i := len(l.segs) - 1; i >= 0; i-- {
			if err := l.deleteSegment(l.segs[i]); err != nil {
				return err
			}
		}
		s, err := l.newSegment(offset, false)
		if err != nil {
			return err
		}
		l.segs = append(l.segs[:0], s)
		l.start, l.end, l.synced = offset, offset, min(l.synced, offset)
		return l.Sync()
	}
	i := l.SegmentFor(offset)
	for j := len(l.segs) - 1; j > i; j-- {
		if err := l.deleteSegment(l.segs[j]); err != nil {
			return err
		}
	}
	clear(l.segs[i+1:])
	l.segs = l.segs[:i+1]
	s := l.segs[i]
	pos, err := s.position(offset)
	if err != nil {
		return err
	}
	keep := len(s.aborted)
	for keep > 0 && s.aborted[keep-1].LastOffset >= offset {
		keep--
	}
	if err := l.st.truncate(s, pos, max(offset, s.base), keep); err != nil {
		return err
	}
	l.end = offset
	l.synced = min(l.synced, offset)
	return l.Sync()
}

// DropAbortedFrom removes the transaction-index entries whose marker is at
// or above offset, in every segment (they are rewritten by a replay).
func (l *Log) DropAbortedFrom(offset int64) error {
	for _, s := range l.segs {
		keep := len(s.aborted)
		for keep > 0 && s.aborted[keep-1].LastOffset >= offset {
			keep--
		}
		if err := l.st.truncateAborted(s, keep); err != nil {
			return err
		}
	}
	return nil
}

// AppendAbortedAt adds an entry to the segment that holds its marker.
func (l *Log) AppendAbortedAt(t AbortedTxn) error {
	s := l.segs[l.SegmentFor(t.LastOffset)]
	s.aborted = append(s.aborted, t)
	return l.st.appendAborted(s, t)
}
