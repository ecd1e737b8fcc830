package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

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
	if rep.Agree || len(rep.Results) != len(conform.Cases()) || !strings.HasPrefix(rep.Broker, "kfake 127.0.0.1:") ||
		rep.Checked != len(rep.Results) || rep.APIVersions != 3 || rep.Versions["Produce"] != "v9" || len(rep.TopicsLeft) != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Rule == "" || r.Class == "" {
			t.Errorf("case %s without rule or class", r.Case)
		}
		if (r.Verdict == conform.Diverges) != (r.Diff != nil) {
			t.Errorf("case %s: verdict %s, diff %v", r.Case, r.Verdict, r.Diff)
		}
		if r.Diff != nil && (strings.Contains(r.Diff.Response, "&{") || strings.Contains(r.Diff.Response, "\n")) {
			t.Errorf("case %s: response %q is not one readable line", r.Case, r.Diff.Response)
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
		"diverges: ", "response: Produce v9 response ", "request:  Produce v9 acks=-1",
		"versions: ApiVersions v3, AddPartitionsToTxn v3, CreateTopics v7,"} {
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

// TestConformLibrdkafkaMock: conform --broker against librdkafka's mock
// cluster completes with exit 1 (it diverges, results/conform-librdkafka-mock.md),
// every case either checked or unsupported with its reason, and reports the
// topics it could not delete (the mock has no DeleteTopics).
func TestConformLibrdkafkaMock(t *testing.T) {
	m, err := conform.StartLibrdkafkaMock(t.TempDir(), 30*time.Second)
	if errors.Is(err, conform.ErrNoLibrdkafka) && os.Getenv("CI") != "true" {
		t.Skipf("%v (CI=true makes this a failure)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var out, errb bytes.Buffer
	if rc := mainArgs([]string{"conform", "--json", "--broker", m.Addr}, &out, &errb); rc != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", rc, errb.String())
	}
	var rep conformReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.APIVersions != 2 || rep.Versions["CreateTopics"] != "none" || rep.Versions["Produce"] != "v7" ||
		rep.Checked == 0 || len(rep.TopicsLeft) == 0 || !strings.Contains(errb.String(), "topics left on the broker") {
		t.Fatalf("report %+v, stderr %s", rep, errb.String())
	}
	for _, r := range rep.Results {
		if r.Verdict == conform.Unsupported && r.Reason == "" {
			t.Errorf("case %s unsupported without a reason", r.Case)
		}
	}
}

// TestConformNothingToCheck: a broker on which no case can run (Produce
// below v3) is exit 2, with every case unsupported in the output.
func TestConformNothingToCheck(t *testing.T) {
	vs := kversion.V3_6_0()
	vs.SetMaxKeyVersion(int16(kmsg.Produce), 2)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(vs), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		return net.Listen(network, "127.0.0.1:0")
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out, errb bytes.Buffer
	if rc := mainArgs([]string{"conform", "--broker", c.ListenAddrs()[0]}, &out, &errb); rc != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", rc, errb.String())
	}
	if n := strings.Count(out.String(), "unsupported (Produce v3)"); n != len(conform.Cases()) {
		t.Errorf("%d cases unsupported (Produce v3), want %d:\n%s", n, len(conform.Cases()), out.String())
	}
	if !strings.Contains(errb.String(), "no case could run") {
		t.Errorf("stderr %q", errb.String())
	}
}
