package scenario

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the code table of docs/scenarios.md from codeTable")

// TestCodeTableInDocs holds the table of docs/scenarios.md, "The oracle", to
// codeTable: every code, in report order, with what it means and which
// check reports it. Regenerate with
//
//	go test ./scenario -run TestCodeTableInDocs -update-docs
func TestCodeTableInDocs(t *testing.T) {
	const path = "../docs/scenarios.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const head = "| code | what happened | checked by |\n"
	start := strings.Index(string(doc), head)
	if start < 0 {
		t.Fatalf("%s: no code table (want a table headed %q)", path, head)
	}
	end := start + strings.Index(string(doc[start:]), "\n\n") + 1
	if end <= start {
		t.Fatalf("%s: the code table does not end with a blank line", path)
	}
	want := codeTableMarkdown()
	if *updateDocs {
		out := string(doc[:start]) + want + string(doc[end:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(doc[start:end]); got != want {
		t.Errorf("%s: the code table differs from codeTable (run with -update-docs and review):\ngot:\n%s\nwant:\n%s",
			path, got, want)
	}
}

// TestCodesDistinct: each code is listed once, and Code's JSON form is its
// name as the expect lines spell it.
func TestCodesDistinct(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes {
		if seen[c] || c == "" || strings.ContainsAny(string(c), ", ") {
			t.Errorf("code %q listed twice, empty or not a word", c)
		}
		seen[c] = true
		if !validCode(string(c)) || codeRank(c) >= len(Codes) {
			t.Errorf("code %q not accepted by an expect line", c)
		}
	}
	if validCode("ok") || validCode("M99") {
		t.Error("validCode accepts a name that is no code")
	}
}
