package main

import (
	"bytes"
	"encoding/json"
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
	if rep.Agree || len(rep.Results) != len(conform.Cases()) || !strings.HasPrefix(rep.Broker, "kfake 127.0.0.1:") ||
		rep.Checked != len(rep.Results) || rep.ApiVersions != 3 || rep.Versions["Produce"] != "v9" || len(rep.TopicsLeft) != 0 {
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
