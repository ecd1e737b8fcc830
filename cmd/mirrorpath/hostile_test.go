package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// hostileChildEnv carries, JSON-encoded, the arguments a child process of
// TestHostileInput runs mainArgs with.
const hostileChildEnv = "MIRRORPATH_HOSTILE_ARGS"

// hostileRSS bounds the peak resident set of every command of
// TestHostileInput: the test binary itself and one command's buffers
// (raceRSS more under the race detector, whose shadow memory grows with the
// heap). Reading any of the files whole takes at least 64 MiB (most 4 GiB),
// and the scenario files ask for 655 MB or more.
const hostileRSS = 32<<20 + raceRSS

// TestHostileInput runs every command on the input a careless or hostile
// user gives it — sizes out of range, 4 GiB sparse files, /dev/zero, files
// over the scenario language's caps — each in a child process, and holds
// each run to its exit status, its report on one line (stderr, or for dump
// the last line of stdout, where dump reports a bad file) and a peak
// resident set (VmHWM) under hostileRSS: no panic, no allocation sized by
// the input.
func TestHostileInput(t *testing.T) {
	if enc := os.Getenv(hostileChildEnv); enc != "" {
		hostileChild(enc)
		return
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status: the peak resident set is read from it")
	}
	tmp := t.TempDir()
	sparse := func(name string, head []byte, size int64) string {
		t.Helper()
		path := filepath.Join(tmp, name)
		if dir := filepath.Dir(path); dir != tmp {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(path, head, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const gib4 = 4 << 30
	seg := sparse("topic-0/00000000000000000000.log", nil, gib4)
	index := sparse("00000000000000000000.index", nil, gib4)
	timeIndex := sparse("00000000000000000000.timeindex", nil, gib4)
	txnIndex := sparse("00000000000000000000.txnindex", []byte{0, 1}, gib4) // version 1 at entry 0
	snapshot := sparse("00000000000000000000.snapshot", nil, gib4)          // version 0
	crcSnapshot := sparse("00000000000000000001.snapshot", []byte{0, 1}, 64<<20)
	scn := sparse("huge.scn", nil, gib4)
	file := sparse("a-file", []byte("x"), 1)
	write := func(name, content string) string {
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	head := "cluster A\ntopic t\nproducer p on A\n"
	newlines := write("newlines.scn", strings.Repeat("\n", 2<<20))
	bigBatch := write("big-batch.scn", head+"send p t/0 records=10000 bytes=65536\n")
	manyBatches := write("many-batches.scn", head+strings.Repeat("send p t/0 records=16 bytes=65000\n", 2000))
	manyReplicas := write("many-replicas.scn", "cluster A replicas=9\ncluster B replicas=9\ntopic t\nmirror B from A topic=t\nproducer p on A\n"+
		strings.Repeat("send p t/0 records=16 bytes=65000\n", 10))

	for _, c := range []struct {
		name string
		args []string
		code int
		// stderr is the one line the command reports on; empty: nothing
		// on stderr, and last is the last line of stdout.
		stderr, last string
	}{
		{"replay chunk MaxInt64", []string{"replay", "--chunk", "9223372036854775807", seg}, 2, `replay: invalid value "9223372036854775807" for flag -chunk: above the limit 1073741824`, ""},
		{"replay chunk 1 TiB", []string{"replay", "--chunk", "1099511627776", seg}, 2, "flag -chunk: above the limit", ""},
		{"replay max-input MaxInt64", []string{"replay", "--max-input", "9223372036854775807", seg}, 2, "flag -max-input: above the limit 4294967296", ""},
		{"replay count", []string{"replay", "--count", "1000000000", seg}, 2, "flag -count: above the limit 1000", ""},
		{"replay min-time negative", []string{"replay", "--min-time", "-1s", seg}, 2, "flag -min-time: below the least 0s", ""},
		{"replay sparse segment", []string{"replay", seg}, 1, "replay: " + seg + ": corrupt at byte 0", ""},
		{"replay sparse partition dir", []string{"replay", filepath.Dir(seg)}, 1, "corrupt at byte 0", ""},
		{"replay dev/zero", []string{"replay", "/dev/zero"}, 1, "replay: /dev/zero: corrupt at byte 0", ""},
		{"scenario dev/zero", []string{"scenario", "run", "/dev/zero"}, 2, "/dev/zero:1: line longer than 4096 bytes", ""},
		{"scenario sparse 4 GiB", []string{"scenario", "run", scn}, 2, scn + ":1: line longer than 4096 bytes", ""},
		{"scenario 2 MiB of newlines", []string{"scenario", "run", newlines}, 2, newlines + ":1048577: file longer than 1048576 bytes", ""},
		{"scenario 655 MB batch", []string{"scenario", "run", bigBatch}, 2, bigBatch + ":4: send: a batch of records=10000 bytes=65536 is up to 655970061 bytes, above the limit 1048588", ""},
		{"scenario 2000 batches", []string{"scenario", "run", manyBatches}, 2, manyBatches + ":36: send: the batches sent", ""},
		{"scenario 18 replicas", []string{"scenario", "run", manyReplicas}, 2, manyReplicas + ":7: send: the batches sent", ""},
		{"dump sparse .log", []string{"dump", seg}, 1, "", `position: 0 baseOffset: 0 batchLength: 0 magic: 0 error: "codec: bad batch length at position 0 (batchLength)"`},
		{"dump sparse .index", []string{"dump", index}, 1, "", `error: "storage: corrupt index: entries not increasing at entry 1"`},
		{"dump sparse .timeindex", []string{"dump", timeIndex}, 1, "", `error: "storage: corrupt index: entries not increasing at entry 1"`},
		{"dump sparse .index --check", []string{"dump", "--check", index}, 1, "no 00000000000000000000.log beside it", `error: "storage: corrupt index: entries not increasing at entry 1"`},
		{"dump sparse .txnindex", []string{"dump", txnIndex}, 1, "", `error: "entry 0: storage: txn index entry version is not 0"`},
		{"dump sparse .snapshot", []string{"dump", snapshot}, 1, "", `error: "psm: snapshot version is not 1"`},
		{"dump 64 MiB .snapshot, bad CRC", []string{"dump", crcSnapshot}, 1, "", `error: "psm: snapshot CRC mismatch"`},
		{"dump max-batch", []string{"dump", "--max-batch", "9999999999", seg}, 2, "flag -max-batch: above the limit 2147483659", ""},
		{"dump max-decompressed", []string{"dump", "--max-decompressed", "1099511627776", seg}, 2, "flag -max-decompressed: above the limit 1073741824", ""},
		{"bench timeout negative", []string{"bench", "--base", "HEAD", "--timeout", "-1s"}, 2, "bench: invalid value \"-1s\" for flag -timeout: below the least 1s", ""},
		{"bench benchtime soon", []string{"bench", "--base", "HEAD", "--benchtime", "soon"}, 2, `bench: --benchtime "soon": want a positive duration`, ""},
		{"bench count", []string{"bench", "--base", "HEAD", "--count", "9223372036854775807"}, 2, "flag -count: above the limit 1000", ""},
		{"conform timeout 1ns", []string{"conform", "--timeout", "1ns"}, 2, "conform: invalid value \"1ns\" for flag -timeout: below the least 100ms", ""},
		{"fuzz time negative", []string{"fuzz", "--time", "-1s"}, 2, "flag -time: below the least 1s", ""},
		{"fuzz parallel", []string{"fuzz", "--parallel", "9223372036854775807"}, 2, "flag -parallel: above the limit 1024", ""},
		{"fuzz export out file", []string{"fuzz", "export", "--out", file, "--dir", tmp}, 2, "fuzz export: --out: " + file + ": not a directory", ""},
		{"fuzz coverage out file", []string{"fuzz", "coverage", "--out", file, "--dir", tmp}, 2, "fuzz coverage: --out: " + file + ": not a directory", ""},
		{"profile benchtime", []string{"profile", "--benchtime", "soon"}, 2, `profile: --benchtime "soon": want a positive duration`, ""},
		{"profile top", []string{"profile", "--top", "9223372036854775807"}, 2, "flag -top: above the limit 1000", ""},
		{"report missing run", []string{"report", "--from", filepath.Join(tmp, "none")}, 1, "report: ", ""},
		{"ratio dev/zero", []string{"ratio", "--num", "a", "--den", "b", "/dev/zero"}, 1, "ratio: ", ""},
		{"unknown command", []string{"nope"}, 2, `mirrorpath: unknown command "nope"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, last, stderr, hwm := runHostileChild(t, c.args)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			switch {
			case c.stderr == "" && stderr != "":
				t.Errorf("stderr %q, want nothing", stderr)
			case c.stderr != "" && c.name != "unknown command" && (len(lines) != 1 || !strings.Contains(lines[0], c.stderr)):
				t.Errorf("stderr %q, want one line with %q", stderr, c.stderr)
			case c.stderr != "" && !strings.Contains(lines[0], c.stderr):
				t.Errorf("stderr %q, want a first line with %q", stderr, c.stderr)
			case strings.Contains(stderr, "report: report:") || strings.Contains(stderr, "goroutine "):
				t.Errorf("stderr %q", stderr)
			}
			if c.last != "" && last != c.last {
				t.Errorf("last line of stdout %q, want %q", last, c.last)
			}
			t.Logf("exit %d, peak resident set %d MiB, stderr %q", code, hwm>>20, strings.TrimSpace(stderr))
			if hwm > hostileRSS {
				t.Errorf("peak resident set %d MiB, want at most %d MiB", hwm>>20, hostileRSS>>20)
			}
		})
	}
}

// hostileChild runs mainArgs in a child of TestHostileInput and prints on
// stdout its exit status, the last line it wrote to stdout and the
// process's peak resident set.
func hostileChild(enc string) {
	var args []string
	if err := json.Unmarshal([]byte(enc), &args); err != nil {
		panic(err)
	}
	var out lastLine
	code := mainArgs(args, &out, os.Stderr)
	status, _ := os.ReadFile("/proc/self/status")
	var hwm string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		}
	}
	os.Stdout.WriteString("hostile-result " + strconv.Itoa(code) + " " + hwm + " " + strconv.Quote(out.last) + "\n")
}

// runHostileChild runs args in a child process: its exit status, the last
// line of its stdout, its stderr and its peak resident set in bytes.
func runHostileChild(t *testing.T, args []string) (code int, last, stderr string, hwm int64) {
	t.Helper()
	enc, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileInput$")
	cmd.Env = append(os.Environ(), hostileChildEnv+"="+string(enc))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, out, errb.String())
	}
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, "hostile-result ")
		if !ok {
			continue
		}
		f := strings.SplitN(rest, " ", 3)
		code, _ = strconv.Atoi(f[0])
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("child's VmHWM %q: %v", f[1], err)
		}
		if last, err = strconv.Unquote(f[2]); err != nil {
			t.Fatalf("child's last line %q: %v", f[2], err)
		}
		return code, last, errb.String(), kb << 10
	}
	t.Fatalf("no result from the child:\n%s\nstderr:\n%s", out, errb.String())
	return
}

// lastLine keeps the last line written to it.
type lastLine struct {
	last string
	part []byte
}

func (l *lastLine) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			l.last, l.part = string(l.part), l.part[:0]
			continue
		}
		if len(l.part) < 4096 {
			l.part = append(l.part, b)
		}
	}
	return len(p), nil
}
