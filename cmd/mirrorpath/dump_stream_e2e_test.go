//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// rssChildEnv names the file the child process of TestDumpMultiGiB dumps.
const rssChildEnv = "MIRRORPATH_DUMP_RSS_FILE"

// TestDumpMultiGiB: dump scans a 3.25 GiB segment (1 GiB of real batches,
// then a 2.25 GiB hole, a framing error at its first byte) with a
// peak resident set (VmHWM, measured in a child process so that nothing
// else of the test binary counts) under 128 MiB; reading the file whole
// takes more than 3 GiB.
func TestDumpMultiGiB(t *testing.T) {
	if name := os.Getenv(rssChildEnv); name != "" {
		var out countWriter
		code := mainArgs([]string{"dump", name}, &out, os.Stderr)
		status, _ := os.ReadFile("/proc/self/status")
		os.Stdout.WriteString("exit " + strconv.Itoa(code) + " lines " + strconv.Itoa(out.lines) + " last " + strconv.Quote(out.last) + "\n")
		os.Stdout.Write(status)
		return
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status: the peak resident set is read from it")
	}
	// A 4 MiB block of batches of one 16 KiB record each, written 256 times.
	var block []byte
	n := 0
	for len(block) < 4<<20 {
		var err error
		block, err = codec.AppendBatch(block, codec.BatchHeader{BaseOffset: int64(n), BaseTimestamp: 1700000000000,
			ProducerID: 1, BaseSequence: int32(n)}, []codec.Record{{Value: bytes.Repeat([]byte{byte(n)}, 16<<10)}}, codec.CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	const copies = 256
	name := t.TempDir() + "/00000000000000000000.log"
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for range copies {
		if _, err := w.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	real := int64(copies) * int64(len(block))
	if err := f.Truncate(real + 9<<28); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestDumpMultiGiB$")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+name)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var hwm int64 = -1
	summary := ""
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "exit ") {
			summary = line
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			hwm = kb << 10
		}
	}
	wantLast := `position: ` + strconv.FormatInt(real, 10) + ` baseOffset: 0 batchLength: 0 magic: 0 error: "codec: bad batch length at position ` + strconv.FormatInt(real, 10) + ` (batchLength)"`
	wantSummary := "exit 1 lines " + strconv.Itoa(1+copies*n+1) + " last " + strconv.Quote(wantLast)
	if summary != wantSummary {
		t.Fatalf("child: %q, want %q", summary, wantSummary)
	}
	if hwm < 0 {
		t.Fatalf("no VmHWM in the child's status:\n%s", out)
	}
	t.Logf("dump of %d bytes (%d batches): peak resident set %d MiB", real+9<<28, copies*n, hwm>>20)
	if hwm > 128<<20 {
		t.Fatalf("peak resident set %d bytes, want at most 128 MiB", hwm)
	}
}

// countWriter counts the lines written to it and keeps the last one.
type countWriter struct {
	lines int
	last  string
	part  []byte
}

func (c *countWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			c.lines++
			c.last = string(c.part)
			c.part = c.part[:0]
			continue
		}
		c.part = append(c.part, b)
	}
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
