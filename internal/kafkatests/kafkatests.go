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
	"maps"
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
	// class: the Go test for method m is Prefix+m. Unused when Ported is
	// set.
	Prefix string
	// Ported, when not nil, names the ported methods instead of Prefix, for
	// a port whose tests are table entries (subtests) rather than top-level
	// funcs: each key says where a table is declared, its value the method
	// names of the table's entries. A method may be ported in more than one
	// table, never twice in one.
	Ported map[string][]string
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
// Prefix+method is declared in a _test.go file of the current directory, or
// the method is named in s.Ported) or in s.NotApplicable with a reason,
// never both; every ported name is a listed method; and the documents state
// the figures computed here. It returns the number of methods that apply and the number
// listed.
func Check(t *testing.T, s Suite) (apply, total int) {
	t.Helper()
	methods, commit := readList(t, s.List)
	var declared map[string]string // method -> where it is ported
	if s.Ported != nil {
		declared = tableNames(t, s.Ported)
	} else {
		declared = testFuncs(t, s.Prefix)
	}
	for _, m := range methods {
		reason, na := s.NotApplicable[m]
		where, ported := declared[m]
		switch {
		case ported && na:
			t.Errorf("%s#%s is both ported (%s) and listed as not applicable", s.Class, m, where)
		case ported:
			apply++
		case na && strings.TrimSpace(reason) == "":
			t.Errorf("%s#%s is not applicable without a reason", s.Class, m)
		case !na:
			t.Errorf("%s#%s is neither ported (%s) nor listed as not applicable", s.Class, m, s.missing(m))
		}
	}
	for m, where := range declared {
		if !slices.Contains(methods, m) {
			t.Errorf("%s ports no method listed in %s", where, s.List)
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
			if !statesFigure(sec, want) {
				t.Errorf("%s: the %s section does not state %q", f, s.Class, want)
			}
		}
		for m := range s.NotApplicable {
			if !strings.Contains(sec, "`"+m+"`") {
				t.Errorf("%s: the %s section does not list not-applicable method `%s`", f, s.Class, m)
			}
		}
	}
	for _, f := range s.Rows {
		row := tableRow(t, f, s.Class)
		for _, want := range []string{figure, commit} {
			if !statesFigure(row, want) {
				t.Errorf("%s: the %s row does not state %q", f, s.Class, want)
			}
		}
	}
	return apply, total
}

// missing says where the port of method m was looked for.
func (s Suite) missing(m string) string {
	if s.Ported == nil {
		return "no func " + s.Prefix + m
	}
	return "in none of the tables"
}

// statesFigure reports whether text holds want as a whole figure: not
// preceded or followed by another digit, so that "1 of 2" is not read in
// "11 of 22" or "1 of 20".
func statesFigure(text, want string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], want)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(want)
		if (start == 0 || !isDigit(text[start-1])) && (end == len(text) || !isDigit(text[end])) {
			return true
		}
		i = start + 1
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// tableNames merges the tables of Suite.Ported into method -> where it is
// ported ("m in table1 and table2"), failing t on a method named twice in
// one table.
func tableNames(t *testing.T, tables map[string][]string) map[string]string {
	t.Helper()
	in := map[string][]string{}
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		seen := map[string]bool{}
		for _, m := range tables[table] {
			if seen[m] {
				t.Errorf("%s: %s ported twice", table, m)
				continue
			}
			seen[m] = true
			in[m] = append(in[m], table)
		}
	}
	out := make(map[string]string, len(in))
	for m, ts := range in {
		out[m] = m + " in " + strings.Join(ts, " and ")
	}
	return out
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
// of top-level functions prefix+method declared in its _test.go files, each
// with the func's name.
func testFuncs(t *testing.T, prefix string) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
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
				out[m] = fd.Name.Name
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
