package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Section names of the marked regions RewriteSections replaces:
// <!-- mirrorpath:NAME:begin --> … <!-- mirrorpath:NAME:end -->. The
// tables live in results/: the benchmark section in benchDoc, the verdicts
// in verdictDoc; the README holds the summary, a few lines that link to
// them.
const (
	SectionBench    = "bench"
	SectionVerdicts = "verdicts"
	sectionSummary  = "summary"
)

// The documents `report --readme` rewrites, relative to the module root,
// and where each generated table lives.
const (
	benchDoc   = "results/benchmarks.md"
	verdictDoc = "results/scenarios.md"
)

// GeneratedDocs are the documents with marked sections, module-relative.
var GeneratedDocs = []string{"README.md", benchDoc, verdictDoc}

// section returns the content of a marked region of the document doc
// (module-relative, e.g. "README.md"); from is the run directory,
// module-relative. Links in it are relative to doc's directory.
func (r *Report) section(name, from, doc string) ([]byte, error) {
	var buf bytes.Buffer
	ew := &errWriter{w: &buf}
	link := func(target string) string {
		rel, err := filepath.Rel(filepath.Dir(filepath.FromSlash(doc)), filepath.FromSlash(target))
		if err != nil {
			return target
		}
		return filepath.ToSlash(rel)
	}
	switch name {
	case SectionBench:
		r.readmeBench(ew, from, link)
	case SectionVerdicts:
		r.readmeVerdicts(ew, from)
	case sectionSummary:
		r.readmeSummary(ew, link)
	default:
		return nil, fmt.Errorf("report: no section %q", name)
	}
	return buf.Bytes(), ew.err
}

func markers(name string) (begin, end string) {
	return "<!-- mirrorpath:" + name + ":begin -->", "<!-- mirrorpath:" + name + ":end -->"
}

// ErrNoSection reports that the document has no marked region of that name.
var ErrNoSection = errors.New("no marked section")

// MarkedSection returns the text between a section's markers (after the
// begin marker's line, up to the end marker).
func MarkedSection(doc []byte, name string) ([]byte, error) {
	start, end, err := sectionBounds(doc, name)
	if err != nil {
		return nil, err
	}
	return doc[start:end], nil
}

// sectionBounds locates the text of a marked section: [start, end).
func sectionBounds(doc []byte, name string) (start, end int, err error) {
	begin, stop := markers(name)
	i := bytes.Index(doc, []byte(begin))
	if i < 0 {
		return 0, 0, fmt.Errorf("report: %w %s", ErrNoSection, begin)
	}
	if bytes.Count(doc, []byte(begin)) > 1 {
		return 0, 0, fmt.Errorf("report: %s appears more than once", begin)
	}
	start = i + len(begin)
	if start < len(doc) && doc[start] == '\n' {
		start++
	}
	j := bytes.Index(doc[start:], []byte(stop))
	if j < 0 {
		return 0, 0, fmt.Errorf("report: %s without %s", begin, stop)
	}
	return start, start + j, nil
}

// replaceSection returns doc with the region between a section's markers
// replaced by content (ended by a newline); the markers stay, so replacing
// again with the same content changes nothing.
func replaceSection(doc []byte, name string, content []byte) ([]byte, error) {
	start, end, err := sectionBounds(doc, name)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), doc[:start]...)
	out = append(out, content...)
	if len(content) > 0 && content[len(content)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, doc[end:]...), nil
}

// RewriteSections replaces every marked section of the document docName
// (module-relative) under root that the report can produce; from names the
// run directory, module-relative, in the generated text. It returns the
// sections it replaced; a file with none is an error.
func (r *Report) RewriteSections(root, docName, from string) ([]string, error) {
	path := filepath.Join(root, filepath.FromSlash(docName))
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, name := range []string{sectionSummary, SectionBench, SectionVerdicts} {
		if _, err := MarkedSection(doc, name); errors.Is(err, ErrNoSection) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		content, err := r.section(name, from, docName)
		if err != nil {
			return nil, err
		}
		if doc, err = replaceSection(doc, name, content); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		done = append(done, name)
	}
	if len(done) == 0 {
		return nil, fmt.Errorf("%s: no <!-- mirrorpath:%s:begin -->, <!-- mirrorpath:%s:begin --> or <!-- mirrorpath:%s:begin --> marker", path, sectionSummary, SectionBench, SectionVerdicts)
	}
	return done, os.WriteFile(path, doc, 0o644)
}
