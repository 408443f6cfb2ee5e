// Hand-written companion of the SWIG-generated tftrain.go in this package: the link flags,
// the exported progress trampoline and the decoding of the wrapper's error panics
// (message.go holds the C helper, as a file with //export may not define C functions).
package swig

/*
#cgo CFLAGS: -I${SRCDIR}/../../../../capi/include -I${SRCDIR}/../../../../build/capi/include
#cgo LDFLAGS: -L${SRCDIR}/../../../../build/lib -Wl,-rpath,${SRCDIR}/../../../../build/lib -ltftrain
#include <stdint.h>
#include <stdlib.h>
#include "tftrain.h"
*/
import "C"

import (
	"math"
	"runtime/cgo"
	"strconv"
	"strings"
	"unsafe"
)

// ProgressData is a copy of a tft_progress record.
type ProgressData struct {
	Kind                int
	Epoch               int64
	Epochs              int64
	Step                int64
	StepsPerEpoch       int64
	TrainLoss           float64
	ValidationLoss      float64
	SamplesPerSecond    float64
	PeakActivationBytes int64
	LearningRate        float64
	Fold                int64
	Folds               int64
}

// ProgressFunc is what a progress cgo.Handle must hold; it returns true to cancel.
type ProgressFunc func(*ProgressData) bool

//export tftgoProgress
func tftgoProgress(p *C.tft_progress, handle C.uintptr_t) C.int {
	if p == nil || handle == 0 {
		return 0
	}
	fn, ok := cgo.Handle(handle).Value().(ProgressFunc)
	if !ok || fn == nil {
		return 0
	}
	// Fields beyond struct_size (an older library) stay at their zero or NaN values.
	size := uintptr(p.struct_size)
	fits := func(offset, width uintptr) bool { return offset+width <= size }
	d := ProgressData{ValidationLoss: math.NaN(), TrainLoss: math.NaN(),
		SamplesPerSecond: math.NaN(), LearningRate: math.NaN()}
	if fits(unsafe.Offsetof(p.kind), unsafe.Sizeof(p.kind)) {
		d.Kind = int(p.kind)
	}
	if fits(unsafe.Offsetof(p.epoch), 8) {
		d.Epoch = int64(p.epoch)
	}
	if fits(unsafe.Offsetof(p.epochs), 8) {
		d.Epochs = int64(p.epochs)
	}
	if fits(unsafe.Offsetof(p.step), 8) {
		d.Step = int64(p.step)
	}
	if fits(unsafe.Offsetof(p.steps_per_epoch), 8) {
		d.StepsPerEpoch = int64(p.steps_per_epoch)
	}
	if fits(unsafe.Offsetof(p.train_loss), 8) {
		d.TrainLoss = float64(p.train_loss)
	}
	if fits(unsafe.Offsetof(p.validation_loss), 8) {
		d.ValidationLoss = float64(p.validation_loss)
	}
	if fits(unsafe.Offsetof(p.samples_per_second), 8) {
		d.SamplesPerSecond = float64(p.samples_per_second)
	}
	if fits(unsafe.Offsetof(p.peak_activation_bytes), 8) {
		d.PeakActivationBytes = int64(p.peak_activation_bytes)
	}
	if fits(unsafe.Offsetof(p.learning_rate), 8) {
		d.LearningRate = float64(p.learning_rate)
	}
	if fits(unsafe.Offsetof(p.fold), 8) {
		d.Fold = int64(p.fold)
	}
	if fits(unsafe.Offsetof(p.folds), 8) {
		d.Folds = int64(p.folds)
	}
	if fn(&d) {
		return 1
	}
	return 0
}

// DecodePanic recognises the wrapper's error panics ("tftrain-status:<status>:<address>"),
// takes over the malloc'd message and returns the status and message; ok is false for any
// other panic value.
func DecodePanic(r any) (status int, message string, ok bool) {
	text, isString := r.(string)
	if !isString {
		return 0, "", false
	}
	var static bool
	switch {
	case strings.HasPrefix(text, "tftrain-status:"):
		text = strings.TrimPrefix(text, "tftrain-status:")
	case strings.HasPrefix(text, "tftrain-static:"):
		text = strings.TrimPrefix(text, "tftrain-static:")
		static = true
	default:
		return 0, "", false
	}
	colon := strings.IndexByte(text, ':')
	if colon < 0 {
		return 0, "", false
	}
	s, err := strconv.Atoi(text[:colon])
	if err != nil {
		return 0, "", false
	}
	if static {
		return s, text[colon+1:], true
	}
	address, err := strconv.ParseUint(text[colon+1:], 16, 64)
	if err != nil {
		return 0, "", false
	}
	if address == 0 {
		return s, "(the error message could not be copied: out of memory)", true
	}
	return s, takeMessage(address), true
}
