package psm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SnapshotSuffix ends every producer snapshot file name (LogFileUtils).
const SnapshotSuffix = ".snapshot"

// SnapshotFileName is "<offset as 20 zero-padded digits>.snapshot"; offset is
// the map end offset (exclusive) the snapshot reflects.
func SnapshotFileName(offset int64) string {
	return fmt.Sprintf("%020d%s", offset, SnapshotSuffix)
}

// ParseSnapshotFileName returns the offset of a snapshot file name.
func ParseSnapshotFileName(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, SnapshotSuffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	o, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || o < 0 {
		return 0, false
	}
	return o, true
}

// ListSnapshots returns the offsets of dir's snapshot files, ascending.
func ListSnapshots(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offs []int64
	for _, e := range ents {
		if o, ok := ParseSnapshotFileName(e.Name()); ok && e.Type().IsRegular() {
			offs = append(offs, o)
		}
	}
	slices.Sort(offs)
	return offs, nil
}

// WriteSnapshotFile writes p's snapshot as dir/SnapshotFileName(offset),
// through a temporary file, fsync and rename so that a crash never leaves a
// half-written file under the final name. It returns the path.
func WriteSnapshotFile(m Manager, p PartitionID, dir string, offset int64) (string, error) {
	path := filepath.Join(dir, SnapshotFileName(offset))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	_, err = f.Write(m.AppendSnapshot(nil, p))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}

// RemoveSnapshots deletes the snapshot files of dir whose offset keep rejects
// (with their segments, or out of range on reload: §3.8).
func RemoveSnapshots(dir string, keep func(offset int64) bool) error {
	offs, err := ListSnapshots(dir)
	if err != nil {
		return err
	}
	for _, o := range offs {
		if !keep(o) {
			if err := os.Remove(filepath.Join(dir, SnapshotFileName(o))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// LoadLatestSnapshot replaces p's state with the newest valid snapshot of dir
// (ProducerStateManager.loadFromSnapshot): a file that is corrupt, empty or
// truncated is deleted and the next older one is tried. With no valid file p
// is cleared and found is false. I/O errors other than corruption stop the
// walk. Each file is read whole, so memory is bounded by its length.
func LoadLatestSnapshot(m Manager, p PartitionID, dir string, nowMs int64) (offset int64, found bool, err error) {
	offs, err := ListSnapshots(dir)
	if err != nil {
		return 0, false, err
	}
	for i := len(offs) - 1; i >= 0; i-- {
		path := filepath.Join(dir, SnapshotFileName(offs[i]))
		src, err := os.ReadFile(path)
		if err != nil {
			return 0, false, err
		}
		err = m.LoadSnapshot(p, src, nowMs)
		if err == nil {
			return offs[i], true, nil
		}
		if !errors.Is(err, ErrCorruptSnapshot) {
			return 0, false, err
		}
		if err := os.Remove(path); err != nil {
			return 0, false, err
		}
	}
	m.Clear(p)
	return 0, false, nil
}

// TakeSnapshot writes p's snapshot at mapEndOffset unless the newest file of
// dir is already at or beyond it (ProducerStateManager.takeSnapshot does
// nothing unless lastMapOffset > lastSnapOffset). The append path calls it on
// segment roll with the new segment's base, on close, and at the end of a
// rebuild.
func TakeSnapshot(m Manager, p PartitionID, dir string, mapEndOffset int64) (written bool, err error) {
	offs, err := ListSnapshots(dir)
	if err != nil {
		return false, err
	}
	if len(offs) > 0 && offs[len(offs)-1] >= mapEndOffset {
		return false, nil
	}
	_, err = WriteSnapshotFile(m, p, dir, mapEndOffset)
	return err == nil, err
}
