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

// indexFile dumps one .index or .timeindex file held in data, checked
// against log (nil: no check), as indexStream does; it reports whether the
// file is invalid.
func (d *dumper) indexFile(name string, data, log []byte) (invalid bool) {
	var r io.ReaderAt
	if log != nil {
		r = bytes.NewReader(log)
	}
	invalid, _ = d.indexStream(name, bytes.NewReader(data), r, int64(len(log)))
	return invalid
}

// indexStream dumps one .index or .timeindex file read from src, one line
// per entry with the absolute offset (base offset from the file name), and
// reports whether it is invalid: it fails Kafka's sanity check (size, order,
// offsets below the base; the entries before the defect are printed, then
// the defect), or, when log is not nil (--check with the segment's .log
// beside it, logSize bytes), an entry disagrees with the log. The file is
// streamed (storage.IndexScanner): memory is one read buffer and the
// log's 64 KiB header window whatever the sizes; O(entries) plus one pass
// over the log's batch headers. err is a failure to read the log.
func (d *dumper) indexStream(name string, src io.Reader, log io.ReaderAt, logSize int64) (invalid bool, err error) {
	if !d.json {
		fmt.Fprintf(d.out, "Dumping %s\n", name)
	}
	base, _ := indexBase(name)
	s := storage.NewOffsetIndexScanner(src, base)
	if strings.HasSuffix(name, timeIndexSuffix) {
		s = storage.NewTimeIndexScanner(src, base)
	}
	if log != nil {
		s.CheckAgainst(log, logSize)
	}
	mismatches := 0
	for {
		e, mismatch, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			d.emitIndex(&indexInfo{File: name, Error: err.Error()})
			invalid = true
			break
		}
		info := indexInfo{File: name, Entry: ptr(s.Entries() - 1), Offset: ptr(e.Offset)}
		if strings.HasSuffix(name, timeIndexSuffix) {
			info.Timestamp = ptr(e.Timestamp)
		} else {
			info.Position = ptr(e.Position)
		}
		if mismatch != nil {
			info.Error = mismatch.Error()
			mismatches++
		}
		d.emitIndex(&info)
	}
	if log != nil {
		d.emitIndex(&indexInfo{File: name, Log: segmentLog(name), Checked: ptr(s.Entries()), Mismatches: ptr(mismatches)})
	}
	return invalid || mismatches > 0 || s.LogErr() != nil, s.LogErr()
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
