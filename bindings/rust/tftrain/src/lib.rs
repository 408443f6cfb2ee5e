//! Train Temporal Fusion Transformers with gradient checkpointing: the safe Rust binding of
//! the tftrain C API (`tftrain-sys`).
//!
//! Every fallible call returns [`Result`]; an [`Error`] carries the C status and the
//! library's message. Handles are released on drop, so use after release and double release
//! do not compile:
//!
//! ```compile_fail
//! let c = tftrain::CheckpointConfig::uniform(2).unwrap();
//! c.close();
//! c.validate().unwrap(); // error[E0382]: use of moved value
//! ```
//!
//! Training with a progress closure (a panic in it is caught and cancels training):
//!
//! ```no_run
//! use std::ops::ControlFlow;
//! use tftrain::{CheckpointConfig, Config, ProgressKind, Trainer};
//!
//! let mut config = Config::load("examples/configs/tiny.yaml")?;
//! config.set("output.directory", "/tmp/tiny-rs")?;
//! config.set_checkpoint(&CheckpointConfig::uniform(2)?)?;
//! let mut trainer = Trainer::new(&config)?;
//! trainer.set_progress(|p| {
//!     if p.kind == ProgressKind::Epoch {
//!         eprintln!("epoch {}/{}: {:.4}", p.epoch, p.epochs, p.validation_loss);
//!     }
//!     ControlFlow::Continue(())
//! })?;
//! let report = trainer.train()?;
//! println!("final_validation_loss: {}", report.final_validation_loss);
//! # Ok::<(), tftrain::Error>(())
//! ```
//!
//! Data in memory: anything that is `RecordBatchReader + Send` (arrow-rs), handed over through
//! the Arrow C stream interface; forecasts come back as an Arrow stream of record batches:
//!
//! ```no_run
//! use tftrain::arrow_array::{RecordBatch, RecordBatchIterator};
//! use tftrain::{Config, Data, Trainer};
//!
//! # fn table() -> Vec<RecordBatch> { unimplemented!() }
//! let batches: Vec<RecordBatch> = table(); // the data file's columns
//! let schema = batches[0].schema();
//! let data = Data::from_reader(RecordBatchIterator::new(batches.into_iter().map(Ok), schema))?;
//! let mut config = Config::load("examples/configs/tiny.yaml")?; // data.path is not read
//! config.set("output.directory", "/tmp/tiny-memory")?;
//! let mut trainer = Trainer::from_data(&config, &data)?;
//! trainer.train()?;
//! for batch in trainer.predict_data(&data)?.to_arrow()? {
//!     let batch = batch.expect("a forecast batch");
//!     println!("{} forecast rows", batch.num_rows());
//! }
//! # Ok::<(), tftrain::Error>(())
//! ```
mod backtest;
mod checkpoint;
mod config;
mod data;
mod error;
mod predictions;
mod trainer;

pub use backtest::{backtest, backtest_with_progress, BacktestReport, Forecasts};
pub use checkpoint::{CheckpointConfig, Strategy};
pub use config::Config;
pub use data::Data;
pub use error::{Error, Result, Status};
pub use predictions::{ForecastInfo, Model, Predictions};
pub use trainer::{Canceller, MemoryReport, Metrics, Progress, ProgressKind, TrainReport, Trainer};

pub use tftrain_sys as sys;
/// The arrow-rs crates whose types this API takes and returns (the `arrow` crate re-exports
/// them): use these, or an `arrow` of the same major version.
pub use {arrow_array, arrow_schema};

/// The library's version, "MAJOR.MINOR.PATCH".
pub fn version() -> String {
    // SAFETY: a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(sys::tft_version_string()) }
        .to_string_lossy()
        .into_owned()
}

/// The library's `tft_api_version()`: MAJOR * 10000 + MINOR * 100 + PATCH, to compare with
/// the `sys::TFT_API_VERSION` this crate was built against.
pub fn api_version() -> i32 {
    unsafe { sys::tft_api_version() }
}

/// The library's version numbers.
pub fn version_numbers() -> (i32, i32, i32) {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    unsafe { sys::tft_version(&mut major, &mut minor, &mut patch) };
    (major, minor, patch)
}
