package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/mirrorpath/mirrorpath/storage"
)

// Index file suffixes (LogFileUtils); dump picks the decoder by suffix.
const (
	offsetIndexSuffix = ".index"
	timeIndexSuffix   = ".timeindex"
)

// isIndexFile reports whether name is a .index or .timeindex file.
func isIndexFile(name string) bool {
	return strings.HasSuffix(name, offsetIndexSuffix) || strings.HasSuffix(name, timeIndexSuffix)
}

// indexBase is the base offset in an index file's name
// (<20-digit offset>.index), or false.
func indexBase(name string) (int64, bool) {
	s := filepath.Base(name)
	s = strings.TrimSuffix(strings.TrimSuffix(s, offsetIndexSuffix), timeIndexSuffix)
	if len(s) != 20 {
		return 0, false
	}
	o, err := strconv.ParseInt(s, 10, 64)
	return o, err == nil && o >= 0
}

// segmentLog is the .log beside an index file.
func segmentLog(name string) string {
	s := strings.TrimSuffix(strings.TrimSuffix(name, offsetIndexSuffix), timeIndexSuffix)
	return s + ".log"
}

// indexInfo is one output line of an index dump: an entry, a file-level
// error, or (with --check) the verdict against the .log.
type indexInfo struct {
	File       string `json:"file"`
	Entry      *int   `json:"entry,omitempty"`
	Timestamp  *int64 `json:"timestamp,omitempty"`
	Offset     *int64 `json:"offset,omitempty"`
	Position   *int64 `json:"position,omitempty"`
	Log        string `json:"log,omitempty"`
	Checked    *int   `json:"checked,omitempty"`
	Mismatches *int   `json:"mismatches,omitempty"`
	Error      string `json:"error,omitempty"`
}

// openSegmentLog opens the .log beside an index file for --check: nil and
// no error when there is none.
func openSegmentLog(name string) (*os.File, error) {
	f, err := os.Open(segmentLog(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := notDir(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// notDir is the error reading a directory gives (os.ReadFile's), so that
// a directory fails before anything is printed for it.
func notDir(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return dirError(f, st)
}

func dirError(f *os.File, st fs.FileInfo) error {
	if st.IsDir() {
		return &fs.PathError{Op: "read", Path: f.Name(), Err: syscall.EISDIR}
	}
	return nil
}

// openStream opens name to be read to its end: its size, or -1 for a pipe
// or device, whose size says nothing; a directory is refused as notDir
// refuses it.
func openStream(name string) (f *os.File, size int64, err error) {
	if f, err = os.Open(name); err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil {
		err = dirError(f, st)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if size = st.Size(); !st.Mode().IsRegular() {
		size = -1
	}
	return f, size, nil
}

// checkedIndexFile is indexFile with --check against log, the segment's
// .log, read through storage's 64 KiB header window; err is a failure to
// read it.
func (d *dumper) checkedIndexFile(name string, data []byte, log *os.File) (invalid bool, err error) {
	st, err := log.Stat()
	if err != nil {
		return false, err
	}
	return d.indexFileFrom(name, data, log, st.Size())
}

// indexFile dumps one .index or .timeindex file, one line per entry with the
// absolute offset (base offset from the file name), and reports whether it
// is invalid: it fails Kafka's sanity check (size, order, offsets below the
// base), or, when log is not nil (--check with the segment's .log beside
// it), an entry disagrees with the log. Decoding aliases data and is
// O(entries); the check adds one pass over the log's batch headers.
func (d *dumper) indexFile(name string, data, log []byte) (invalid bool) {
	if log == nil {
		invalid, _ = d.indexFileFrom(name, data, nil, 0)
		return invalid
	}
	invalid, _ = d.indexFileFrom(name, data, bytes.NewReader(log), int64(len(log)))
	return invalid
}

// indexFileFrom is indexFile with the log read from log (logSize bytes; nil:
// no check); err is a failure to read it.
func (d *dumper) indexFileFrom(name string, data []byte, log io.ReaderAt, logSize int64) (invalid bool, err error) {
	if !d.json {
		fmt.Fprintf(d.out, "Dumping %s\n", name)
	}
	base, _ := indexBase(name)
	time := strings.HasSuffix(name, timeIndexSuffix)
	var n int
	var entry func(i int) indexInfo
	var logErr error
	var bad map[int]string
	report := func(i int, e error) {
		if bad == nil {
			bad = map[int]string{}
		}
		bad[i] = e.Error()
	}
	if time {
		var x storage.TimeIndex
		x, err = storage.ParseTimeIndex(data, base)
		n, entry = x.Len(), func(i int) indexInfo {
			e := x.Entry(i)
			return indexInfo{Timestamp: ptr(e.Timestamp), Offset: ptr(e.Offset)}
		}
		if log != nil {
			_, logErr = storage.VerifyTimeIndexAt(x, log, logSize, report)
		}
	} else {
		var x storage.OffsetIndex
		x, err = storage.ParseOffsetIndex(data, base)
		n, entry = x.Len(), func(i int) indexInfo {
			e := x.Entry(i)
			return indexInfo{Offset: ptr(e.Offset), Position: ptr(e.Position)}
		}
		if log != nil {
			_, logErr = storage.VerifyOffsetIndexAt(x, log, logSize, report)
		}
	}
	for i := range n {
		info := entry(i)
		info.File, info.Entry, info.Error = name, ptr(i), bad[i]
		d.emitIndex(&info)
	}
	if err != nil {
		d.emitIndex(&indexInfo{File: name, Error: err.Error()})
	}
	if log != nil {
		d.emitIndex(&indexInfo{File: name, Log: segmentLog(name), Checked: ptr(n), Mismatches: ptr(len(bad))})
	}
	return err != nil || len(bad) > 0 || logErr != nil, logErr
}

func (d *dumper) emitIndex(info *indexInfo) { emitLine(d, info, indexText) }

// emitLine writes one output line of an index or state-file dump: info as
// JSON with --json, else as text renders it.
func emitLine[T any](d *dumper, info *T, text func(*T) string) {
	if d.json {
		line, err := json.Marshal(info)
		if err != nil { // cannot happen: every field is marshalable
			panic(err)
		}
		d.out.Write(append(line, '\n'))
		return
	}
	io.WriteString(d.out, text(info))
}

// indexText renders info as Kafka's DumpLogSegments prints index entries
// ("offset: 20 position: 4140", "timestamp: 3000 offset: 10").
func indexText(info *indexInfo) string {
	var parts []string
	kv := func(k string, v int64) { parts = append(parts, k+": "+strconv.FormatInt(v, 10)) }
	switch {
	case info.Checked != nil:
		if *info.Mismatches == 0 {
			return fmt.Sprintf("check: %d entries agree with %s\n", *info.Checked, info.Log)
		}
		return fmt.Sprintf("check: %d of %d entries disagree with %s\n", *info.Mismatches, *info.Checked, info.Log)
	case info.Timestamp != nil:
		kv("timestamp", *info.Timestamp)
		kv("offset", *info.Offset)
	case info.Offset != nil:
		kv("offset", *info.Offset)
		kv("position", *info.Position)
	}
	if info.Error != "" {
		parts = append(parts, "error: "+strconv.Quote(info.Error))
	}
	return strings.Join(parts, " ") + "\n"
}
