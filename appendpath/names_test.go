package appendpath

import (
	"encoding"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// checkNames asserts that the enum's list of values is want, that want[i]
// is spelled names[i] and that each name parses back to its value; an
// unknown name is refused with ErrUnknownName and leaves the value as it was.
func checkNames[T comparable, P interface {
	*T
	encoding.TextUnmarshaler
}](t *testing.T, all, want []T, names ...string) {
	t.Helper()
	if !slices.Equal(all, want) {
		t.Errorf("values %v, want %v", all, want)
	}
	for i, n := range names {
		if s := fmt.Sprint(want[i]); s != n {
			t.Errorf("%v spelled %q, want %q", want[i], s, n)
		}
		var v T
		if err := P(&v).UnmarshalText([]byte(n)); err != nil || v != want[i] {
			t.Errorf("%q parses to %v, %v; want %v", n, v, err, want[i])
		}
	}
	v := want[len(want)-1]
	if err := P(&v).UnmarshalText([]byte("bogus")); !errors.Is(err, ErrUnknownName) || v != want[len(want)-1] {
		t.Errorf("bogus: %v, value %v", err, v)
	}
}

// The names of scenario's options stop-variant, stop-abort-marker,
// unknown-source and stop-errors and of fault at= (docs/scenarios.md) select
// these values; StopSteps lists the steps in the order STOPPING runs them.
func TestNames(t *testing.T) {
	checkNames(t, StopVariants(), []StopVariant{StopAbort, StopTruncate}, "abort", "truncate")
	checkNames(t, AbortMarkers(), []AbortMarker{AbortVersioned, AbortCurrentEpoch, AbortPrototype},
		"versioned", "current-epoch", "prototype")
	checkNames(t, StopSteps(), []StopStep{StepFetcher, StepAbort, StepEpoch, StepMarker, StepPersist, StepBarrier,
		StepAllocator}, "fetcher", "abort", "epoch", "marker", "persist", "barrier", "allocator")
	checkNames(t, unknownSources.Values(), []UnknownSource{SourceWrite, SourceSkip, SourceRetry, SourceFail},
		"write", "skip", "retry", "fail")
	checkNames(t, stepErrors.Values(), []StepErrors{StepErrorsRetry, StepErrorsStuck, StepErrorsFailed},
		"retry", "stuck", "failed")
}
