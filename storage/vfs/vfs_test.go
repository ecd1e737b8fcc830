package vfs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// crashes returns the contents name has (nil: absent) in n crashes of m.
func crashes(t *testing.T, m *MemFS, name string, n int) [][]byte {
	t.Helper()
	var out [][]byte
	for seed := range uint64(n) {
		c := m.Crash(rand.New(rand.NewPCG(seed, 1)), nil)
		if c.Size(name) < 0 {
			out = append(out, nil)
			continue
		}
		got, err := c.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]byte{}, got...)) // empty, not absent
	}
	return out
}

func mustWrite(t *testing.T, f File, b []byte) {
	t.Helper()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// A crash keeps every synced byte of a file whose directory entry is synced,
// and of the unsynced writes after, a prefix.
func TestCrashKeepsSyncedPrefix(t *testing.T) {
	m := NewMemFS()
	f, size, err := m.OpenAppend("/d/a.log")
	if err != nil || size != 0 {
		t.Fatalf("OpenAppend: %d, %v", size, err)
	}
	synced := bytes.Repeat([]byte{1}, 100)
	mustWrite(t, f, synced)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, bytes.Repeat([]byte{2}, 50))
	mustWrite(t, f, bytes.Repeat([]byte{3}, 50))
	lens := map[int]bool{}
	for i, got := range crashes(t, m, "/d/a.log", 200) {
		if len(got) < 100 || len(got) > 200 || !bytes.Equal(got[:100], synced) {
			t.Fatalf("crash %d left %d bytes, synced prefix kept: %v", i, len(got), bytes.Equal(got[:min(100, len(got))], synced))
		}
		for j, b := range got[100:] {
			if want := byte(2 + j/50); b != want {
				t.Fatalf("crash %d: byte %d is %d, not the one written", i, 100+j, b)
			}
		}
		lens[len(got)] = true
	}
	if !lens[100] || !lens[150] || !lens[200] || len(lens) < 20 {
		t.Fatalf("crashes do not spread over the unsynced writes: %d lengths", len(lens))
	}
}

// A file synced but whose creation was not followed by a directory sync may
// vanish; after SyncDir it cannot. A removal likewise may be undone until
// the directory is synced.
func TestCrashDirectoryEntries(t *testing.T) {
	m := NewMemFS()
	f, _, _ := m.OpenAppend("/d/new")
	mustWrite(t, f, []byte("x"))
	f.Sync()
	present := func(name string) (in, out int) {
		for _, got := range crashes(t, m, name, 64) {
			if got == nil {
				out++
			} else {
				in++
			}
		}
		return in, out
	}
	if in, out := present("/d/new"); in == 0 || out == 0 {
		t.Fatalf("unsynced creation: kept %d, lost %d of 64 crashes; want both", in, out)
	}
	m.SyncDir("/d")
	if _, out := present("/d/new"); out != 0 {
		t.Fatalf("synced creation lost in %d crashes", out)
	}
	m.Remove("/d/new")
	if in, out := present("/d/new"); in == 0 || out == 0 {
		t.Fatalf("unsynced removal: undone %d, kept %d of 64 crashes; want both", in, out)
	}
	m.SyncDir("/d")
	if in, _ := present("/d/new"); in != 0 {
		t.Fatalf("synced removal undone in %d crashes", in)
	}
	if names, _ := m.Crash(rand.New(rand.NewPCG(1, 1)), nil).ReadDir("/d"); len(names) != 0 {
		t.Fatalf("ReadDir after a crash = %v", names)
	}
}

