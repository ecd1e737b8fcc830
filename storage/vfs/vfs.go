// Package vfs is the file layer of the on-disk log (package storage), in the
// manner of pebble's vfs: FS is the interface the log writes through, OSFS the
// operating system's file system and MemFS an in-memory one that can simulate
// a power cut, so recovery can be tested at every write and sync.
//
// # What survives a crash
//
// MemFS.Crash leaves what POSIX allows a file system to leave after a power
// cut, and no more:
//
//   - File contents. Everything a file held when it was last synced
//     (File.Sync, or WriteFile with sync) survives. Of the writes and
//     truncations made since, a prefix in program order survives, the last
//     one kept possibly only in part (a torn write), and the bytes they left
//     may be garbled (a torn sector). WriteFile is a truncation followed by a
//     write, as O_TRUNC is: a crash in between leaves the file empty or
//     holding part of the new bytes, never a mix of old and new.
//   - Directory entries. Creating a file, removing one and renaming one are
//     operations on its directory; they are durable once the directory is
//     synced (SyncDir). Until then each one is kept or lost independently of
//     the others, so a synced file whose creation was not followed by a
//     directory sync may vanish, and a removed file may come back.
//   - Rename is atomic: a crash leaves the new name pointing to the old file
//     or to the new one, never to nothing or to a mix of both.
//
// A file that must appear whole is therefore written with WriteAtomic:
// temporary file, sync, rename over the target, directory sync (Kafka's
// CheckpointFile with Utils#atomicMoveWithFallback and Utils#flushDir). A
// file whose creation or removal must be durable is followed by SyncDir.
package vfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// File is the part of *os.File a file-backed log uses. Writes append: the
// log opens every file for appending and writes only at its end, after a
// Truncate too.
type File interface {
	io.ReaderAt
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// FS is the file layer of a file-backed log. OSFS is the real one; MemFS keeps
// files in memory and can simulate a crash (see the package doc for what one
// leaves).
type FS interface {
	MkdirAll(dir string) error
	// ReadDir lists the names (not paths) of the files in dir.
	ReadDir(dir string) ([]string, error)
	// OpenAppend opens name for appending, creating it empty when absent, and
	// returns its current size.
	OpenAppend(name string) (File, int64, error)
	ReadFile(name string) ([]byte, error)
	// WriteFile truncates name (creating it when absent) and writes data,
	// syncing the file when sync is set. It is not atomic: see WriteAtomic.
	WriteFile(name string, data []byte, sync bool) error
	// Rename moves oldname to newname, replacing newname atomically.
	Rename(oldname, newname string) error
	Remove(name string) error
	// SyncDir makes the creations, removals and renames of files in dir
	// durable (fsync of the directory).
	SyncDir(dir string) error
}

// TempSuffix ends the name of the temporary file WriteAtomic writes.
const TempSuffix = ".tmp"

// WriteAtomic replaces name with data so that a crash leaves either the old
// file or the new one, whole, and the new one durable once WriteAtomic
// returns: data goes to name+TempSuffix, which is synced, renamed over name,
// and the directory synced (Kafka's CheckpointFile#write). A stale temporary
// file is overwritten.
func WriteAtomic(fsys FS, name string, data []byte) error {
	tmp := name + TempSuffix
	if err := fsys.WriteFile(tmp, data, true); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(name))
}

// OSFS is the operating system's file system.
type OSFS struct{}

