package appendpath

import (
	"slices"

	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// snapStore keeps the producer snapshots of a partition: <offset>.snapshot
// files in the log directory, or byte slices for a memory log. offsets is
// sorted ascending.
type snapStore struct {
	fs      vfs.FS
	dir     string
	offsets []int64
	mem     map[int64][]byte
}

// load lists the snapshot files of the directory.
func (s *snapStore) load() error {
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return err
	}
	s.offsets = s.offsets[:0]
	for _, n := range names {
		if o, ok := parseFileName(n, snapshotSuffix); ok {
			s.offsets = append(s.offsets, o)
		}
	}
	slices.Sort(s.offsets)
	return nil
}

// write stores a snapshot taken at offset, synced (a file log's recovery
// relies on it).
func (s *snapStore) write(offset int64, data []byte) error {
	if s.dir == "" {
		if s.mem == nil {
			s.mem = map[int64][]byte{}
		}
		s.mem[offset] = append(s.mem[offset][:0], data...)
	} else if err := s.fs.WriteFile(fileName(s.dir, offset, snapshotSuffix), data, true); err != nil {
		return err
	}
	i, found := slices.BinarySearch(s.offsets, offset)
	if !found {
		s.offsets = slices.Insert(s.offsets, i, offset)
	}
	return nil
}

func (s *snapStore) read(offset int64) ([]byte, error) {
	if s.dir == "" {
		return s.mem[offset], nil
	}
	return s.fs.ReadFile(fileName(s.dir, offset, snapshotSuffix))
}

func (s *snapStore) remove(offset int64) error {
	i, found := slices.BinarySearch(s.offsets, offset)
	if !found {
		return nil
	}
	s.offsets = slices.Delete(s.offsets, i, i+1)
	if s.dir == "" {
		delete(s.mem, offset)
		return nil
	}
	return s.fs.Remove(fileName(s.dir, offset, snapshotSuffix))
}

// removeAbove deletes the snapshots past offset (after a truncation).
func (s *snapStore) removeAbove(offset int64) error {
	for len(s.offsets) > 0 && s.offsets[len(s.offsets)-1] > offset {
		if err := s.remove(s.offsets[len(s.offsets)-1]); err != nil {
			return err
		}
	}
	return nil
}

// removeBelow deletes the snapshots before offset (segments deleted).
func (s *snapStore) removeBelow(offset int64) error {
	for len(s.offsets) > 0 && s.offsets[0] < offset {
		if err := s.remove(s.offsets[0]); err != nil {
			return err
		}
	}
	return nil
}
