package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrScenario reports a file that parses but asks the simulator for
// something it cannot do (a mirror of a STOPPING partition); runStrategy wraps it with
// file:line.
var ErrScenario = errors.New("scenario: cannot run")

// ErrNotWired reports that no broker implementation is bound to the
// simulator (see wire.go).
var ErrNotWired = errors.New("scenario: no broker implementation wired")

// ExpectResult is the outcome of one expect line.
type ExpectResult struct {
	Line     int      `json:"line"`
	Strategy string   `json:"strategy"`
	Want     []string `json:"want"`
	Got      []string `json:"got"`
	Held     bool     `json:"held"`
}

// Result is one run of one file under one strategy; its JSON form is the
// object of docs/scenarios.md, "Running".
type Result struct {
	File         string            `json:"file"`
	Strategy     string            `json:"strategy"`
	Options      map[string]string `json:"options"`
	Violations   []Violation       `json:"violations"`
	ClientErrors []ClientError     `json:"client_errors"`
	Expectations []ExpectResult    `json:"expectations"`
}

// Codes returns the distinct codes of r's violations in Codes order.
func (r *Result) Codes() []Code {
	var cs []Code
	for _, v := range r.Violations {
		cs = append(cs, v.Code)
	}
	return sortedCodes(cs)
}

// Held reports whether every expectation of r held.
func (r *Result) Held() bool {
	for _, e := range r.Expectations {
		if !e.Held {
			return false
		}
	}
	return true
}

// FirstStep returns the first step at which code appeared, or 0.
func (r *Result) FirstStep(code Code) int {
	first := 0
	for _, v := range r.Violations {
		if v.Code == code && (first == 0 || v.Step < first) {
			first = v.Step
		}
	}
	return first
}

// resolveOptions returns the options of a run: defaults, then the file's set lines,
// then flags (the command line wins).
func resolveOptions(s *Script, flags map[string]string) (Options, error) {
	o := DefaultOptions()
	for _, src := range []map[string]string{s.Settings(), flags} {
		keys := make([]string, 0, len(src))
		for k := range src {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := o.Set(k, src[k]); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// Run runs s under every strategy its options select (flags override the
// file's set lines) and returns one Result per strategy. An error means the
// run could not complete (a broker package failed, or none is wired); the
// findings of the oracle are in the Results. Cost: one fresh in-memory world
// per strategy, linear in the data the file sends times the steps that read
// it back. s is only read: Runs of one Script may proceed concurrently.
func Run(s *Script, flags map[string]string) ([]Result, error) {
	opts, err := resolveOptions(s, flags)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, st := range opts.Strategies() {
		r, err := runStrategy(s, st, opts)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// runStrategy runs s once under strategy st on a fresh world. Deterministic:
// the same s, st and opts give the same Result. Safe for concurrent use.
func runStrategy(s *Script, st string, opts Options) (res Result, err error) {
	if openReplica == nil {
		return Result{}, ErrNotWired
	}
	w := newWorld(st, opts)
	for i := range s.commands {
		c := &s.commands[i]
		if err := w.exec(c); err != nil {
			return Result{}, fmt.Errorf("%s:%d: %s: %w", s.File, c.Line, c.opcode, err)
		}
		w.or.afterStep()
	}
	w.or.finish()
	res = Result{File: s.File, Strategy: st, Options: opts.For(st), Violations: w.or.violations,
		ClientErrors: w.or.clientErrors}
	if res.Violations == nil {
		res.Violations = []Violation{}
	}
	if res.ClientErrors == nil {
		res.ClientErrors = []ClientError{}
	}
	codes := res.Codes()
	got := []string{}
	for _, c := range codes {
		got = append(got, string(c))
	}
	res.Expectations = []ExpectResult{}
	for _, e := range s.Expects() {
		if e.Strategy != st {
			continue
		}
		want := []string{"ok"}
		if len(e.Codes) > 0 {
			want = want[:0]
			for _, c := range e.Codes {
				want = append(want, string(c))
			}
		}
		res.Expectations = append(res.Expectations, ExpectResult{Line: e.Line, Strategy: st, Want: want, Got: got,
			Held: slices.Equal(e.Codes, codes)})
	}
	return res, nil
}

// WriteJSON writes one JSON object per result, one per line, in the form of
// docs/scenarios.md, "Running".
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	for i := range results {
		if err := enc.Encode(&results[i]); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes the matrix of one file: a row per strategy, a column per
// code seen under any strategy holding the first step at which it appeared,
// and the expectation verdict.
func WriteText(w io.Writer, results []Result) error {
	if len(results) == 0 {
		return nil
	}
	var all []Code
	for i := range results {
		all = append(all, results[i].Codes()...)
	}
	cols := sortedCodes(all)
	header := []string{"strategy"}
	for _, c := range cols {
		header = append(header, string(c))
	}
	rows := [][]string{append(header, "expect")}
	for i := range results {
		r := &results[i]
		row := []string{r.Strategy}
		for _, c := range cols {
			cell := "-"
			if s := r.FirstStep(c); s > 0 {
				cell = strconv.Itoa(s)
			}
			row = append(row, cell)
		}
		row = append(row, expectCell(r))
		rows = append(rows, row)
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for j, c := range row {
			width[j] = max(width[j], len(c))
		}
	}
	var b strings.Builder
	b.WriteString(results[0].File)
	b.WriteString("  options: " + optionLine(results))
	b.WriteByte('\n')
	for _, row := range rows {
		for j, c := range row {
			if j > 0 {
				b.WriteString("  ")
			}
			if j == len(row)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + strings.Repeat(" ", width[j]-len(c)))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func expectCell(r *Result) string {
	if len(r.Expectations) == 0 {
		if len(r.Violations) == 0 {
			return "ok (no expectation)"
		}
		return "(no expectation)"
	}
	for _, e := range r.Expectations {
		if !e.Held {
			return fmt.Sprintf("FAILED line %d: want %s, got %s", e.Line, strings.Join(e.Want, ","),
				orOK(e.Got))
		}
	}
	return "held: " + orOK(r.Expectations[0].Got)
}

func orOK(codes []string) string {
	if len(codes) == 0 {
		return "ok"
	}
	return strings.Join(codes, ",")
}

// optionLine names every option in force under any of the results, in
// OptionSpecs order.
func optionLine(results []Result) string {
	var parts []string
	for _, spec := range OptionSpecs {
		for i := range results {
			if v, ok := results[i].Options[spec.Name]; ok {
				parts = append(parts, spec.Name+"="+v)
				break
			}
		}
	}
	return strings.Join(parts, " ")
}