func (OSFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (OSFS) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (OSFS) OpenAppend(name string) (File, int64, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

func (OSFS) WriteFile(name string, data []byte, sync bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (OSFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (OSFS) Remove(name string) error {
	err := os.Remove(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// SyncDir opens dir and fsyncs it (Utils#flushDir).
func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// MemFS is an in-memory FS that records, per file, what was synced and the
// writes and truncations since, and per directory the entry operations since
// its last sync, so that Crash can return what a power cut could leave (see
// the package doc). Directories always exist. Safe for concurrent use.
type MemFS struct {
	mu      sync.Mutex
	names   map[string]*inode // path → file, as the program sees it
	durable map[string]*inode // path → file, as of each directory's last sync
	dirOps  map[string][]dirOp
	hook    func()
}

// inode is one file. data is its content; base its content as of the last
// sync; ops the writes and truncations since, whose written bytes are in
// pending (ops[i].end indexes pending).
type inode struct {
	data    []byte
	base    []byte
	ops     []fileOp
	pending []byte
}

// fileOp is a truncation to size (write false) or a write of
// pending[start:end].
type fileOp struct {
	write      bool
	size       int64
	start, end int
}

// dirOp binds name to ino (nil: removes name); a rename is one dirOp with
// from set, removing from in the same step.
type dirOp struct {
	name string
	ino  *inode
	from string
}

// NewMemFS returns an empty MemFS.
func NewMemFS() *MemFS {
	return &MemFS{names: map[string]*inode{}, durable: map[string]*inode{}, dirOps: map[string][]dirOp{}}
}

// OnChange sets fn to be called before every operation that changes m (a
// write, truncation, sync, directory sync, creation, removal or rename), or
// clears it when fn is nil. fn runs without m's lock held and may call
// Crash: a crash test calls Crash there to cut the power at every point.
func (m *MemFS) OnChange(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hook = fn
}

func (m *MemFS) point() {
	m.mu.Lock()
	fn := m.hook
	m.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func (m *MemFS) MkdirAll(string) error { return nil }

func (m *MemFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = filepath.Clean(dir) + string(filepath.Separator)
	var names []string
	for n := range m.names {
		if rest, ok := strings.CutPrefix(n, dir); ok && !strings.Contains(rest, string(filepath.Separator)) {
			names = append(names, rest)
		}
	}
	sort.Strings(names)
	return names, nil
}

// link records a directory operation on name (m.mu held).
func (m *MemFS) link(name string, ino *inode, from string) {
	if ino == nil {
		delete(m.names, name)
	} else {
		m.names[name] = ino
	}
	if from != "" {
		delete(m.names, from)
	}
	dir := filepath.Dir(name)
	m.dirOps[dir] = append(m.dirOps[dir], dirOp{name: name, ino: ino, from: from})
}

func (m *MemFS) OpenAppend(name string) (File, int64, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	ino := m.names[name]
	m.mu.Unlock()
	if ino == nil {
		m.point()
		m.mu.Lock()
		if ino = m.names[name]; ino == nil {
			ino = &inode{}
			m.link(name, ino, "")
		}
		m.mu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return &memFile{fs: m, ino: ino}, int64(len(ino.data)), nil
}

func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino := m.names[filepath.Clean(name)]
	if ino == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return append([]byte(nil), ino.data...), nil
}

// WriteFile is O_CREAT|O_TRUNC, a write and an optional sync: a crash
// point before each step.
func (m *MemFS) WriteFile(name string, data []byte, sync bool) error {
	f, _, err := m.OpenAppend(name)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if sync {
		return f.Sync()
	}
	return nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	m.point()
	m.mu.Lock()
	defer m.mu.Unlock()
	ino := m.names[oldname]
	if ino == nil {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if filepath.Dir(oldname) != filepath.Dir(newname) {
		return &fs.PathError{Op: "rename", Path: newname, Err: errors.New("vfs: memfs renames within a directory only")}
	}
	if oldname != newname {
		m.link(newname, ino, oldname)
	}
	return nil
}

func (m *MemFS) Remove(name string) error {
	name = filepath.Clean(name)
	m.mu.Lock()
	_, ok := m.names[name]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	m.point()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.names[name]; ok {
		m.link(name, nil, "")
	}
	return nil
}

func (m *MemFS) SyncDir(dir string) error {
	dir = filepath.Clean(dir)
	m.point()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, op := range m.dirOps[dir] {
		applyDirOp(m.durable, op)
	}
	delete(m.dirOps, dir)
	return nil
}

func applyDirOp(names map[string]*inode, op dirOp) {
	if op.ino == nil {
		delete(names, op.name)
	} else {
		names[op.name] = op.ino
	}
	if op.from != "" {
		delete(names, op.from)
	}
}

// Size returns the current size of name, or -1 when it does not exist.
func (m *MemFS) Size(name string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino := m.names[filepath.Clean(name)]
	if ino == nil {
		return -1
	}
	return int64(len(ino.data))
}

// Crash returns a file system a power cut could leave behind (the package
// doc says what survives). Each file keeps its synced content and a prefix
// of the writes and truncations since, cut at a point drawn from rng
// uniformly over their bytes (a truncation counts as one), so a write is
// more often torn than kept whole; each directory keeps its synced entries
// and each unsynced entry operation with probability 1/2. When garble is
// not nil it is called with each file's name and the bytes past what the
// file held at its last sync (and past its shortest length since) that the
// crash kept, when it kept any, and may change them in place (a torn
// sector, a stale page).
// Files are drawn in name order, so a seeded rng gives one result. Every
// file of the result counts as synced. m is unchanged; files open on m do
// not see the result.
func (m *MemFS) Crash(rng *rand.Rand, garble func(name string, unsynced []byte)) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Contents first, current names before names only a crash can bring
	// back, then directory entries.
	order := sortedKeys(m.names)
	for _, n := range sortedKeys(m.durable) {
		if m.names[n] == nil {
			order = append(order, n)
		}
	}
	crashed := map[*inode]*inode{}
	crash := func(n string, ino *inode) {
		if crashed[ino] != nil {
			return
		}
		data, from := ino.crash(rng)
		if garble != nil && len(data) > from {
			garble(n, data[from:])
		}
		crashed[ino] = &inode{data: data, base: append([]byte(nil), data...)}
	}
	for _, n := range order {
		if ino := m.names[n]; ino != nil {
			crash(n, ino)
		} else {
			crash(n, m.durable[n])
		}
	}
	names := make(map[string]*inode, len(m.durable))
	for n, ino := range m.durable {
		names[n] = ino
	}
	dirs := make([]string, 0, len(m.dirOps))
	for d := range m.dirOps {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		for _, op := range m.dirOps[d] {
			if rng.IntN(2) == 0 {
				applyDirOp(names, op)
			}
		}
	}
	out := NewMemFS()
	for _, n := range sortedKeys(names) {
		ino := names[n]
		crash(n, ino) // a file replaced under a name that still holds it
		out.names[n] = crashed[ino]
		out.durable[n] = crashed[ino]
	}
	return out
}

func sortedKeys(m map[string]*inode) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// crash returns the content a crash leaves in ino and the length below
// which it is the synced content.
func (ino *inode) crash(rng *rand.Rand) ([]byte, int) {
	data := append([]byte(nil), ino.base...)
	from := len(data)
	total := 0
	for _, op := range ino.ops {
		if op.write {
			total += op.end - op.start
		} else {
			total++
		}
	}
	if total == 0 {
		// No unsynced byte: only truncations to apply, if any.
		for _, op := range ino.ops {
			data = data[:min(int64(len(data)), op.size)]
		}
		return data, min(from, len(data))
	}
	cut := rng.IntN(total + 1)
	for _, op := range ino.ops {
		if cut == 0 {
			break
		}
		if !op.write {
			cut--
			data = data[:min(int64(len(data)), op.size)]
			from = min(from, len(data))
			continue
		}
		b := ino.pending[op.start:op.end]
		b = b[:min(len(b), cut)]
		cut -= len(b)
		data = append(data, b...)
	}
	return data, from
}

type memFile struct {
	fs  *MemFS
	ino *inode
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.point()
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	ino := f.ino
	ino.data = append(ino.data, p...)
	start := len(ino.pending)
	ino.pending = append(ino.pending, p...)
	ino.ops = append(ino.ops, fileOp{write: true, start: start, end: len(ino.pending)})
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.point()
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	ino := f.ino
	if len(ino.ops) == 0 {
		return nil
	}
	for _, op := range ino.ops {
		if op.write {
			ino.base = append(ino.base, ino.pending[op.start:op.end]...)
		} else {
			ino.base = ino.base[:min(int64(len(ino.base)), op.size)]
		}
	}
	ino.ops, ino.pending = ino.ops[:0], ino.pending[:0]
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.point()
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	ino := f.ino
	if size < 0 || size > int64(len(ino.data)) {
		return errors.New("vfs: memfs: truncate out of range")
	}
	ino.data = ino.data[:size]
	ino.ops = append(ino.ops, fileOp{size: size})
	return nil
}

func (f *memFile) Close() error { return nil }
