package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mirrorpath/mirrorpath/internal/report"
)

// scenarioMatrix runs every *.scn of the catalog through the scenario
// command compiled into this binary (`scenario run --json`), writes its JSON
// lines to scenarios.jsonl and parses the verdict matrix. code is 0 when the
// catalog ran (its expect lines are judged later), 2 when the scenario
// command reported a usage or file error (a file that does not parse), 1
// when it panicked or produced nothing; why says which, in its words.
func (c runConfig) scenarioMatrix(rep *report.Report, stderr io.Writer) (m *report.Matrix, code int, why string) {
	files, err := c.catalog()
	if err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		return nil, 2, err.Error()
	}
	sc, ok := commands["scenario"]
	if !ok {
		rep.Notes = append(rep.Notes, "the scenario command is not built into this binary (cmd/mirrorpath/scenario.go); verdict matrix skipped")
		return nil, 0, ""
	}
	step := progress(stderr, "run", fmt.Sprintf("scenario catalog: %d files × every strategy", len(files)), nil)
	var jsonOut, errOut bytes.Buffer
	sccode, panicked := callCommand(sc, append([]string{"run", "--json"}, files...), &jsonOut, &errOut)
	step(fmt.Sprintf("exit %d", sccode))
	// Paths relative to the module, so that the committed file names no machine.
	rel := bytes.ReplaceAll(jsonOut.Bytes(), []byte(`"file":"`+c.root+string(filepath.Separator)), []byte(`"file":"`))
	// The options each strategy runs under are the same block on every
	// line of a strategy, over half the file, and the report reads none of
	// them (`scenario run --json` prints them; docs/scenarios.md lists them).
	rel = scenarioOptions.ReplaceAll(rel, nil)
	os.WriteFile(filepath.Join(c.out, report.ScenarioFile), rel, 0o644)
	switch {
	case panicked != "":
		why = "scenario run panicked: " + panicked
		rep.Notes = append(rep.Notes, why)
		code = 1
	case sccode == 2:
		why = "scenario run reported a usage or file error: " + firstLines(errOut.String(), 3)
		rep.Notes = append(rep.Notes, why)
		code = 2
	}
	m, err = report.ParseScenarios(&jsonOut)
	if err != nil || len(m.Files) == 0 {
		msg := fmt.Sprintf("scenario run produced no JSON result lines (exit %d): %s", sccode, firstLines(errOut.String(), 3))
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

// callCommand runs a registered command in-process, turning a panic into a message.
func callCommand(c command, args []string, stdout, stderr io.Writer) (code int, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			code, panicked = 1, fmt.Sprint(r)
		}
	}()
	return c.run(args, stdout, stderr), ""
}
