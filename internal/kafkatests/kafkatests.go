// Package kafkatests holds the bookkeeping of Kafka's unit tests ported to
// Go as conformance suites (docs/kafka-tests.md): which of a Kafka test
// class's methods have a Go test, which were judged not applicable and why,
// and that the figures the documents state ("N of M apply") are the ones
// computed from the method list. Tests only.
package kafkatests

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Suite is one Kafka test class and its Go port in one package directory.
type Suite struct {
	// Class is the Kafka test class's simple name, "DefaultRecordBatchTest".
	Class string
	// List is the method list (testdata/kafka-<class>.txt), relative to the
	// package directory: '#' comment lines, one of which reads
	// "# commit <40 hex digits>", then one Kafka test method name a line.
	List string
	// Prefix starts the name of every Go test that ports a method of the
	// class: the Go test for method m is Prefix+m.
	Prefix string
	// NotApplicable maps each method judged not applicable to the reason.
	NotApplicable map[string]string
	// Sections are Markdown files, relative to the package directory, with
	// a heading that is Class alone: its section must state "N of M" and
	// the commit, and name every method of NotApplicable.
	Sections []string
	// Rows are Markdown files with a table row that names Class in
	// backquotes: the row must state "N of M" and the commit.
	Rows []string
}

// Check fails t unless every method of s.List is either ported (a Go test
// Prefix+method is declared in a _test.go file of the current directory) or
// in s.NotApplicable with a reason, never both; every Go test with the
// prefix names a listed method; and the documents state the figures
// computed here. It returns the number of methods that apply and the number
// listed.
func Check(t *testing.T, s Suite) (apply, total int) {
	t.Helper()
	methods, commit := readList(t, s.List)
	declared := testFuncs(t, s.Prefix)
	for _, m := range methods {
		reason, na := s.NotApplicable[m]
		_, ported := declared[m]
		switch {
		case ported && na:
			t.Errorf("%s#%s is both ported (%s%s) and listed as not applicable", s.Class, m, s.Prefix, m)
		case ported:
			apply++
		case na && strings.TrimSpace(reason) == "":
			t.Errorf("%s#%s is not applicable without a reason", s.Class, m)
		case !na:
			t.Errorf("%s#%s is neither ported (no func %s%s) nor listed as not applicable", s.Class, m, s.Prefix, m)
		}
	}
	for m := range declared {
		if !slices.Contains(methods, m) {
			t.Errorf("%s%s ports no method listed in %s", s.Prefix, m, s.List)
		}
	}
	for m := range s.NotApplicable {
		if !slices.Contains(methods, m) {
			t.Errorf("not-applicable entry %q is not a method listed in %s", m, s.List)
		}
	}
	total = len(methods)
	figure := fmt.Sprintf("%d of %d", apply, total)
	for _, f := range s.Sections {
		sec := section(t, f, s.Class)
		for _, want := range []string{figure, commit} {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: the %s section does not state %q", f, s.Class, want)
			}
		}
		for m := range s.NotApplicable {
			if !strings.Contains(sec, m) {
				t.Errorf("%s: the %s section does not list not-applicable method %s", f, s.Class, m)
			}
		}
	}
	for _, f := range s.Rows {
		row := tableRow(t, f, s.Class)
		for _, want := range []string{figure, commit} {
			if !strings.Contains(row, want) {
				t.Errorf("%s: the %s row does not state %q", f, s.Class, want)
			}
		}
	}
	return apply, total
}

// readList reads a method list: the names in order and the commit.
func readList(t *testing.T, path string) (methods []string, commit string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			if c, ok := strings.CutPrefix(strings.TrimSpace(line[1:]), "commit "); ok {
				commit = strings.TrimSpace(c)
			}
		case slices.Contains(methods, line):
			t.Errorf("%s: method %s listed twice", path, line)
		default:
			methods = append(methods, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(commit) != 40 {
		t.Fatalf("%s: no \"# commit <sha>\" line", path)
	}
	if len(methods) == 0 {
		t.Fatalf("%s: no methods", path)
	}
	return methods, commit
}

// testFuncs returns the methods ported in the current directory: the names
// of top-level functions prefix+method declared in its _test.go files.
func testFuncs(t *testing.T, prefix string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			if m, ok := strings.CutPrefix(fd.Name.Name, prefix); ok && m != "" {
				out[m] = true
			}
		}
	}
	return out
}

// section returns the Markdown section of file whose heading is class, up
// to the next heading of the same or a higher level.
func section(t *testing.T, file, class string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	level := 0
	for line := range strings.Lines(string(data)) {
		h := len(line) - len(strings.TrimLeft(line, "#"))
		isHeading := h > 0 && strings.HasPrefix(line[h:], " ")
		switch {
		case level == 0 && isHeading && strings.TrimSpace(line[h:]) == class:
			level = h
		case level > 0 && isHeading && h <= level:
			return strings.Join(out, "")
		}
		if level > 0 {
			out = append(out, line)
		}
	}
	if level == 0 {
		t.Fatalf("%s: no heading \"%s\"", file, class)
	}
	return strings.Join(out, "")
}

// tableRow returns the table row of file that names class in backquotes.
func tableRow(t *testing.T, file, class string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "|") && strings.Contains(line, "`"+class+"`") {
			return line
		}
	}
	t.Fatalf("%s: no table row names `%s`", file, class)
	return ""
}
