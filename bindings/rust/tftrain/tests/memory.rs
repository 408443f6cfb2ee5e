//! Data in memory (Data, the Arrow C stream interface): tiny.yaml's CSV built as an arrow-rs
//! table trains bitwise like the file and forecasts what the file run's forecast.csv holds;
//! forecasts come back as typed record batches; bad input is an Err with the library's or the
//! reader's message, and the stream (the reader) is released exactly once.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tftrain::arrow_array::ffi_stream::FFI_ArrowArrayStream;
use tftrain::arrow_array::{
    Array, ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch, RecordBatchIterator,
    RecordBatchReader, StringArray,
};
use tftrain::arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use tftrain::{Config, Data, Model, Status, Trainer};

mod common;
use common::{assert_error, tiny, TempDir};

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i32 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146097 + doe - 719468) as i32
}

fn date32(text: &str) -> i32 {
    let parts: Vec<i64> = text.split('-').map(|p| p.parse().unwrap()).collect();
    days_from_civil(parts[0], parts[1], parts[2])
}

/// The data file of a config (data.path as the library resolved it).
fn data_path(config: &Config) -> PathBuf {
    let text = config.get("data.path").unwrap();
    PathBuf::from(text.trim_matches(|c| c == '"' || c == '\''))
}

/// multiseries.csv as arrow-rs arrays, typed as a dataframe would hold it: the store and
/// region strings, the date a date32, promo an int64 (a categorical stored as integers), the
/// rest float64; cut into record batches of uneven sizes.
fn table(csv: &Path) -> (SchemaRef, Vec<RecordBatch>) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (i, name) in header.iter().enumerate() {
        let cells = rows.iter().map(|r| r[i]);
        let (kind, column): (DataType, ArrayRef) = match *name {
            "store" | "region" => (
                DataType::Utf8,
                Arc::new(StringArray::from_iter_values(cells)),
            ),
            "date" => (
                DataType::Date32,
                Arc::new(Date32Array::from_iter_values(cells.map(date32))),
            ),
            "promo" => (
                DataType::Int64,
                Arc::new(Int64Array::from_iter_values(
                    cells.map(|c| c.parse::<i64>().unwrap()),
                )),
            ),
            _ => (
                DataType::Float64,
                Arc::new(Float64Array::from_iter_values(
                    cells.map(|c| c.parse::<f64>().unwrap()),
                )),
            ),
        };
        fields.push(Field::new(*name, kind, false));
        columns.push(column);
    }
    let schema = Arc::new(Schema::new(fields));
    let whole = RecordBatch::try_new(Arc::clone(&schema), columns).unwrap();
    let n = whole.num_rows();
    let mut batches = Vec::new();
    let mut start = 0;
    for size in [100, 37, 1, 500].iter().cycle() {
        if start >= n {
            break;
        }
        let len = (*size).min(n - start);
        batches.push(whole.slice(start, len));
        start += len;
    }
    assert!(batches.len() > 4);
    (schema, batches)
}

/// A reader over batches (or errors) that counts how often it is dropped: the C stream's
/// release drops it.
struct Counted {
    schema: SchemaRef,
    items: std::vec::IntoIter<Result<RecordBatch, ArrowError>>,
    drops: Arc<AtomicUsize>,
}

impl Iterator for Counted {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.items.next()
    }
}

