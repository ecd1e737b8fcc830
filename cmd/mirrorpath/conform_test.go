package main

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/conform"
)

// TestConformKfakeJSON: against kfake the suite finds the divergences of
// results/conform-kfake.md (checked by package conform), so the exit status
// is 1, and the JSON lists every case with its rule and class.
func TestConformKfakeJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := mainArgs([]string{"conform", "--json"}, &out, &errb); rc != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", rc, errb.String())
	}
	var rep conformReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Agree || len(rep.Results) != len(conform.Cases()) || !strings.HasPrefix(rep.Broker, "kfake 127.0.0.1:") {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Rule == "" || r.Class == "" {
			t.Errorf("case %s without rule or class", r.Case)
		}
		if (r.Verdict == conform.Diverges) != (r.Diff != nil) {
			t.Errorf("case %s: verdict %s, diff %v", r.Case, r.Verdict, r.Diff)
		}
	}
}

func TestConformTable(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := mainArgs([]string{"conform"}, &out, &errb); rc != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", rc, errb.String())
	}
	s := out.String()
	for _, want := range []string{"CASE", "duplicate-window", "ProducerStateEntry#findDuplicateBatch",
		"diverges: ", "response: &{", "request:  Produce v9"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestConformUsageAndConnection(t *testing.T) {
	for _, args := range [][]string{
		{"conform", "--broker", "no-port"},
		{"conform", "extra"},
		{"conform", "--timeout", "0s"},
		{"conform", "--broker", "127.0.0.1:1", "--timeout", "1s"},
	} {
		var out, errb bytes.Buffer
		if rc := mainArgs(args, &out, &errb); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no message", args)
		}
	}
}

// TestConformTimeoutSaysTimeout: a broker that accepts the connection and
// never answers is reported as a timeout of --timeout, on one line, exit 2;
// a --timeout below the Kafka client's 100 ms floor is a flag error.
func TestConformTimeoutSaysTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn // open, never answered
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	var out, errb bytes.Buffer
	rc := mainArgs([]string{"conform", "--broker", ln.Addr().String(), "--timeout", "200ms"}, &out, &errb)
	if rc != 2 || !strings.HasPrefix(errb.String(), "conform: timeout: no answer within --timeout 200ms") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming the timeout", rc, errb.String())
	}
	errb.Reset()
	rc = mainArgs([]string{"conform", "--timeout", "1ns"}, &out, &errb)
	if rc != 2 || !strings.Contains(errb.String(), "below the least 100ms") {
		t.Errorf("--timeout 1ns: exit %d, stderr %q", rc, errb.String())
	}
}