// WriteFile is a truncation and a write: a crash may leave the old content,
// an empty file or part of the new, never old and new mixed. WriteAtomic
// leaves the old file or the new one, whole.
func TestCrashWriteFileTearsWriteAtomicDoesNot(t *testing.T) {
	old, next := []byte("old checkpoint\n"), []byte("new one\n")
	setup := func() *MemFS {
		m := NewMemFS()
		if err := WriteAtomic(m, "/d/cp", old); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := setup()
	if err := m.WriteFile("/d/cp", next, false); err != nil {
		t.Fatal(err)
	}
	torn := 0
	for i, got := range crashes(t, m, "/d/cp", 200) {
		switch {
		case bytes.Equal(got, old), bytes.Equal(got, next):
		case got != nil && bytes.HasPrefix(next, got):
			torn++
		default:
			t.Fatalf("crash %d: WriteFile left %q", i, got)
		}
	}
	if torn == 0 {
		t.Fatal("no crash tore WriteFile")
	}
	// Every point of WriteAtomic: the file is old or new, whole.
	m = setup()
	points := 0
	m.OnChange(func() {
		points++
		for i, got := range crashes(t, m, "/d/cp", 20) {
			if !bytes.Equal(got, old) && !bytes.Equal(got, next) {
				t.Fatalf("point %d, crash %d: WriteAtomic left %q", points, i, got)
			}
		}
	})
	if err := WriteAtomic(m, "/d/cp", next); err != nil {
		t.Fatal(err)
	}
	m.OnChange(nil)
	if points != 6 { // create tmp, truncate, write, sync, rename, sync dir
		t.Fatalf("WriteAtomic made %d changes, want 6", points)
	}
	for i, got := range crashes(t, m, "/d/cp", 20) {
		if !bytes.Equal(got, next) {
			t.Fatalf("crash %d after WriteAtomic returned: %q", i, got)
		}
	}
	// The rename is durable too: the temporary name is gone.
	if names, _ := m.Crash(rand.New(rand.NewPCG(3, 3)), nil).ReadDir("/d"); len(names) != 1 || names[0] != "cp" {
		t.Fatalf("after WriteAtomic, a crash leaves %v", names)
	}
}

// A truncation not synced may be undone, with the writes after it; a synced
// one may not.
func TestCrashTruncate(t *testing.T) {
	m := NewMemFS()
	f, _, _ := m.OpenAppend("/d/a")
	m.SyncDir("/d")
	mustWrite(t, f, []byte("abcdef"))
	f.Sync()
	f.Truncate(2)
	mustWrite(t, f, []byte("XY"))
	seen := map[string]bool{}
	for _, got := range crashes(t, m, "/d/a", 100) {
		seen[string(got)] = true
	}
	for s := range seen {
		if s != "abcdef" && s != "ab" && s != "abX" && s != "abXY" {
			t.Fatalf("crash left %q", s)
		}
	}
	if len(seen) != 4 {
		t.Fatalf("crashes left %v, want all of abcdef, ab, abX, abXY", seen)
	}
	f.Sync()
	for _, got := range crashes(t, m, "/d/a", 10) {
		if string(got) != "abXY" {
			t.Fatalf("crash after sync left %q", got)
		}
	}
}

// garble sees the kept unsynced bytes only.
func TestCrashGarbleSeesUnsynced(t *testing.T) {
	m := NewMemFS()
	f, _, _ := m.OpenAppend("/d/a")
	m.SyncDir("/d")
	mustWrite(t, f, []byte("sync"))
	f.Sync()
	mustWrite(t, f, []byte("rest"))
	for seed := range uint64(50) {
		c := m.Crash(rand.New(rand.NewPCG(seed, 2)), func(name string, b []byte) {
			if name != "/d/a" || len(b) == 0 || !bytes.HasPrefix([]byte("rest"), b) {
				t.Fatalf("garble(%q, %q)", name, b)
			}
			for i := range b {
				b[i] = '#'
			}
		})
		got, _ := c.ReadFile("/d/a")
		if !bytes.HasPrefix(got, []byte("sync")) || bytes.ContainsAny(got[4:], "rest") {
			t.Fatalf("seed %d: %q", seed, got)
		}
	}
}

// Rename is atomic: the target holds the old file or the new one.
func TestCrashRenameAtomic(t *testing.T) {
	m := NewMemFS()
	m.WriteFile("/d/t", []byte("old"), true)
	m.SyncDir("/d")
	m.WriteFile("/d/t.tmp", []byte("new"), true)
	m.Rename("/d/t.tmp", "/d/t")
	kinds := map[string]bool{}
	for i, got := range crashes(t, m, "/d/t", 64) {
		if string(got) != "old" && string(got) != "new" {
			t.Fatalf("crash %d: %q", i, got)
		}
		kinds[string(got)] = true
	}
	if len(kinds) != 2 {
		t.Fatalf("unsynced rename: saw only %v", kinds)
	}
}

func TestFSAgree(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		fs   FS
		dir  string
	}{{"os", OSFS{}, dir}, {"mem", NewMemFS(), "/m"}} {
		if err := c.fs.MkdirAll(c.dir); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(c.dir, "x.index")
		f, _, err := c.fs.OpenAppend(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("abcdef"))
		if err := f.Truncate(3); err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("Z"))
		buf := make([]byte, 4)
		if n, err := f.ReadAt(buf, 0); n != 4 || string(buf) != "abcZ" || err != nil {
			t.Fatalf("%s: ReadAt = %q, %v", c.name, buf[:n], err)
		}
		if n, err := f.ReadAt(buf, 2); n != 2 || string(buf[:n]) != "cZ" || err != io.EOF {
			t.Fatalf("%s: ReadAt past the end = %q, %v", c.name, buf[:n], err)
		}
		f.Close()
		if err := c.fs.WriteFile(filepath.Join(c.dir, "y.snapshot"), []byte("s"), true); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic(c.fs, filepath.Join(c.dir, "y.snapshot"), []byte("whole")); err != nil {
			t.Fatal(err)
		}
		if got, err := c.fs.ReadFile(filepath.Join(c.dir, "y.snapshot")); err != nil || string(got) != "whole" {
			t.Fatalf("%s: after WriteAtomic: %q, %v", c.name, got, err)
		}
		names, err := c.fs.ReadDir(c.dir)
		if err != nil || len(names) != 2 || names[0] != "x.index" || names[1] != "y.snapshot" {
			t.Fatalf("%s: ReadDir = %v, %v", c.name, names, err)
		}
		if err := c.fs.Remove(name); err != nil {
			t.Fatal(err)
		}
		if err := c.fs.SyncDir(c.dir); err != nil {
			t.Fatal(err)
		}
		if _, err := c.fs.ReadFile(name); err == nil {
			t.Fatalf("%s: removed file still reads", c.name)
		}
		if err := c.fs.Rename(name, name+".x"); err == nil {
			t.Fatalf("%s: rename of a missing file succeeds", c.name)
		}
	}
}
