package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mirrorpath/mirrorpath/scenario"
)

func init() {
	register(command{name: "scenario", summary: "run scenario files under every strategy and check their expectations",
		run: runScenario})
}

var scenarioUsage = "usage: mirrorpath scenario run [--strategy NAME|all] [--json] [options] FILE...\n\n" +
	fmt.Sprintf("Limits of a FILE (docs/scenarios.md): at most %d bytes, read line by line; a line at most %d bytes;\n", scenario.MaxFileBytes, scenario.MaxLineBytes) +
	fmt.Sprintf("one send's batch at most %d bytes (Kafka's message.max.bytes); the batches of all sends times the\n", scenario.MaxBatchBytes) +
	fmt.Sprintf("replicas of all clusters at most %d bytes. A file over a limit fails at that line (exit 2).", scenario.MaxRunBytes)

// runScenario is `mirrorpath scenario run`. Exit status: 0 when every expect
// line holds, 1 when one does not, 2 on a usage or file error (including a
// syntax or reference error in a file, printed as file:line: message).
func runScenario(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "run" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(stderr, scenarioUsage)
			return 0
		}
		fmt.Fprintln(stderr, scenarioUsage)
		return 2
	}
	fs := flag.NewFlagSet("scenario run", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print one JSON object per (file, strategy)")
	vals := map[string]*string{}
	for _, o := range scenario.OptionSpecs {
		vals[o.Name] = fs.String(o.Name, "", o.Summary+": "+strings.Join(o.Values, "|")+
			" (default "+o.Values[0]+", or the file's set line)")
	}
	if code, ok := parseFlags(fs, args[1:], stderr, scenarioUsage); !ok {
		return code
	}
	flags := map[string]string{}
	for name, v := range vals {
		if *v == "" {
			continue
		}
		probe := scenario.DefaultOptions()
		if err := probe.Set(name, *v); err != nil {
			fmt.Fprintf(stderr, "scenario run: --%s: %v\n", name, err)
			return 2
		}
		flags[name] = *v
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "scenario run: no scenario files")
		fs.Usage()
		return 2
	}
	scripts, err := parseScripts(fs.Args())
	var perr *scenario.Error
	switch {
	case errors.As(err, &perr):
		fmt.Fprintln(stderr, err) // file:line: message
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "scenario run: %v\n", err)
		return 2
	}
	status := 0
	for i, s := range scripts {
		results, err := scenario.Run(s, flags)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		if *jsonOut {
			err = scenario.WriteJSON(stdout, results)
		} else {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			err = scenario.WriteText(stdout, results)
		}
		if err != nil {
			fmt.Fprintf(stderr, "scenario run: %v\n", err)
			return 2
		}
		for j := range results {
			if !results[j].Held() {
				status = 1
			}
		}
	}
	return status
}

// parseScripts parses the scenario files in order and stops at the first
// that fails, with package scenario's error (a *scenario.Error, file:line:
// message, for a syntax or reference error).
func parseScripts(files []string) ([]*scenario.Script, error) {
	var scripts []*scenario.Script
	for _, file := range files {
		s, err := scenario.ParseFile(file)
		if err != nil {
			return nil, err
		}
		scripts = append(scripts, s)
	}
	return scripts, nil
}
