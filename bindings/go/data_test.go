package tftrain

// Data in memory (issue 29): an arrow-go table with tiny.yaml's rows trains bitwise like the
// file, forecasts like it, and hands its stream over exactly once.

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// tinyCSV is the CSV tiny.yaml trains on.
func tinyCSV() string {
	config := os.Getenv("TFTRAIN_TINY_CONFIG")
	if config == "" {
		config = filepath.Join("..", "..", "examples", "configs", "tiny.yaml")
	}
	return filepath.Join(filepath.Dir(config), "..", "data", "multiseries.csv")
}

// tinySchema types multiseries.csv's columns as pyarrow infers them (csv_to_parquet.py).
var tinySchema = arrow.NewSchema([]arrow.Field{
	{Name: "store", Type: arrow.BinaryTypes.String},
	{Name: "region", Type: arrow.BinaryTypes.String},
	{Name: "store_size", Type: arrow.PrimitiveTypes.Float64},
	{Name: "date", Type: arrow.FixedWidthTypes.Date32},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64},
	{Name: "promo", Type: arrow.PrimitiveTypes.Int64},
	{Name: "footfall", Type: arrow.PrimitiveTypes.Float64},
	{Name: "sales", Type: arrow.PrimitiveTypes.Float64},
}, nil)

// tinyTable reads the CSV into an in-memory table of 1000-row chunks, keeping `columns` (all
// when nil).
func tinyTable(t *testing.T, columns ...string) arrow.Table {
	t.Helper()
	f, err := os.Open(tinyCSV())
	check(t, err)
	defer f.Close()
	r := arrowcsv.NewReader(f, tinySchema, arrowcsv.WithHeader(true), arrowcsv.WithChunk(1000),
		arrowcsv.WithAllocator(memory.DefaultAllocator))
	defer r.Release()
	var records []arrow.Record
	for r.Next() {
		rec := r.Record()
		if columns != nil {
			var cols []arrow.Array
			var fields []arrow.Field
			for _, name := range columns {
				i := rec.Schema().FieldIndices(name)[0]
				cols = append(cols, rec.Column(i))
				fields = append(fields, rec.Schema().Field(i))
			}
			rec = array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		} else {
			rec.Retain()
		}
		records = append(records, rec)
	}
	check(t, r.Err())
	table := array.NewTableFromRecords(records[0].Schema(), records)
	for _, rec := range records {
		rec.Release()
	}
	return table
}

// countingReader counts the Retain and Release calls reaching a RecordReader.
type countingReader struct {
	array.RecordReader
	retains, releases atomic.Int64
}

func (c *countingReader) Retain()  { c.retains.Add(1); c.RecordReader.Retain() }
func (c *countingReader) Release() { c.releases.Add(1); c.RecordReader.Release() }

