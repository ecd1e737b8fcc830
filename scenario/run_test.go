package scenario

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestWriteText(t *testing.T) {
	opts := DefaultOptions()
	results := []Result{
		{File: "x.scn", Strategy: "verbatim", Options: opts.For("verbatim"),
			Violations:   []Violation{{Code: "M4", Step: 12}, {Code: "ERR", Step: 9}, {Code: "M4", Step: 14}},
			Expectations: []ExpectResult{{Line: 20, Want: []string{"M4"}, Got: []string{"M4", "ERR"}}}},
		{File: "x.scn", Strategy: "barrier", Options: opts.For("barrier"),
			Expectations: []ExpectResult{{Line: 21, Want: []string{"ok"}, Got: []string{}, Held: true}}},
	}
	var b bytes.Buffer
	if err := WriteText(&b, results); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"x.scn  options: barrier-apply=exact stop-variant=abort has-producer-id=not-minus-one unknown-source=skip hazard-r2=off stop-errors=failed empty-stop=stop barrier-source=off recovery-barrier=ignore stop-completion=first mirror-loop=fail source-change=fail failback-position=direct stop-abort-marker=versioned txn-verification=on txn-version=1 kafka-release=4.2 dedup-check=seq",
		"strategy  M4  ERR  expect",
		"verbatim  12  9    FAILED line 20: want M4, got M4,ERR",
		"barrier   -   -    held: ok",
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestResolveOrder(t *testing.T) {
	s, err := Parse("o.scn", []byte("set crc-fix=patch stop-variant=truncate\nset crc-fix=full\n"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := resolveOptions(s, map[string]string{"stop-variant": "abort", "strategy": "bitfield"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Get("crc-fix") != "full" || o.Get("stop-variant") != "abort" || len(o.Strategies()) != 1 {
		t.Errorf("resolved %v %v", o.For("bitfield"), o.Strategies())
	}
	if _, err := resolveOptions(s, map[string]string{"fold": "rot13"}); err == nil {
		t.Error("bad flag value accepted")
	}
}

// TestRunConcurrently backs the doc comment of runStrategy: runs of one
// Script on several goroutines give the same results (run with -race).
func TestRunConcurrently(t *testing.T) {
	src, err := os.ReadFile("../scenarios/07-long-chain.scn")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("07.scn", src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wantJSON bytes.Buffer
	WriteJSON(&wantJSON, want)
	var wg sync.WaitGroup
	out := make([]string, 4)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs, err := Run(s, nil)
			if err != nil {
				out[i] = err.Error()
				return
			}
			var b bytes.Buffer
			WriteJSON(&b, rs)
			out[i] = b.String()
		}()
	}
	wg.Wait()
	for i, o := range out {
		if o != wantJSON.String() {
			t.Errorf("goroutine %d: %s", i, o)
		}
	}
}

// TestAllocatorMarginOption: allocator-margin takes a plain decimal integer
// in [0, 2^62] and nothing else.
func TestAllocatorMarginOption(t *testing.T) {
	o := DefaultOptions()
	if o.Get("allocator-margin") != "1000" || o.Get("allocator-mode") != "awaited" {
		t.Fatalf("defaults %q %q", o.Get("allocator-margin"), o.Get("allocator-mode"))
	}
	for _, v := range []string{"0", "1", "4611686018427387904"} {
		if err := o.Set("allocator-margin", v); err != nil {
			t.Errorf("allocator-margin=%s: %v", v, err)
		}
	}
	for _, v := range []string{"", "-1", "07", "+5", "1e3", "4611686018427387905", "awaited"} {
		if err := o.Set("allocator-margin", v); !errors.Is(err, ErrOption) {
			t.Errorf("allocator-margin=%q: err %v, want ErrOption", v, err)
		}
	}
}
