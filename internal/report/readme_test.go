package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/mirrorpath/mirrorpath/pid"
)

// TestReadmeSectionsFromResults: the generated sections of README.md,
// results/benchmarks.md and results/scenarios.md are what `mirrorpath
// report --readme` makes of the committed results/run/, so a hand edit of a
// figure, or a run committed without regenerating them, fails here.
func TestReadmeSectionsFromResults(t *testing.T) {
	root := filepath.Join("..", "..")
	r, err := Load(filepath.Join(root, "results", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Figures == nil || r.Matrix == nil {
		t.Fatalf("results/run/ lacks the benchmarks or the scenario results (raw files %v)", r.RawFiles)
	}
	for _, doc := range []struct {
		path     string
		sections []string
	}{
		{"README.md", []string{sectionSummary}},
		{benchDoc, []string{SectionBench}},
		{verdictDoc, []string{SectionVerdicts}},
	} {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc.path)))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range doc.sections {
			got, err := MarkedSection(text, name)
			if err != nil {
				t.Fatalf("%s: %v", doc.path, err)
			}
			want, err := r.section(name, "results/run", doc.path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: section %q differs from what results/run/ gives; run `go run ./cmd/mirrorpath report --readme`\n--- got\n%s\n--- want\n%s",
					doc.path, name, got, want)
			}
			again, err := replaceSection(text, name, want)
			if err != nil || !bytes.Equal(again, text) {
				t.Errorf("%s: regenerating section %q changes the file (err %v)", doc.path, name, err)
			}
		}
	}
}