impl RecordBatchReader for Counted {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn counted(
    schema: SchemaRef,
    items: Vec<Result<RecordBatch, ArrowError>>,
) -> (Counted, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let reader = Counted {
        schema,
        items: items.into_iter(),
        drops: Arc::clone(&drops),
    };
    (reader, drops)
}

fn tiny_data(config: &Config) -> Data {
    let (schema, batches) = table(&data_path(config));
    let (reader, drops) = counted(schema, batches.into_iter().map(Ok).collect());
    let data = Data::from_reader(reader).unwrap();
    // Moved into the library and released (the reader dropped) before from_reader returned.
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    data
}

/// Builds without Arrow C++ (TFT_WITH_PARQUET off) have the functions, which say UNSUPPORTED.
fn library_reads_arrow() -> bool {
    let schema = Arc::new(Schema::new(vec![Field::new("t", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(Int64Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    match Data::from_reader(RecordBatchIterator::new(vec![Ok(batch)], schema)) {
        Err(e) if e.status() == Status::Unsupported => {
            eprintln!("skipped: the library is built without Arrow ({e})");
            false
        }
        result => {
            result.unwrap();
            true
        }
    }
}

/// tiny.yaml (output in a temporary folder) and its data as record batches; None (the test
/// skips) in a build without Arrow.
fn tiny_table() -> Option<(TempDir, Config, SchemaRef, Vec<RecordBatch>)> {
    if !library_reads_arrow() {
        return None;
    }
    let dir = TempDir::new();
    let config = tiny(&dir);
    let (schema, batches) = table(&data_path(&config));
    Some((dir, config, schema, batches))
}

/// A batch's column as its array type.
fn column<T: Array + Clone + 'static>(batch: &RecordBatch, c: usize) -> T {
    let array = batch.column(c).as_any().downcast_ref::<T>();
    array
        .unwrap_or_else(|| panic!("column {c}: {:?}", batch.column(c).data_type()))
        .clone()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn stream_structs_have_arrow_rs_layout() {
    assert_eq!(
        std::mem::size_of::<FFI_ArrowArrayStream>(),
        std::mem::size_of::<tftrain::sys::ArrowArrayStream>()
    );
    assert_eq!(
        std::mem::align_of::<FFI_ArrowArrayStream>(),
        std::mem::align_of::<tftrain::sys::ArrowArrayStream>()
    );
}

/// Training from the table ends bitwise like training from the CSV; its forecasts (of the
/// run, of predict_data, of the saved model) are the file run's forecast.csv, byte for byte.
#[test]
fn trains_from_memory_like_from_the_file() {
    if !library_reads_arrow() {
        return;
    }
    let dir = TempDir::new();
    let file_dir = dir.path().join("file");
    let memory_dir = dir.path().join("memory");
    let mut file_config = tiny(&dir);
    file_config
        .set("output.directory", file_dir.to_str().unwrap())
        .unwrap();
    let data = tiny_data(&file_config);
    assert_eq!(
        data.num_rows().unwrap(),
        read(&data_path(&file_config)).lines().count() as u64 - 1
    );
    let mut memory_config = file_config.try_clone().unwrap();
    memory_config
        .set("output.directory", memory_dir.to_str().unwrap())
        .unwrap();
    // No data.path: the data comes in memory.
    memory_config.set("data.path", "\"\"").unwrap();
    memory_config.validate().unwrap();

    let mut from_file = Trainer::new(&file_config).unwrap();
    let a = from_file.train().unwrap();
    let mut from_memory = Trainer::from_data(&memory_config, &data).unwrap();
    let b = from_memory.train().unwrap();
    assert_eq!(
        a.final_validation_loss.to_bits(),
        b.final_validation_loss.to_bits(),
        "file {}, memory {}",
        a.final_validation_loss,
        b.final_validation_loss
    );
    assert_eq!(a.final_train_loss.to_bits(), b.final_train_loss.to_bits());

    let expected = read(&file_dir.join("forecast.csv"));
    assert_eq!(read(&memory_dir.join("forecast.csv")), expected);
    let out = dir.path().join("predict_data.csv");
    from_memory
        .predict_data(&data)
        .unwrap()
        .write_csv(&out)
        .unwrap();
    assert_eq!(read(&out), expected);
    let mut model = Model::load(memory_dir.join("model")).unwrap();
    model.predict_data(&data).unwrap().write_csv(&out).unwrap();
    assert_eq!(read(&out), expected);
    // A model trained from memory has no data file to fall back on.
    assert_error(model.predict(None), Status::Config, "data.path");
    drop(data); // trainers and models do not need it any more
    model
        .predict(Some(&data_path(&file_config)))
        .unwrap()
        .write_csv(&out)
        .unwrap();
    assert_eq!(read(&out), expected);
}

/// Forecasts as record batches hold forecast.csv's rows, typed: dates as date32, quantiles as
/// float64 (the float32 forecasts widened: the CSV's text parses to the same float32), the
/// unknown actuals null.
#[test]
fn forecasts_come_back_as_record_batches() {
    if !library_reads_arrow() {
        return;
    }
    let dir = TempDir::new();
    let mut config = tiny(&dir);
    config.set("training.epochs", "1").unwrap();
    let data = tiny_data(&config);
    let mut trainer = Trainer::from_data(&config, &data).unwrap();
    trainer.train().unwrap();
    let predictions = trainer.predict_data(&data).unwrap();
    let reader = predictions.to_arrow().unwrap();
    drop(predictions); // the stream holds its own copy
    let schema = reader.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        ["kind", "store", "origin", "time", "horizon", "q0.1", "q0.5", "q0.9", "actual"]
    );
    let types: Vec<&DataType> = schema.fields().iter().map(|f| f.data_type()).collect();
    assert_eq!(
        types,
        [
            &DataType::Utf8,
            &DataType::Utf8,
            &DataType::Date32,
            &DataType::Date32,
            &DataType::Int64,
            &DataType::Float64,
            &DataType::Float64,
            &DataType::Float64,
            &DataType::Float64
        ]
    );
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();

    let expected = read(&dir.path().join("forecast.csv"));
    let mut lines = expected.lines();
    assert_eq!(lines.next().unwrap(), names.join(","));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.len(),
        batches.iter().map(|b| b.num_rows()).sum::<usize>()
    );
    let mut row = 0;
    for batch in &batches {
        let text = |c: usize| column::<StringArray>(batch, c);
        let date = |c: usize| column::<Date32Array>(batch, c);
        let real = |c: usize| column::<Float64Array>(batch, c);
        let horizon = column::<Int64Array>(batch, 4);
        for i in 0..batch.num_rows() {
            let want = &rows[row];
            assert_eq!(text(0).value(i), want[0], "row {row}");
            assert_eq!(text(1).value(i), want[1], "row {row}");
            assert_eq!(date(2).value(i), date32(want[2]), "row {row}");
            assert_eq!(date(3).value(i), date32(want[3]), "row {row}");
            assert_eq!(horizon.value(i).to_string(), want[4], "row {row}");
            for c in 5..8 {
                let csv: f32 = want[c].parse().unwrap();
                assert_eq!(
                    real(c).value(i).to_bits(),
                    f64::from(csv).to_bits(),
                    "row {row}"
                );
            }
            let actual = real(8);
            if want[8].is_empty() {
                assert!(actual.is_null(i), "row {row}");
                assert_eq!(want[0], "future");
            } else {
                let csv: f32 = want[8].parse().unwrap();
                assert_eq!(
                    actual.value(i).to_bits(),
                    f64::from(csv).to_bits(),
                    "row {row}"
                );
            }
            row += 1;
        }
    }
}

/// A schema without a configured column: the library's Data error, at Trainer::from_data.
#[test]
fn a_missing_column_is_the_librarys_error() {
    let Some((_dir, config, schema, batches)) = tiny_table() else {
        return;
    };
    let keep: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| schema.field(i).name() != "footfall")
        .collect();
    let narrow = Arc::new(schema.project(&keep).unwrap());
    let batches: Vec<_> = batches
        .iter()
        .map(|b| Ok(b.project(&keep).unwrap()))
        .collect();
    let data = Data::from_reader(RecordBatchIterator::new(batches, narrow)).unwrap();
    assert_error(Trainer::from_data(&config, &data), Status::Data, "footfall");
}

/// A reader that fails (on its first or a later batch), or has no rows: an Err carrying its
/// message, and the stream released exactly once.
#[test]
fn reader_errors_are_errs_and_release_once() {
    let Some((_dir, _config, schema, batches)) = tiny_table() else {
        return;
    };
    let first_rows = batches[0].num_rows();
    let fault = || ArrowError::ComputeError("the disk is on fire".to_string());

    let (reader, drops) = counted(
        Arc::clone(&schema),
        vec![Ok(batches[0].clone()), Err(fault())],
    );
    let e = assert_error(
        Data::from_reader(reader),
        Status::Data,
        "the disk is on fire",
    );
    assert!(e.message().contains(&format!("row {first_rows}")), "{e}");
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let (reader, drops) = counted(Arc::clone(&schema), vec![Err(fault())]);
    assert_error(
        Data::from_reader(reader),
        Status::Data,
        "the disk is on fire",
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let (reader, drops) = counted(Arc::clone(&schema), vec![]);
    assert_error(Data::from_reader(reader), Status::Data, "");
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // A boxed reader, moved through the C stream, read whole.
    let (reader, drops) = counted(Arc::clone(&schema), batches.into_iter().map(Ok).collect());
    let data = Data::from_boxed_reader(Box::new(reader)).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(data.num_rows().unwrap() > 0);
    data.close();
}

/// The raw entry point: a released stream is an error and nothing of it is called; a stream
/// the library took is left released, so dropping the Rust struct releases nothing twice.
#[test]
fn raw_streams_follow_move_semantics() {
    let Some((_dir, _config, schema, batches)) = tiny_table() else {
        return;
    };
    let mut released = FFI_ArrowArrayStream::empty();
    let p = (&mut released as *mut FFI_ArrowArrayStream).cast::<tftrain::sys::ArrowArrayStream>();
    assert_error(
        unsafe { Data::from_raw_stream(p) },
        Status::InvalidArgument,
        "",
    );

    let (reader, drops) = counted(schema, batches.into_iter().map(Ok).collect());
    let mut stream = FFI_ArrowArrayStream::new(Box::new(reader));
    let p = (&mut stream as *mut FFI_ArrowArrayStream).cast::<tftrain::sys::ArrowArrayStream>();
    let data = unsafe { Data::from_raw_stream(p) }.unwrap();
    assert!(unsafe { (*p).release.is_none() });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // Handing the same (now released) struct over again is an error.
    assert_error(
        unsafe { Data::from_raw_stream(p) },
        Status::InvalidArgument,
        "",
    );
    drop(stream);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(data);
}
