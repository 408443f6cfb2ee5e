// Package tftrain trains Temporal Fusion Transformers with gradient checkpointing through
// the tftrain C library (capi/include/tftrain.h), by way of the SWIG interface
// bindings/swig/tftrain.i.
//
// Every fallible call returns an error; failures of the library are *Error values carrying
// the C status and the library's message (errors.Is(err, tftrain.ErrConfig) tests the
// category). Objects hold native memory: Close them when done (a finalizer is only a safety
// net). An object must not be used from two goroutines at once, except Trainer.Cancel.
package tftrain

import (
	"errors"
	"fmt"
	"strings"

	"tftrain/internal/swig"
)

// Status is the C API's tft_status.
type Status int

// The statuses of the C API.
const (
	StatusOK              Status = 0
	StatusInvalidArgument Status = -1
	StatusConfig          Status = -2
	StatusData            Status = -3
	StatusIO              Status = -4
	StatusNumerical       Status = -5
	StatusCancelled       Status = -6
	StatusUnsupported     Status = -7
	StatusInternal        Status = -8
	StatusBufferTooSmall  Status = -9
	StatusOutOfMemory     Status = -10
)

// String is the library's name of the status, e.g. "ERROR_CONFIG".
func (s Status) String() string { return swig.StatusName(int(s)) }

// Error is a failure reported by the library (or by this package for misuse).
type Error struct {
	Status  Status
	Message string
	closed  bool
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "tftrain: " + e.Status.String()
	}
	return "tftrain: " + e.Status.String() + ": " + e.Message
}

// Is matches the category sentinels (ErrConfig, ...) by status, and ErrClosed.
func (e *Error) Is(target error) bool {
	if target == ErrClosed {
		return e.closed
	}
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Status == e.Status
}

// Sentinels for errors.Is.
var (
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	ErrConfig          = &Error{Status: StatusConfig}
	ErrData            = &Error{Status: StatusData}
	ErrIO              = &Error{Status: StatusIO}
	ErrNumerical       = &Error{Status: StatusNumerical}
	ErrCancelled       = &Error{Status: StatusCancelled}
	ErrUnsupported     = &Error{Status: StatusUnsupported}
	ErrInternal        = &Error{Status: StatusInternal}
	ErrBufferTooSmall  = &Error{Status: StatusBufferTooSmall}
	ErrOutOfMemory     = &Error{Status: StatusOutOfMemory}
	// ErrClosed: the object was used after Close (its status is StatusInvalidArgument).
	ErrClosed = errors.New("tftrain: object used after Close")
)

func closedError(what string) error {
	return &Error{Status: StatusInvalidArgument, Message: what + " used after Close", closed: true}
}

func invalid(format string, args ...any) error {
	return &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// call runs f (SWIG wrapper calls) and turns the wrapper's panics into errors.
func call(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if status, message, ok := swig.DecodePanic(r); ok {
				err = &Error{Status: Status(status), Message: message}
			} else {
				err = &Error{Status: StatusInternal, Message: fmt.Sprint(r)}
			}
		}
	}()
	f()
	return nil
}

// Version is the library's version, "MAJOR.MINOR.PATCH".
func Version() string { return swig.VersionString() }

// APIVersion is the library's tft_api_version(): MAJOR*10000 + MINOR*100 + PATCH, to compare
// with the TFT_API_VERSION of the header this binding was built against.
func APIVersion() int { return swig.ApiVersion() }

// VersionNumbers is the library's version as numbers.
func VersionNumbers() (major, minor, patch int) {
	return swig.VersionMajor(), swig.VersionMinor(), swig.VersionPatch()
}

// text rejects strings the C API would see cut short at an embedded NUL byte.
func text(name string, values ...string) error {
	for _, v := range values {
		if strings.IndexByte(v, 0) >= 0 {
			return invalid("%s contains a NUL byte", name)
		}
	}
	return nil
}

func count(name string, n int) (uint64, error) {
	if n < 0 {
		return 0, invalid("%s must not be negative (got %d)", name, n)
	}
	return uint64(n), nil
}
