package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mirrorpath/mirrorpath/conform"
)

func init() {
	register(command{
		name:    "conform",
		summary: "check a broker's produce path against Kafka's producer-state rules, over the wire",
		run:     runConform,
	})
}

const conformUsage = "usage: mirrorpath conform [--broker HOST:PORT] [--timeout D] [--keep-topics] [--json]"

// conformReport is the --json output.
type conformReport struct {
	Broker       string `json:"broker"`
	KfakeVersion string `json:"kfake_version,omitempty"`
	// APIVersions is the ApiVersions version the broker answered, and
	// Versions the version each request the suite sends goes at.
	APIVersions int16 `json:"api_versions_version"`
	// Fallbacks says why each higher ApiVersions version failed.
	Fallbacks []string          `json:"api_versions_fallbacks,omitempty"`
	Versions  map[string]string `json:"versions"`
	Results   []conform.Result  `json:"results"`
	Agree     bool              `json:"agree"`
	// Checked counts the cases that ran (ok or diverges).
	Checked int `json:"checked"`
	// TopicsLeft lists the topics the run created and could not delete.
	TopicsLeft []string `json:"topics_left,omitempty"`
}

// runConform is `mirrorpath conform`: every case of conform.Cases run against
// the broker at --broker, or against franz-go's in-process kfake broker on
// 127.0.0.1 when none is given. Each case creates its own topic.
//
// Exit status: 0 every case that ran agrees with Kafka (the others are
// unsupported); 1 a case diverges; 2 usage, the broker cannot be reached or
// stops answering, or no case could run.
func runConform(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	broker := fs.String("broker", "", "broker to check (`HOST:PORT`); empty starts kfake on 127.0.0.1")
	timeout := durationFlag(fs, "timeout", conform.DefaultRequestTimeout, minConformTimeout, maxConformTimeout, "bound of every request (`D`)")
	asJSON := fs.Bool("json", false, "write the results as JSON")
	keep := fs.Bool("keep-topics", false, "leave each case's topic on the broker (deleted by default)")
	if code, ok := parseFlags(fs, args, stderr, conformUsage); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return usageError(fs, stderr, "unexpected arguments")
	}
	rep := conformReport{Broker: *broker}
	ctx := context.Background()
	var t *conform.Target
	if *broker == "" {
		k, err := conform.StartKfake()
		if err != nil {
			conformError(stderr, err, *timeout)
			return 2
		}
		defer k.Close()
		rep.Broker, rep.KfakeVersion = "kfake "+k.Addr, conform.KfakeVersion()
		if t, err = k.Dial(ctx, *timeout); err != nil {
			conformError(stderr, err, *timeout)
			return 2
		}
	} else {
		if _, port, err := net.SplitHostPort(*broker); err != nil || port == "" {
			return usageError(fs, stderr, fmt.Sprintf("--broker %q: want HOST:PORT", *broker))
		}
		var err error
		if t, err = conform.Dial(ctx, *broker, *timeout); err != nil {
			conformError(stderr, err, *timeout)
			return 2
		}
	}
	defer t.Close()
	t.KeepTopics = *keep
	prefix := "mirrorpath-conform-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	res, err := conform.Run(ctx, t, prefix, nil)
	if err != nil {
		// The broker stopped answering.
		conformError(stderr, err, *timeout)
		return 2
	}
	rep.APIVersions, rep.Fallbacks, rep.Versions = t.APIVersion, t.Fallbacks, t.Sent()
	rep.Results, rep.Agree, rep.TopicsLeft = res, true, t.Left
	for _, r := range res {
		switch r.Verdict {
		case conform.Diverges:
			rep.Agree = false
			rep.Checked++
		case conform.OK:
			rep.Checked++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			conformError(stderr, err, *timeout)
			return 2
		}
	} else {
		writeConformTable(stdout, rep)
	}
	if len(rep.TopicsLeft) > 0 {
		fmt.Fprintf(stderr, "mirrorpath conform: %d topics left on the broker (it has no DeleteTopics, or refused it): %s*\n",
			len(rep.TopicsLeft), prefix)
	}
	switch {
	case rep.Checked == 0:
		fmt.Fprintln(stderr, "mirrorpath conform: no case could run on this broker (each is unsupported, with its reason)")
		return 2
	case !rep.Agree:
		return 1
	}
	return 0
}

// Bounds of conform --timeout: the Kafka client refuses a request timeout
// below 100 ms (franz-go's RequestTimeoutOverhead floor).
const (
	minConformTimeout = 100 * time.Millisecond
	maxConformTimeout = 10 * time.Minute
)

// conformError prints err on one line: a broker that did not answer within
// --timeout is named as a timeout, not as unreachable.
func conformError(stderr io.Writer, err error, timeout time.Duration) {
	msg := strings.TrimPrefix(err.Error(), "conform: ")
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		msg = fmt.Sprintf("timeout: no answer within --timeout %s (%s)", timeout, msg)
	}
	fmt.Fprintf(stderr, "conform: %s\n", msg)
}

func writeConformTable(w io.Writer, rep conformReport) {
	fmt.Fprintf(w, "broker: %s", rep.Broker)
	if rep.KfakeVersion != "" {
		fmt.Fprintf(w, " (%s %s)", conform.KfakeModule, rep.KfakeVersion)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "versions: ApiVersions v%d", rep.APIVersions)
	for _, k := range slices.Sorted(maps.Keys(rep.Versions)) {
		fmt.Fprintf(w, ", %s %s", k, rep.Versions[k])
	}
	fmt.Fprintln(w)
	for _, f := range rep.Fallbacks {
		fmt.Fprintf(w, "  (%s)\n", f)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tKAFKA CLASS\tVERDICT")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Case, r.Class, r.Summary())
	}
	tw.Flush()
	for _, r := range rep.Results {
		if r.Diff == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", r.Case, r.Rule)
		fmt.Fprintf(w, "  step:     %s\n", r.Diff.Step)
		fmt.Fprintf(w, "  kafka:    %s\n", r.Diff.Kafka)
		fmt.Fprintf(w, "  broker:   %s\n", r.Diff.Broker)
		if r.Diff.Request != "" {
			fmt.Fprintf(w, "  request:  %s\n", r.Diff.Request)
		}
		fmt.Fprintf(w, "  response: %s\n", r.Diff.Response)
	}
}
