package kafkaerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorText(t *testing.T) {
	if got, want := OutOfOrderSequenceNumber.Error(), "OUT_OF_ORDER_SEQUENCE_NUMBER (45)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if got, want := UnknownServerError.Error(), "UNKNOWN_SERVER_ERROR (-1)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestCodesUnique(t *testing.T) {
	all := []*Error{UnknownServerError, OffsetOutOfRange, CorruptMessage, MessageTooLarge, InvalidTimestamp,
		OutOfOrderSequenceNumber, InvalidProducerEpoch, InvalidTxnState, TransactionCoordinatorFenced,
		InvalidRecord, ReadOnlyTopic, NotMirroring, MirrorPartitionFailed, UnmappableProducerID}
	codes, names := map[int16]bool{}, map[string]bool{}
	for _, e := range all {
		if codes[e.Code] || names[e.Name] {
			t.Fatalf("%v: code or name used twice", e)
		}
		codes[e.Code], names[e.Name] = true, true
	}
	if !CorruptMessage.Retriable || InvalidRecord.Retriable {
		t.Fatal("Retriable does not follow Kafka's exception classes")
	}
}

func TestReasonMatchesItsCode(t *testing.T) {
	a := NewReason(UnknownServerError, "a: offsets go backwards")
	b := NewReason(UnknownServerError, "b: unknown codec")
	err := fmt.Errorf("at batch 3: %w", a)
	if !errors.Is(err, a) || !errors.Is(err, UnknownServerError) {
		t.Fatal("a wrapped Reason does not match itself and its code")
	}
	if errors.Is(err, b) || errors.Is(err, InvalidRecord) {
		t.Fatal("a Reason matches another reason or another code")
	}
	var ke *Error
	if !errors.As(err, &ke) || ke != UnknownServerError {
		t.Fatalf("errors.As gives %v", ke)
	}
	if got, want := a.Error(), "a: offsets go backwards: UNKNOWN_SERVER_ERROR (-1)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
