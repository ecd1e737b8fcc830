package appendpath

import (
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
)

// Every error that reaches the wire as UNKNOWN_SERVER_ERROR matches the one
// kafkaerr value, and no reason matches another.
func TestErrorsMatchTheirWireCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		code *kafkaerr.Error
	}{
		{ErrOffsetsOutOfOrder, kafkaerr.UnknownServerError},
		{&RecordError{Err: kafkaerr.UnknownServerError, Reason: ErrUnsupportedCompression}, kafkaerr.UnknownServerError},
		{&BatchError{Index: 1, Err: ErrOffsetsOutOfOrder}, kafkaerr.UnknownServerError},
		{pid.ErrUnmappable, kafkaerr.UnmappableProducerID},
		{&BatchError{Err: pid.ErrUnmappable}, kafkaerr.UnmappableProducerID},
	} {
		if !errors.Is(c.err, c.code) {
			t.Errorf("%v does not match %v", c.err, c.code)
		}
	}
	if errors.Is(ErrOffsetsOutOfOrder, pid.ErrUnmappable) {
		t.Error("a reason matches another reason")
	}
	// The other direction on purpose: the bare wire code is not the reason
	// that wraps it.
	//lint:ignore SA1032 the code is the error and the reason the target, as meant
	if errors.Is(kafkaerr.UnknownServerError, ErrOffsetsOutOfOrder) {
		t.Error("the wire code matches a reason that wraps it")
	}
	if got, want := (&BatchError{Index: 2, Pos: 61, Err: kafkaerr.ReadOnlyTopic}).Error(), "READ_ONLY_TOPIC (1001) at batch 2 (byte 61)"; got != want {
		t.Errorf("BatchError text %q, want %q", got, want)
	}
}
