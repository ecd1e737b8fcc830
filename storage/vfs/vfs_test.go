package vfs

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// A crash keeps every synced byte and at most the unsynced ones written
// after, on MemFS; OSFS and MemFS agree on the calls the log makes.
func TestMemFSCrashKeepsSyncedPrefix(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		m := NewMemFS()
		f, size, err := m.OpenAppend("/d/a.log")
		if err != nil || size != 0 {
			t.Fatalf("OpenAppend: %d, %v", size, err)
		}
		synced := bytes.Repeat([]byte{1}, 100)
		f.Write(synced)
		f.Sync()
		f.Write(bytes.Repeat([]byte{2}, 50))
		c := m.Crash(rand.New(rand.NewPCG(seed, 0)), nil)
		got, err := c.ReadFile("/d/a.log")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 100 || len(got) > 150 || !bytes.Equal(got[:100], synced) {
			t.Fatalf("seed %d: crash left %d bytes, synced prefix kept: %v", seed, len(got), bytes.Equal(got[:min(100, len(got))], synced))
		}
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
		if n, err := f.ReadAt(buf, 0); n != 4 || string(buf) != "abcZ" {
			t.Fatalf("%s: ReadAt = %q, %v", c.name, buf[:n], err)
		}
		f.Close()
		if err := c.fs.WriteFile(filepath.Join(c.dir, "y.snapshot"), []byte("s"), true); err != nil {
			t.Fatal(err)
		}
		names, err := c.fs.ReadDir(c.dir)
		if err != nil || len(names) != 2 || names[0] != "x.index" || names[1] != "y.snapshot" {
			t.Fatalf("%s: ReadDir = %v, %v", c.name, names, err)
		}
		if err := c.fs.Remove(name); err != nil {
			t.Fatal(err)
		}
		if _, err := c.fs.ReadFile(name); err == nil {
			t.Fatalf("%s: removed file still reads", c.name)
		}
	}
}