func TestDataTrainsLikeFile(t *testing.T) {
	train := func(cfg *Config, data *Data) (*TrainReport, *Trainer) {
		defer cfg.Close()
		var trainer *Trainer
		if data == nil {
			trainer = must(NewTrainer(cfg))
		} else {
			trainer = must(NewTrainerFromData(cfg, data))
		}
		return must(trainer.Train()), trainer
	}
	fileCfg := tinyConfig(t)
	fileOut := must(fileCfg.Get("output.directory"))
	fromFile, fileTrainer := train(fileCfg, nil)
	defer fileTrainer.Close()

	table := tinyTable(t)
	defer table.Release()
	data := must(NewDataFromTable(table))
	defer data.Close()
	if n := must(data.NumRows()); n != table.NumRows() || n != 13152 {
		t.Fatalf("NumRows %d, table %d", n, table.NumRows())
	}
	memCfg := tinyConfig(t)
	memOut := must(memCfg.Get("output.directory"))
	// Nothing reads data.path: the rows come from memory.
	check(t, memCfg.Set("data.path", filepath.Join(t.TempDir(), "absent.csv")))
	fromMemory, memTrainer := train(memCfg, data)
	defer memTrainer.Close()
	if math.Float64bits(fromFile.FinalValidationLoss) != math.Float64bits(fromMemory.FinalValidationLoss) ||
		math.Float64bits(fromFile.FinalTrainLoss) != math.Float64bits(fromMemory.FinalTrainLoss) {
		t.Fatalf("file: validation %v train %v; memory: validation %v train %v",
			fromFile.FinalValidationLoss, fromFile.FinalTrainLoss,
			fromMemory.FinalValidationLoss, fromMemory.FinalTrainLoss)
	}
	if parquet := os.Getenv("TFTRAIN_TINY_PARQUET"); parquet != "" {
		cfg := tinyConfig(t)
		check(t, cfg.Set("data.path", parquet))
		fromParquet, trainer := train(cfg, nil)
		trainer.Close()
		if math.Float64bits(fromParquet.FinalValidationLoss) != math.Float64bits(fromMemory.FinalValidationLoss) {
			t.Fatalf("final validation loss: parquet %v, memory %v",
				fromParquet.FinalValidationLoss, fromMemory.FinalValidationLoss)
		}
	}
	fileCSV := must(os.ReadFile(filepath.Join(unquote(fileOut), "forecast.csv")))
	if memCSV := must(os.ReadFile(filepath.Join(unquote(memOut), "forecast.csv"))); !bytes.Equal(fileCSV, memCSV) {
		t.Fatal("forecast.csv differs between the file and the memory runs")
	}

	// The trainer's and a saved model's forecasts of the table, as Arrow records, are
	// forecast.csv's rows.
	preds := must(memTrainer.PredictData(data))
	sameAsCSV(t, preds, fileCSV)
	preds.Close()
	dir := filepath.Join(t.TempDir(), "model")
	check(t, memTrainer.Save(dir))
	model := must(LoadModel(dir))
	defer model.Close()
	preds = must(model.PredictData(data))
	sameAsCSV(t, preds, fileCSV)
	preds.Close()
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// sameAsCSV checks that the forecasts, as Arrow records, hold forecast.csv's rows: the same
// column names in order, and every cell equal (numbers as the float32 the CSV prints).
func sameAsCSV(t *testing.T, preds *Predictions, forecastCSV []byte) {
	t.Helper()
	rows := must(csv.NewReader(bytes.NewReader(forecastCSV)).ReadAll())
	reader := must(preds.Records())
	defer reader.Release()
	check(t, preds.Close()) // the records do not depend on the predictions
	header, n := rows[0], 1
	for reader.Next() {
		rec := reader.Record()
		if int(rec.NumCols()) != len(header) {
			t.Fatalf("%d columns, forecast.csv has %d", rec.NumCols(), len(header))
		}
		for c, name := range header {
			if rec.ColumnName(c) != name {
				t.Fatalf("column %d is %q, forecast.csv's %q", c, rec.ColumnName(c), name)
			}
		}
		for i := 0; i < int(rec.NumRows()); i, n = i+1, n+1 {
			for c := range header {
				got, want := cell(t, rec.Column(c), i), rows[n][c]
				if got != want {
					t.Fatalf("row %d column %q: records %q, forecast.csv %q", n, header[c], got, want)
				}
			}
		}
	}
	check(t, reader.Err())
	if n != len(rows) {
		t.Fatalf("%d forecast rows, forecast.csv has %d", n-1, len(rows)-1)
	}
}

// cell writes one value the way forecast.csv does for the tiny data.
func cell(t *testing.T, a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Date32:
		return a.Value(i).ToTime().Format(time.DateOnly)
	case *array.Float64:
		v := a.Value(i)
		if float64(float32(v)) != v {
			t.Fatalf("%v is not a float32 widened", v)
		}
		return strconv.FormatFloat(v, 'g', -1, 32)
	}
	t.Fatalf("unexpected column type %v", a.DataType())
	return ""
}

