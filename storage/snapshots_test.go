package storage

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

func TestSnapshotFileNames(t *testing.T) {
	if got := FileName("/d", 4, SnapshotSuffix); got != "/d/00000000000000000004.snapshot" {
		t.Fatalf("FileName = %q", got)
	}
	for _, c := range []struct {
		name string
		off  int64
		ok   bool
	}{
		{"00000000000000000042.snapshot", 42, true},
		{"00000000000000000042.snapshot.tmp", 0, false},
		{"42.snapshot", 0, false},
		{"0000000000000000004x.snapshot", 0, false},
		{"00000000000000000042.log", 0, false},
	} {
		if o, ok := ParseFileName(c.name, SnapshotSuffix); o != c.off || ok != c.ok {
			t.Errorf("ParseFileName(%q) = %d %v", c.name, o, ok)
		}
	}
}

// LoadNewest takes the newest snapshot in range that loads, deletes the
// corrupt ones it meets on the way, and stops at any other error; memory
// and file directories behave alike.
func TestSnapshotDirLoadNewest(t *testing.T) {
	errCorrupt := errors.New("corrupt")
	errIO := errors.New("io")
	for _, dir := range []string{"", "/s"} {
		fs := vfs.NewMemFS()
		d, err := OpenSnapshotDir(fs, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []int64{30, 10, 20, 40, 50} {
			if err := d.Write(o, []byte{byte(o)}); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(d.Offsets(), []int64{10, 20, 30, 40, 50}) || d.Newest() != 50 {
			t.Fatalf("dir %q: offsets %v", dir, d.Offsets())
		}
		corrupt := func(err error) bool { return err == errCorrupt }
		// 50 is out of range, 40 and 30 are corrupt, 20 loads.
		var seen []byte
		off, err := d.LoadNewest(0, 45, func(b []byte) error {
			seen = append(seen, b[0])
			if b[0] >= 30 {
				return errCorrupt
			}
			return nil
		}, corrupt)
		if err != nil || off != 20 || !slices.Equal(seen, []byte{40, 30, 20}) {
			t.Fatalf("dir %q: LoadNewest = %d %v after %v", dir, off, err, seen)
		}
		if !slices.Equal(d.Offsets(), []int64{10, 20, 50}) {
			t.Fatalf("dir %q: corrupt snapshots not deleted: %v", dir, d.Offsets())
		}
		if dir != "" {
			again, _ := OpenSnapshotDir(fs, dir)
			if !slices.Equal(again.Offsets(), []int64{10, 20, 50}) {
				t.Fatalf("files left: %v", again.Offsets())
			}
		}
		if off, err := d.LoadNewest(0, 100, func([]byte) error { return errIO }, corrupt); err != errIO || off != -1 {
			t.Fatalf("dir %q: an I/O error gave %d %v", dir, off, err)
		}
		if len(d.Offsets()) != 3 {
			t.Fatal("a non-corruption error deleted a snapshot")
		}
		if err := d.RemoveAbove(15); err != nil {
			t.Fatal(err)
		}
		if err := d.RemoveBelow(11); err != nil {
			t.Fatal(err)
		}
		if len(d.Offsets()) != 0 || d.Newest() != -1 {
			t.Fatalf("dir %q: left %v", dir, d.Offsets())
		}
		if off, err := d.LoadNewest(0, 100, func([]byte) error { return nil }, corrupt); off != -1 || err != nil {
			t.Fatalf("empty dir: %d %v", off, err)
		}
	}
}

// ProducerStateManagerTest#testRemoveStraySnapshotsKeepCleanShutdownSnapshot
// and #testRemoveAllStraySnapshots: a snapshot at no segment's base goes,
// unless it is the newest one and above every base (a clean shutdown's).
func TestSnapshotDirRemoveStray(t *testing.T) {
	for _, c := range []struct {
		name        string
		snaps, base []int64
		want        []int64
	}{
		{"KeepCleanShutdownSnapshot", []int64{5, 2, 42}, []int64{5}, []int64{5, 42}},
		{"RemoveAllStraySnapshots", []int64{5, 2, 42}, []int64{42}, []int64{42}},
		{"NoSegments", []int64{3, 7}, nil, []int64{7}},
		{"NoStray", []int64{0, 10}, []int64{0, 10, 20}, []int64{0, 10}},
		{"StrayBetweenBases", []int64{0, 4, 10, 15}, []int64{0, 10, 20}, []int64{0, 10}},
	} {
		for _, dir := range []string{"", "/s"} {
			t.Run(c.name+"/dir="+dir, func(t *testing.T) {
				fs := vfs.NewMemFS()
				d, err := OpenSnapshotDir(fs, dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range c.snaps {
					if err := d.Write(o, []byte{1}); err != nil {
						t.Fatal(err)
					}
				}
				if err := d.RemoveStray(c.base); err != nil {
					t.Fatal(err)
				}
				if got := d.Offsets(); !slices.Equal(got, c.want) {
					t.Fatalf("left %v, want %v", got, c.want)
				}
				if dir == "" {
					return
				}
				// The files are gone too: a reopened directory lists the same.
				r, err := OpenSnapshotDir(fs, dir)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Offsets(); !slices.Equal(got, c.want) {
					t.Fatalf("files left %v, want %v", got, c.want)
				}
			})
		}
	}
}

// A snapshot write is whole or absent at every crash point, and a
// temporary file left by a write cut short is removed on open; a removal
// is durable when RemoveAbove returns.
func TestSnapshotWriteCrash(t *testing.T) {
	fs := vfs.NewMemFS()
	d, err := OpenSnapshotDir(fs, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Write(10, []byte("ten")); err != nil {
		t.Fatal(err)
	}
	points, images := 0, 0
	check := func(wantAbsent int64) {
		for seed := range uint64(8) {
			c := fs.Crash(rand.New(rand.NewPCG(seed, uint64(points))), nil)
			e, err := OpenSnapshotDir(c, "/s")
			if err != nil {
				t.Fatal(err)
			}
			images++
			for _, o := range e.Offsets() {
				got, _ := e.Read(o)
				if want := map[int64]string{10: "ten", 20: "twenty"}[o]; string(got) != want || o == wantAbsent {
					t.Fatalf("point %d: snapshot %d holds %q", points, o, got)
				}
			}
			if names, _ := c.ReadDir("/s"); slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, vfs.TempSuffix) }) {
				t.Fatalf("point %d: temporary file kept by open: %v", points, names)
			}
		}
	}
	fs.OnChange(func() { points++; check(-1) })
	if err := d.Write(20, []byte("twenty")); err != nil {
		t.Fatal(err)
	}
	fs.OnChange(nil)
	check(-1)
	if err := d.RemoveAbove(10); err != nil {
		t.Fatal(err)
	}
	check(20)
	t.Logf("%d crash points, %d images", points, images)
}
