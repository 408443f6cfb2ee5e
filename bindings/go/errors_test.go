package tftrain

import (
	"errors"
	"testing"
)

// TFT_ERROR_OUT_OF_MEMORY is matched by errors.Is(err, ErrOutOfMemory), whatever the message,
// and by nothing else; Go has no error type of its own for a failed allocation.
func TestOutOfMemoryMatchesItsSentinel(t *testing.T) {
	err := error(&Error{Status: StatusOutOfMemory, Message: "out of memory while training"})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("errors.Is(%v, ErrOutOfMemory) = false", err)
	}
	if errors.Is(err, ErrInternal) || errors.Is(err, ErrClosed) {
		t.Fatalf("%v matches another sentinel", err)
	}
	var typed *Error
	if !errors.As(err, &typed) || typed.Status != StatusOutOfMemory {
		t.Fatalf("errors.As: %v", err)
	}
	if got := err.Error(); got != "tftrain: ERROR_OUT_OF_MEMORY: out of memory while training" {
		t.Fatalf("Error() = %q", got)
	}
}