func TestDataOwnership(t *testing.T) {
	table := tinyTable(t, "store", "date", "price", "promo", "footfall") // no 'sales'
	defer table.Release()
	reader := &countingReader{RecordReader: array.NewTableReader(table, 500)}
	data := must(NewData(reader))
	if r, l := reader.retains.Load(), reader.releases.Load(); r != 1 || l != 1 {
		t.Fatalf("the stream took %d references and gave back %d; want 1 and 1", r, l)
	}
	reader.Release()
	cfg := tinyConfig(t)
	defer cfg.Close()
	_, err := NewTrainerFromData(cfg, data)
	wantStatus(t, err, StatusData, "'sales'")
	check(t, data.Close())
	if err := data.Close(); err == nil {
		t.Fatal("a second Close succeeded")
	}
	_, err = NewTrainerFromData(cfg, data)
	wantStatus(t, err, StatusInvalidArgument, "Data used after Close")

	// A stream without rows is the library's error; the reader is given back all the same.
	empty := &countingReader{RecordReader: must(array.NewRecordReader(tinySchema, nil))}
	_, err = NewData(empty)
	wantStatus(t, err, StatusData, "")
	if r, l := empty.retains.Load(), empty.releases.Load(); r != 1 || l != 1 {
		t.Fatalf("the empty stream took %d references and gave back %d; want 1 and 1", r, l)
	}
	empty.Release()
}

// failingReader gives the records of its embedded reader, then fails: Next returns false and
// Err returns err, as a reader whose source breaks off does.
type failingReader struct {
	array.RecordReader
	err    error
	failed bool
}

func (f *failingReader) Next() bool {
	if f.RecordReader.Next() {
		return true
	}
	f.failed = true
	return false
}

func (f *failingReader) Err() error {
	if f.failed {
		return f.err
	}
	return f.RecordReader.Err()
}

// tinyRecords reads the first `batches` record batches of `rows` rows of the tiny CSV, with
// memory from mem.
func tinyRecords(t *testing.T, mem memory.Allocator, rows, batches int) []arrow.Record {
	t.Helper()
	f, err := os.Open(tinyCSV())
	check(t, err)
	defer f.Close()
	r := arrowcsv.NewReader(f, tinySchema, arrowcsv.WithHeader(true), arrowcsv.WithChunk(rows),
		arrowcsv.WithAllocator(mem))
	defer r.Release()
	records := []arrow.Record{}
	for len(records) < batches && r.Next() {
		rec := r.Record()
		rec.Retain()
		records = append(records, rec)
	}
	check(t, r.Err())
	if len(records) != batches {
		t.Fatalf("the CSV gave %d batches of %d rows, want %d", len(records), rows, batches)
	}
	return records
}

// A reader that fails after some batches, or before the first, is a Data error carrying the
// reader's own error text (arrow-go's get_last_error) and the row its failing batch began at;
// the stream is given back once, and the library lets go of the batches it had taken (the
// checked allocator ends at zero bytes).
func TestDataReaderFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		batches int
		row     string
	}{
		{"midway", 1, "arrow stream: row 1000: the stream failed: "},
		{"midway after two", 2, "arrow stream: row 2000: the stream failed: "},
		{"at the first batch", 0, "arrow stream: row 0: the stream failed: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			records := tinyRecords(t, mem, 1000, tc.batches)
			inner, err := array.NewRecordReader(tinySchema, records)
			check(t, err)
			for _, rec := range records {
				rec.Release() // the reader holds its own references
			}
			cause := errors.New("sensor feed dropped at batch " + strconv.Itoa(tc.batches+1))
			reader := &countingReader{RecordReader: &failingReader{RecordReader: inner, err: cause}}
			data, err := NewData(reader)
			if data != nil {
				data.Close()
				t.Fatal("NewData succeeded on a failing reader")
			}
			wantStatus(t, err, StatusData, tc.row+cause.Error())
			if !errors.Is(err, ErrData) {
				t.Fatalf("errors.Is(%v, ErrData) is false", err)
			}
			if r, l := reader.retains.Load(), reader.releases.Load(); r != 1 || l != 1 {
				t.Fatalf("the stream took %d references and gave back %d; want 1 and 1", r, l)
			}
			reader.Release()
		})
	}
}
