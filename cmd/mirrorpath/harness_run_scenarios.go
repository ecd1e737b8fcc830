package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/report"
	"github.com/mirrorpath/mirrorpath/scenario"
)

// catalogRunner runs scenario files under every strategy the simulator
// knows and writes one JSON line per (file, strategy) to w, as `scenario
// run --json` prints them. An error is a file that does not parse or that
// the simulator refuses to run, in package scenario's words. runCatalog is
// the one `run` uses; tests hand run their own.
type catalogRunner func(files []string, w io.Writer) error

// runCatalog is the catalogRunner of `mirrorpath run`: package scenario
// called directly, every file parsed before any runs.
func runCatalog(files []string, w io.Writer) error {
	scripts, err := parseScripts(files)
	if err != nil {
		return err
	}
	for _, s := range scripts {
		results, err := scenario.Run(s, nil)
		if err != nil {
			return err
		}
		if err := scenario.WriteJSON(w, results); err != nil {
			return err
		}
	}
	return nil
}

// scenarioMatrix runs every *.scn of the catalog through c.runCatalog,
// writes its JSON lines to scenarios.jsonl and parses the verdict matrix.
// code is 0 when the catalog ran (its expect lines are judged later), 2
// when a file does not parse or the simulator refused it, 1 when the
// simulator panicked or produced nothing; why says which, in its words.
func (c runConfig) scenarioMatrix(rep *report.Report, stderr io.Writer) (m *report.Matrix, code int, why string) {
	files, err := c.catalog()
	if err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		return nil, 2, err.Error()
	}
	step := progress(stderr, "run", fmt.Sprintf("scenario catalog: %d files × every strategy", len(files)), nil)
	var jsonOut bytes.Buffer
	panicked, err := callCatalog(c.runCatalog, files, &jsonOut)
	prefix := c.root + string(filepath.Separator)
	switch {
	case panicked != "":
		step("panicked")
		why = "scenario run panicked: " + panicked
		rep.Notes = append(rep.Notes, why)
		code = 1
	case err != nil:
		step("a file error")
		why = strings.ReplaceAll(firstLines(err.Error(), 3), prefix, "")
		rep.Notes = append(rep.Notes, why)
		code = 2
	default:
		step("done")
	}
	// Paths relative to the module, so that the committed file names no machine.
	rel := bytes.ReplaceAll(jsonOut.Bytes(), []byte(`"file":"`+prefix), []byte(`"file":"`))
	// The options each strategy runs under are the same block on every
	// line of a strategy, over half the file, and the report reads none of
	// them (`scenario run --json` prints them; docs/scenarios.md lists them).
	rel = scenarioOptions.ReplaceAll(rel, nil)
	os.WriteFile(filepath.Join(c.out, report.ScenarioFile), rel, 0o644)
	m, err = report.ParseScenarios(&jsonOut)
	if err != nil || len(m.Files) == 0 {
		msg := "the scenario catalog produced no JSON result lines"
		rep.Notes = append(rep.Notes, msg)
		if code == 0 {
			code, why = 1, msg
		}
		return nil, code, why
	}
	m.ShortenFiles()
	if m.Malformed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d malformed JSON lines in the scenario output were skipped", m.Malformed))
	}
	return m, code, why
}

// scenarioOptions matches the "options" object of a `scenario run --json`
// line: a flat object of strings, so no brace inside it.
var scenarioOptions = regexp.MustCompile(`"options":\{[^{}]*\},?`)

// callCatalog runs the catalog, turning a panic into a message.
func callCatalog(run catalogRunner, files []string, w io.Writer) (panicked string, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked, err = fmt.Sprint(r), nil
		}
	}()
	return "", run(files, w)
}
