package main

// --memory: the data file read into an Arrow table with arrow-go, to train from memory.

import (
	"bytes"
	encodingcsv "encoding/csv"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"
)

// columnType is the Arrow type of one CSV column, chosen from all its non-empty cells: int64
// when every one is an integer, float64 when every one is a number, date32 for ISO dates
// (2021-01-31), timestamp[us] for ISO date-times (with time zone "UTC" when they carry an
// offset or Z), else utf8. Like the library's CSV reader, booleans stay text.
func columnType(cells []string) arrow.DataType {
	isInt, isFloat, isDate, isTime, zoned := true, true, true, true, false
	for _, v := range cells {
		if v == "" {
			continue
		}
		if isInt {
			_, err := strconv.ParseInt(v, 10, 64)
			isInt = err == nil
		}
		if isFloat {
			_, err := strconv.ParseFloat(v, 64)
			isFloat = err == nil
		}
		if isDate {
			_, err := time.Parse(time.DateOnly, v)
			isDate = err == nil
		}
		if isTime {
			_, hasZone, err := arrow.TimestampFromStringInLocation(v, arrow.Microsecond, time.UTC)
			isTime = err == nil
			zoned = zoned || hasZone
		}
	}
	switch {
	case isInt:
		return arrow.PrimitiveTypes.Int64
	case isFloat:
		return arrow.PrimitiveTypes.Float64
	case isDate:
		return arrow.FixedWidthTypes.Date32
	case isTime && zoned:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case isTime:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	}
	return arrow.BinaryTypes.String
}

// loadTable reads a CSV file (a header line, then rows) into an Arrow table with arrow-go's
// CSV reader, typed by columnType; empty cells are nulls. Its buffers are C memory
// (mallocator), as the library keeps pointers to them while a Data holds them.
func loadTable(path string) (arrow.Table, error) {
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rows, err := encodingcsv.NewReader(bytes.NewReader(content)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	fields := make([]arrow.Field, len(rows[0]))
	cells := make([]string, len(rows)-1)
	for c, name := range rows[0] {
		for r := range cells {
			cells[r] = rows[r+1][c]
		}
		fields[c] = arrow.Field{Name: name, Type: columnType(cells), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	reader := csv.NewReader(bytes.NewReader(content), schema, csv.WithHeader(true),
		csv.WithChunk(1<<16), csv.WithNullReader(true, ""),
		csv.WithAllocator(mallocator.NewMallocator()))
	defer reader.Release()
	var records []arrow.Record
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	for reader.Next() {
		rec := reader.Record()
		rec.Retain()
		records = append(records, rec)
	}
	if err := reader.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return array.NewTableFromRecords(schema, records), nil
}
