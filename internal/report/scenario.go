package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// scenarioLine is one line of `mirrorpath scenario run --json` output
// (docs/scenarios.md, "Running"): the outcome of one file under one strategy. Fields the
// matrix does not need are not decoded.
type scenarioLine struct {
	File       string `json:"file"`
	Strategy   string `json:"strategy"`
	Violations []struct {
		Code string `json:"code"`
		Step int    `json:"step"`
	} `json:"violations"`
	Expectations []struct {
		Line int  `json:"line"`
		Held bool `json:"held"`
	} `json:"expectations"`
}

// Cell is the verdict of one file under one strategy.
type Cell struct {
	Codes      []string // distinct violation codes, sorted; empty = ok
	Held, Want int      // expectations held / stated
}

// Matrix is the verdict matrix: file × strategy → codes.
type Matrix struct {
	Files      []string
	Strategies []string
	Cells      map[[2]string]*Cell
	// Malformed counts lines that were not valid JSON objects.
	Malformed int
	// shortNames: how the generated paragraphs name each file (shortIDs).
	shortNames map[string]string
}

// ParseScenarios reads JSON lines; blank lines and lines not starting with
// '{' (log output) are skipped, malformed objects are counted.
func ParseScenarios(r io.Reader) (*Matrix, error) {
	m := &Matrix{Cells: map[[2]string]*Cell{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var l scenarioLine
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.File == "" || l.Strategy == "" {
			m.Malformed++
			continue
		}
		if !slices.Contains(m.Files, l.File) {
			m.Files = append(m.Files, l.File)
		}
		if !slices.Contains(m.Strategies, l.Strategy) {
			m.Strategies = append(m.Strategies, l.Strategy)
		}
		c := m.Cells[[2]string{l.File, l.Strategy}]
		if c == nil {
			c = &Cell{}
			m.Cells[[2]string{l.File, l.Strategy}] = c
		}
		for _, v := range l.Violations {
			if v.Code != "" && !slices.Contains(c.Codes, v.Code) {
				c.Codes = append(c.Codes, v.Code)
			}
		}
		sort.Strings(c.Codes)
		for _, e := range l.Expectations {
			c.Want++
			if e.Held {
				c.Held++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("report: scenario output: %w", err)
	}
	sort.Strings(m.Files)
	sort.SliceStable(m.Strategies, func(i, j int) bool { return strategyRank(m.Strategies[i]) < strategyRank(m.Strategies[j]) })
	return m, nil
}

// Unmet returns "file strategy" for each cell with an expectation that did not hold.
func (m *Matrix) Unmet() []string {
	var out []string
	for _, f := range m.Files {
		for _, s := range m.Strategies {
			if c := m.Cells[[2]string{f, s}]; c != nil && c.Held < c.Want {
				out = append(out, f+" "+s)
			}
		}
	}
	return out
}

// String renders a cell: "ok", or the codes joined by '+', with a mark
// when an expectation failed.
func (c *Cell) String() string {
	if c == nil {
		return "-"
	}
	s := "ok"
	if len(c.Codes) > 0 {
		s = strings.Join(c.Codes, "+")
	}
	if c.Held < c.Want {
		s += " ✗"
	}
	return s
}

// ShortenFiles renames every file to its base name when the base names are
// distinct (a catalog passed as absolute paths reads better without them).
func (m *Matrix) ShortenFiles() {
	base := map[string]string{}
	seen := map[string]bool{}
	for _, f := range m.Files {
		b := filepath.Base(f)
		if seen[b] {
			return
		}
		seen[b] = true
		base[f] = b
	}
	cells := map[[2]string]*Cell{}
	for k, c := range m.Cells {
		cells[[2]string{base[k[0]], k[1]}] = c
	}
	m.Cells = cells
	for i, f := range m.Files {
		m.Files[i] = base[f]
	}
	sort.Strings(m.Files)
}
