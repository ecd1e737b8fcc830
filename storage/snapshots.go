package storage

import (
	"path/filepath"
	"slices"

	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// SnapshotDir keeps the producer snapshots of a partition: <offset>.snapshot
// files (FileName with SnapshotSuffix) in the log directory, or byte slices
// for a memory log. The offset of a snapshot is the map end offset
// (exclusive) of the producer state it holds. SnapshotDir stores and lists
// bytes; their encoding is producer state's (psm's ProducerSnapshot v1
// codec). A file is written whole or not at all (vfs.WriteAtomic:
// temporary file, sync, rename, directory sync), and removals are followed
// by a directory sync, so a crash neither tears a snapshot nor brings back
// one a truncation removed. A snapshot torn anyway (by another writer, or
// a disk) fails its CRC on load and LoadNewest deletes it, as
// ProducerStateManager#loadFromSnapshot does, and producer state is rebuilt
// from the log. Not safe for concurrent use.
type SnapshotDir struct {
	fs      vfs.FS
	dir     string
	offsets []int64 // ascending
	mem     map[int64][]byte
	// unsynced: files were removed since the last directory sync.
	unsynced bool
}

// OpenSnapshotDir lists the snapshot files of dir on fs (nil: vfs.OSFS), or
// returns an empty in-memory directory when dir is "".
func OpenSnapshotDir(fs vfs.FS, dir string) (*SnapshotDir, error) {
	if fs == nil {
		fs = vfs.OSFS{}
	}
	d := &SnapshotDir{fs: fs, dir: dir}
	if dir == "" {
		return d, nil
	}
	names, err := fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if o, ok := ParseFileName(n, SnapshotSuffix); ok {
			d.offsets = append(d.offsets, o)
		} else if _, ok := ParseFileName(n, SnapshotSuffix+vfs.TempSuffix); ok {
			// A write cut short: the rename never happened.
			if err := fs.Remove(filepath.Join(dir, n)); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(d.offsets)
	return d, nil
}

// Offsets returns the offsets of the snapshots, ascending. The slice is the
// directory's: read it, do not keep it across other calls.
func (d *SnapshotDir) Offsets() []int64 { return d.offsets }

// Newest returns the offset of the newest snapshot, or -1 when there is none.
func (d *SnapshotDir) Newest() int64 {
	if n := len(d.offsets); n > 0 {
		return d.offsets[n-1]
	}
	return -1
}

// Write stores a snapshot taken at offset, replacing one there; a file is
// durable, whole, before Write returns (recovery relies on it).
func (d *SnapshotDir) Write(offset int64, data []byte) error {
	if d.dir == "" {
		if d.mem == nil {
			d.mem = map[int64][]byte{}
		}
		d.mem[offset] = append(d.mem[offset][:0], data...)
	} else if err := vfs.WriteAtomic(d.fs, FileName(d.dir, offset, SnapshotSuffix), data); err != nil {
		return err
	}
	i, found := slices.BinarySearch(d.offsets, offset)
	if !found {
		d.offsets = slices.Insert(d.offsets, i, offset)
	}
	return nil
}

// Read returns the bytes of the snapshot at offset. A memory directory's
// bytes are its own: read them, do not change them.
func (d *SnapshotDir) Read(offset int64) ([]byte, error) {
	if d.dir == "" {
		return d.mem[offset], nil
	}
	return d.fs.ReadFile(FileName(d.dir, offset, SnapshotSuffix))
}

// Remove deletes the snapshot at offset, if any, durably (the directory is
// synced).
func (d *SnapshotDir) Remove(offset int64) error {
	if err := d.remove(offset); err != nil {
		return err
	}
	return d.syncDir()
}

// remove deletes the snapshot at offset without syncing the directory.
func (d *SnapshotDir) remove(offset int64) error {
	i, found := slices.BinarySearch(d.offsets, offset)
	if !found {
		return nil
	}
	d.offsets = slices.Delete(d.offsets, i, i+1)
	if d.dir == "" {
		delete(d.mem, offset)
		return nil
	}
	d.unsynced = true
	return d.fs.Remove(FileName(d.dir, offset, SnapshotSuffix))
}

// syncDir syncs the directory after removals.
func (d *SnapshotDir) syncDir() error {
	if !d.unsynced {
		return nil
	}
	d.unsynced = false
	return d.fs.SyncDir(d.dir)
}

// RemoveAbove deletes the snapshots past offset (after a truncation, or on
// open past the recovered log end), durably.
func (d *SnapshotDir) RemoveAbove(offset int64) error {
	for len(d.offsets) > 0 && d.offsets[len(d.offsets)-1] > offset {
		if err := d.remove(d.offsets[len(d.offsets)-1]); err != nil {
			return err
		}
	}
	return d.syncDir()
}

// RemoveBelow deletes the snapshots before offset (their segments were
// deleted; ProducerStateManager#deleteSnapshotsBefore), durably.
func (d *SnapshotDir) RemoveBelow(offset int64) error {
	for len(d.offsets) > 0 && d.offsets[0] < offset {
		if err := d.remove(d.offsets[0]); err != nil {
			return err
		}
	}
	return d.syncDir()
}

// RemoveStray deletes the snapshots whose offset is not the base offset of
// a segment in bases, except the newest such stray one when it lies above
// every base (the one a clean shutdown wrote at the log end), as
// ProducerStateManager#removeStraySnapshots does when a log is loaded.
// With no bases the newest stray snapshot is kept too.
func (d *SnapshotDir) RemoveStray(bases []int64) error {
	var strays []int64
	for _, o := range d.offsets {
		if !slices.Contains(bases, o) {
			strays = append(strays, o)
		}
	}
	if len(strays) == 0 {
		return nil
	}
	keep := strays[len(strays)-1]
	if len(bases) > 0 && keep < slices.Max(bases) {
		keep = -1
	}
	for _, o := range strays {
		if o != keep {
			if err := d.remove(o); err != nil {
				return err
			}
		}
	}
	return d.syncDir()
}

// LoadNewest walks the snapshots at offsets in [lo, hi] from the newest down
// and hands each one's bytes to load until load accepts one
// (ProducerStateManager#loadFromSnapshot). A snapshot that load refuses with
// an error corrupt reports true for is deleted and the next older one tried;
// any other error stops the walk. It returns the offset of the snapshot
// loaded, or -1 when none was.
func (d *SnapshotDir) LoadNewest(lo, hi int64, load func(data []byte) error, corrupt func(error) bool) (int64, error) {
	for i := len(d.offsets) - 1; i >= 0; i-- {
		o := d.offsets[i]
		if o > hi || o < lo {
			continue
		}
		data, err := d.Read(o)
		if err == nil {
			err = load(data)
		}
		if err == nil {
			return o, nil
		}
		if !corrupt(err) {
			return -1, err
		}
		if err := d.Remove(o); err != nil {
			return -1, err
		}
	}
	return -1, nil
}