// TestGeneratedLinksResolve: every relative link of the generated sections
// names a file of the module, from the document it is written into.
func TestGeneratedLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	r, err := Load(filepath.Join(root, "results", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range GeneratedDocs {
		for _, name := range []string{sectionSummary, SectionBench, SectionVerdicts} {
			out, err := r.section(name, "results/run", doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range mdLink.FindAllStringSubmatch(string(out), -1) {
				target, frag, _ := strings.Cut(m[1], "#")
				path := filepath.Join(root, filepath.Dir(doc), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s, section %s: link %s: %v", doc, name, m[1], err)
					continue
				}
				if frag != "" && !slices.Contains(headingAnchors(t, path), frag) {
					t.Errorf("%s, section %s: link %s: no heading of %s has the anchor #%s", doc, name, m[1], target, frag)
				}
			}
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)]+)\)`)

// headingAnchors returns the anchors GitHub gives the headings of the
// Markdown file at path: lower case, spaces to hyphens, every character
// but letters, digits, hyphens and underscores dropped.
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || !strings.HasPrefix(h, " ") {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		out = append(out, a.String())
	}
	return out
}

func TestReplaceSection(t *testing.T) {
	doc := []byte("# t\n\n<!-- mirrorpath:bench:begin -->\nold\nlines\n<!-- mirrorpath:bench:end -->\n\ntail\n")
	once, err := replaceSection(doc, SectionBench, []byte("new"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# t\n\n<!-- mirrorpath:bench:begin -->\nnew\n<!-- mirrorpath:bench:end -->\n\ntail\n"
	if string(once) != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", once, want)
	}
	twice, _ := replaceSection(once, SectionBench, []byte("new\n"))
	if !bytes.Equal(once, twice) {
		t.Fatalf("second replacement changed the document:\n%s", twice)
	}
	empty := []byte("a\n<!-- mirrorpath:bench:begin -->\n<!-- mirrorpath:bench:end -->\nb\n")
	if got, _ := replaceSection(empty, SectionBench, []byte("x\n")); string(got) != "a\n<!-- mirrorpath:bench:begin -->\nx\n<!-- mirrorpath:bench:end -->\nb\n" {
		t.Fatalf("empty section filled:\n%s", got)
	}
	if _, err := replaceSection(doc, SectionVerdicts, nil); !errors.Is(err, ErrNoSection) {
		t.Errorf("missing section: %v", err)
	}
	for _, bad := range []string{
		"<!-- mirrorpath:bench:begin -->\nx\n",
		"<!-- mirrorpath:bench:begin -->\n<!-- mirrorpath:bench:end -->\n<!-- mirrorpath:bench:begin -->\n<!-- mirrorpath:bench:end -->\n",
	} {
		if _, err := replaceSection([]byte(bad), SectionBench, nil); err == nil || errors.Is(err, ErrNoSection) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

// TestRewriteSections: a file is rewritten in place, only its marked
// sections; a file without markers is an error.
func TestRewriteSections(t *testing.T) {
	m, _ := ParseScenarios(strings.NewReader(scenarioJSON))
	r := &Report{Command: "mirrorpath run", Date: "2026-01-02 03:04", Commit: "abc1234", Figures: loadFixture(t), Matrix: m}
	dir := t.TempDir()
	path := filepath.Join(dir, "README.md")
	os.WriteFile(filepath.Join(dir, "go.mod"), nil, 0o644)
	head := "# x\n\nhand text\n\n"
	os.WriteFile(path, []byte(head+"<!-- mirrorpath:verdicts:begin -->\n<!-- mirrorpath:verdicts:end -->\n\nmiddle\n\n<!-- mirrorpath:bench:begin -->\nstale\n<!-- mirrorpath:bench:end -->\n"), 0o644)
	done, err := r.RewriteSections(dir, "README.md", "results/run")
	if err != nil || strings.Join(done, ",") != "bench,verdicts" {
		t.Fatalf("done %v, err %v", done, err)
	}
	first, _ := os.ReadFile(path)
	for _, want := range []string{head, "\nmiddle\n", "A/A canary: barrier / asis", "| 05 | - | ERR, LAT ✗ | - |", "Absolute medians", "commit abc1234", "| 170.0ns · 6.02 GB/s |"} {
		if !strings.Contains(string(first), want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(string(first), "stale") {
		t.Errorf("stale section kept:\n%s", first)
	}
	if _, err := r.RewriteSections(dir, "README.md", "results/run"); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Errorf("second rewrite differs:\n%s", second)
	}
	plain := filepath.Join(dir, "plain.md")
	os.WriteFile(plain, []byte("# no markers\n"), 0o644)
	if _, err := r.RewriteSections(dir, "plain.md", "results/run"); err == nil {
		t.Error("a file without markers was accepted")
	}
}

// TestDesignParagraphs: the per-design text is derived from the matrix:
// codes every design shows are named once, apart; each design lists the
// files of its own codes.
func TestDesignParagraphs(t *testing.T) {
	lines := strings.Join([]string{
		`{"file":"01-a.scn","strategy":"verbatim","violations":[{"code":"M4"},{"code":"RPO"}]}`,
		`{"file":"01-a.scn","strategy":"barrier","violations":[{"code":"RPO"}]}`,
		`{"file":"02-b.scn","strategy":"verbatim","violations":[{"code":"ERR"}]}`,
		`{"file":"02-b.scn","strategy":"barrier","violations":[]}`,
	}, "\n")
	m, err := ParseScenarios(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	out, err := (&Report{Matrix: m}).section(SectionVerdicts, "results/run", verdictDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Under every design (the cost of the scenario, not of a PID design): RPO in 01.",
		"- **verbatim** stores mirrored batches as-is", "It breaks in 2 of 2 scenarios: ERR in 02; M4 in 01.",
		"- **barrier** stores batches as-is", "It breaks in none of the 2 scenarios beyond the codes every design shows.",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verdict section lacks %q:\n%s", want, out)
		}
	}
}

// TestEveryStrategyHasADesignSentence: the README's verdict paragraphs
// describe every strategy pid knows, and a name pid does not know is said
// to be none of this build's.
func TestEveryStrategyHasADesignSentence(t *testing.T) {
	for _, s := range pid.Strategies() {
		if d, ok := strategyDesign[s]; !ok || d == "" || designOf(s.String()) != d {
			t.Errorf("strategy %s has no design sentence", s)
		}
	}
	if d := designOf("quantum"); !strings.Contains(d, "not a strategy of this build") {
		t.Errorf("designOf(unknown) = %q", d)
	}
}
