// Package vfs is the file layer of the on-disk log (package storage), in the
// manner of pebble's vfs: FS is the interface the log writes through, OSFS the
// operating system's file system and MemFS an in-memory one that can simulate
// a power cut losing or garbling whatever was not synced, so recovery can be
// tested at every byte.
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
// files in memory and can simulate a crash that loses or garbles whatever was
// not synced, so recovery can be tested at every byte.
type FS interface {
	MkdirAll(dir string) error
	// ReadDir lists the names (not paths) of the files in dir.
	ReadDir(dir string) ([]string, error)
	// OpenAppend opens name for appending, creating it empty when absent, and
	// returns its current size.
	OpenAppend(name string) (File, int64, error)
	ReadFile(name string) ([]byte, error)
	// WriteFile replaces name with data, and syncs it when sync is set.
	WriteFile(name string, data []byte, sync bool) error
	Remove(name string) error
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

func (OSFS) Remove(name string) error {
	err := os.Remove(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// MemFS is an in-memory FS that remembers, per file, how many leading bytes
// were synced. Crash turns it into what a disk could hold after a power cut:
// every file keeps its synced prefix plus some random part of the rest, which
// may be garbled. Truncate and Remove are taken as durable at once. Safe for
// concurrent use.
type MemFS struct {
	mu    sync.Mutex
	files map[string]*memData
}

type memData struct {
	data   []byte
	synced int
}

// NewMemFS returns an empty MemFS.
func NewMemFS() *MemFS { return &MemFS{files: map[string]*memData{}} }

func (m *MemFS) MkdirAll(string) error { return nil }

func (m *MemFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = filepath.Clean(dir) + string(filepath.Separator)
	var names []string
	for n := range m.files {
		if rest, ok := strings.CutPrefix(n, dir); ok && !strings.Contains(rest, string(filepath.Separator)) {
			names = append(names, rest)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) OpenAppend(name string) (File, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = filepath.Clean(name)
	d := m.files[name]
	if d == nil {
		d = &memData{}
		m.files[name] = d
	}
	return &memFile{fs: m, d: d}, int64(len(d.data)), nil
}

func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.files[filepath.Clean(name)]
	if d == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return append([]byte(nil), d.data...), nil
}

func (m *MemFS) WriteFile(name string, data []byte, sync bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := &memData{data: append([]byte(nil), data...)}
	if sync {
		d.synced = len(d.data)
	}
	m.files[filepath.Clean(name)] = d
	return nil
}

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, filepath.Clean(name))
	return nil
}

// Size returns the current size of name, or -1 when it does not exist.
func (m *MemFS) Size(name string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.files[filepath.Clean(name)]
	if d == nil {
		return -1
	}
	return int64(len(d.data))
}

// Crash returns the file system a power cut could leave behind: each file
// keeps its synced prefix and a random part of its unsynced suffix. When
// garble is not nil it is called with each file's name and the unsynced bytes
// it kept, and may change them in place (a torn sector, a stale page). m is
// unchanged; files open on m do not see the result.
func (m *MemFS) Crash(rng *rand.Rand, garble func(name string, unsynced []byte)) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.files))
	for n := range m.files {
		names = append(names, n)
	}
	sort.Strings(names) // deterministic for a seeded rng
	out := NewMemFS()
	for _, n := range names {
		d := m.files[n]
		keep := d.synced
		if extra := len(d.data) - d.synced; extra > 0 {
			keep += rng.IntN(extra + 1)
		}
		data := append([]byte(nil), d.data[:keep]...)
		if garble != nil && keep > d.synced {
			garble(n, data[d.synced:])
		}
		out.files[n] = &memData{data: data, synced: len(data)}
	}
	return out
}

type memFile struct {
	fs *MemFS
	d  *memData
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off >= int64(len(f.d.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.d.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.d.data = append(f.d.data, p...)
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.d.synced = len(f.d.data)
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if size < 0 || size > int64(len(f.d.data)) {
		return errors.New("vfs: memfs: truncate out of range")
	}
	f.d.data = f.d.data[:size]
	f.d.synced = min(f.d.synced, int(size))
	return nil
}

func (f *memFile) Close() error { return nil }
