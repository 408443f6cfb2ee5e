package tftrain

/*
#cgo CFLAGS: -I${SRCDIR}/../../capi/include -I${SRCDIR}/../../build/capi/include
#include <stdlib.h>
#include "tftrain.h"
*/
import "C"

import (
	"errors"
	"io"
	"runtime"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"

	"tftrain/internal/swig"
)

// Data is a table handed to the library in memory (tft_data), laid out like a data file: one
// row per series and time step, the configured columns read with the same types and rules as
// a Parquet file. Close it when done; trainers and predictions made from it do not need it.
//
// Ownership: NewData exports the reader as an Arrow C stream (arrow/cdata) and the library
// reads it whole before NewData returns, then releases the stream, which releases the
// reader's retain. The records' buffers are not copied: the library keeps the exported
// arrays until Close, so they must not be modified until then (arrow-go keeps them alive).
type Data struct {
	raw swig.Data
}

// newStream allocates a zeroed struct ArrowArrayStream in C memory (the cgo pointer rules
// forbid handing the library a Go pointer it keeps); free it with C.free.
func newStream() *C.struct_ArrowArrayStream {
	return (*C.struct_ArrowArrayStream)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ArrowArrayStream{}))))
}

// NewData hands the records of reader to the library (tft_data_create_from_arrow_stream).
// The reader is read to its end; NewData takes its own reference (Retain) and gives it back
// (Release) before returning, in success and failure alike, so the caller still releases its
// own. Errors: ErrData when the reader fails (Next returns false with Err set: the message
// carries the row its failing batch began at and Err's text, which arrow-go hands over as the
// stream's get_last_error) or holds no rows.
func NewData(reader array.RecordReader) (*Data, error) {
	if reader == nil {
		return nil, invalid("reader is nil")
	}
	stream := newStream()
	defer C.free(unsafe.Pointer(stream))
	cdata.ExportRecordReader(reader, (*cdata.CArrowArrayStream)(unsafe.Pointer(stream)))
	var raw swig.Data
	err := call(func() { raw = swig.NewData(uint64(uintptr(unsafe.Pointer(stream)))) })
	if stream.release != nil { // the library takes the stream over in every case
		return nil, &Error{Status: StatusInternal, Message: "the library did not take the stream over"}
	}
	if err != nil {
		return nil, err
	}
	d := &Data{raw: raw}
	runtime.SetFinalizer(d, (*Data).Close)
	return d, nil
}

// NewDataFromTable hands the table's rows to the library, chunk by chunk, as NewData does.
// The table is not released; the library holds its own references to the chunks until Close.
func NewDataFromTable(table arrow.Table) (*Data, error) {
	if table == nil {
		return nil, invalid("table is nil")
	}
	reader := array.NewTableReader(table, -1)
	defer reader.Release()
	return NewData(reader)
}

// Close releases the data (and the library's references to the records); a second Close
// returns an ErrClosed error.
func (d *Data) Close() error {
	if d == nil || d.raw == nil {
		return closedError("Data")
	}
	raw := d.raw
	d.raw = nil
	runtime.SetFinalizer(d, nil)
	swig.DeleteData(raw)
	return nil
}

// NumRows is the number of rows the data holds.
func (d *Data) NumRows() (int64, error) {
	if d == nil || d.raw == nil {
		return 0, closedError("Data")
	}
	defer runtime.KeepAlive(d)
	var n int64
	err := call(func() { n = d.raw.GetNumRows() })
	return n, err
}

func openData(d *Data) (swig.Data, error) {
	if d == nil || d.raw == nil {
		return nil, closedError("Data")
	}
	return d.raw, nil
}

// NewTrainerFromData builds a trainer whose data comes from data instead of data.path
// (tft_trainer_create_from_data); cfg is copied and data is only read during the call.
// A configured column the data lacks, or of a type the library does not take, is an ErrData
// error ("arrow stream: ... column 'sales' ...").
func NewTrainerFromData(cfg *Config, data *Data) (*Trainer, error) {
	if cfg == nil || cfg.raw == nil {
		return nil, closedError("Config")
	}
	rawData, err := openData(data)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(cfg)
	defer runtime.KeepAlive(data)
	var raw swig.Trainer
	if err := call(func() { raw = swig.TrainerCreateFromData(cfg.raw, rawData) }); err != nil {
		return nil, err
	}
	t := &Trainer{raw: raw}
	runtime.SetFinalizer(t, (*Trainer).Close)
	return t, nil
}

// PredictData forecasts data (laid out like the training data) with the current weights.
func (t *Trainer) PredictData(data *Data) (*Predictions, error) {
	rawData, err := openData(data)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(data)
	var raw swig.Predictions
	if err := t.do(func(r swig.Trainer) { raw = r.PredictData(rawData) }); err != nil {
		return nil, err
	}
	return wrapPredictions(raw), nil
}

// PredictData forecasts data laid out like the training data.
func (m *Model) PredictData(data *Data) (*Predictions, error) {
	if m == nil || m.raw == nil {
		return nil, closedError("Model")
	}
	rawData, err := openData(data)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(m)
	defer runtime.KeepAlive(data)
	var raw swig.Predictions
	if err := call(func() { raw = m.raw.PredictData(rawData) }); err != nil {
		return nil, err
	}
	return wrapPredictions(raw), nil
}

// Records returns the forecasts as Arrow records (tft_predictions_to_arrow_stream), with
// forecast.csv's columns, typed: kind and the series columns utf8, origin and time int64,
// date32 or timestamp[us], horizon int64, one float64 column per quantile (q0.1, ...) and
// actual (float64, null where unknown). The records are imported from the library's C stream
// with arrow/cdata and do not depend on p (which may be closed first); the caller releases
// the reader. Their memory is the library's, given back when the records are released and
// garbage collected (arrow-go's importer).
func (p *Predictions) Records() (array.RecordReader, error) {
	stream := newStream()
	defer C.free(unsafe.Pointer(stream))
	address := uint64(uintptr(unsafe.Pointer(stream)))
	if err := p.do(func(r swig.Predictions) { r.ToArrowStream(address) }); err != nil {
		return nil, err
	}
	// The importer moves the stream into its own memory: stream may be freed after this.
	imported, err := cdata.ImportCRecordReader((*cdata.CArrowArrayStream)(unsafe.Pointer(stream)), nil)
	if err != nil {
		return nil, &Error{Status: StatusInternal, Message: "importing the forecast stream: " + err.Error()}
	}
	var records []arrow.Record
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	var schema *arrow.Schema
	for {
		rec, err := imported.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{Status: StatusInternal, Message: "reading the forecast stream: " + err.Error()}
		}
		rec.Retain()
		records = append(records, rec)
		schema = rec.Schema()
	}
	if schema == nil {
		return nil, &Error{Status: StatusInternal, Message: "the forecast stream has no records"}
	}
	return array.NewRecordReader(schema, records)
}
