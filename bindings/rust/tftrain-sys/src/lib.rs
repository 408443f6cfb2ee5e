//! Raw declarations of the tftrain C API, written by hand from `capi/include/tftrain.h`.
//! The version constants come from the build's generated `tftrain_version.h` (build.rs, which
//! also fails the build when this crate's version is not the library's). Every function is
//! `unsafe`; see the header for ownership, errors and threading. The safe wrapper is the
//! `tftrain` crate. (over 500 lines: one declaration per C API function and struct, in the
//! header's order, so the two read side by side.)
//!
//! The Arrow C Data Interface structs (`ArrowSchema`, `ArrowArray`, `ArrowArrayStream`) are
//! declared here from the spec, `#[repr(C)]`, so this crate depends on no Arrow
//! implementation: a host passes a pointer to its own stream struct (arrow-rs's
//! `FFI_ArrowArrayStream`, nanoarrow's, polars'), which has the same layout, cast to
//! `*mut ArrowArrayStream`.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};
use std::marker::{PhantomData, PhantomPinned};

include!(concat!(env!("OUT_DIR"), "/version.rs"));

mod arrow;
pub use arrow::{ArrowArray, ArrowArrayStream, ArrowSchema};

/// `tft_status`: 0 or a negative error category (a C enum, passed as int).
pub type tft_status = c_int;
pub const TFT_OK: tft_status = 0;
pub const TFT_ERROR_INVALID_ARGUMENT: tft_status = -1;
pub const TFT_ERROR_CONFIG: tft_status = -2;
pub const TFT_ERROR_DATA: tft_status = -3;
pub const TFT_ERROR_IO: tft_status = -4;
pub const TFT_ERROR_NUMERICAL: tft_status = -5;
pub const TFT_ERROR_CANCELLED: tft_status = -6;
pub const TFT_ERROR_UNSUPPORTED: tft_status = -7;
pub const TFT_ERROR_INTERNAL: tft_status = -8;
pub const TFT_ERROR_BUFFER_TOO_SMALL: tft_status = -9;
pub const TFT_ERROR_OUT_OF_MEMORY: tft_status = -10;

pub type tft_checkpoint_strategy = c_int;
pub const TFT_CHECKPOINT_NONE: tft_checkpoint_strategy = 0;
pub const TFT_CHECKPOINT_UNIFORM: tft_checkpoint_strategy = 1;
pub const TFT_CHECKPOINT_SELECTIVE: tft_checkpoint_strategy = 2;
pub const TFT_CHECKPOINT_DYNAMIC: tft_checkpoint_strategy = 3;

pub type tft_progress_kind = c_int;
pub const TFT_PROGRESS_STEP: tft_progress_kind = 0;
pub const TFT_PROGRESS_EPOCH: tft_progress_kind = 1;

macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}
opaque!(
    tft_checkpoint_config,
    tft_config,
    tft_predictions,
    tft_trainer,
    tft_train_report,
    tft_model,
    tft_data,
    tft_backtest_report
);

pub type tft_forecaster = c_int;
pub const TFT_FORECASTER_MODEL: tft_forecaster = 0;
pub const TFT_FORECASTER_NAIVE: tft_forecaster = 1;
pub const TFT_FORECASTER_SEASONAL_NAIVE: tft_forecaster = 2;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tft_backtest_summary {
    pub struct_size: usize,
    pub folds: i64,
    pub finished_folds: i64,
    pub folds_beating_naive: i64,
    pub interval_coverage: f64,
    pub seconds: f64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tft_metrics {
    pub struct_size: usize,
    pub loss: f64,
    pub q_risk_p50: f64,
    pub q_risk_p90: f64,
    pub mae_p50: f64,
    pub windows: i64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tft_forecast_info {
    pub struct_size: usize,
    pub series: usize,
    pub origin: i64,
    pub is_future: c_int,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tft_progress {
    pub struct_size: usize,
    pub kind: tft_progress_kind,
    pub epoch: i64,
    pub epochs: i64,
    pub step: i64,
    pub steps_per_epoch: i64,
    pub train_loss: f64,
    pub validation_loss: f64,
    pub samples_per_second: f64,
    pub peak_activation_bytes: i64,
    pub learning_rate: f64,
    pub fold: i64,
    pub folds: i64,
}

pub type tft_progress_fn =
    Option<unsafe extern "C" fn(progress: *const tft_progress, user: *mut c_void) -> c_int>;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tft_memory_report {
    pub struct_size: usize,
    pub checkpointed_peak_bytes: i64,
    pub unchecked_peak_bytes: i64,
    pub measured_savings: f64,
    pub predicted_savings: f64,
    pub predicted_compute_overhead: f64,
    pub num_units: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tft_train_summary {
    pub struct_size: usize,
    pub epochs_run: i64,
    pub best_epoch: i64,
    pub resumed_from_epoch: i64,
    pub early_stopped: c_int,
    pub initial_validation_loss: f64,
    pub best_validation_loss: f64,
    pub final_validation_loss: f64,
    pub final_train_loss: f64,
    pub train_seconds: f64,
    pub samples_per_second: f64,
    pub peak_activation_bytes: i64,
}

unsafe extern "C" {
    // Version and errors
    pub fn tft_version_string() -> *const c_char;
    pub fn tft_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int);
    pub fn tft_api_version() -> c_int;
    pub fn tft_last_error() -> *const c_char;
    pub fn tft_status_name(status: tft_status) -> *const c_char;

    // Checkpoint configuration
    pub fn tft_checkpoint_config_create_uniform(
        interval: usize,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_checkpoint_config_create_selective(
        layers: *const usize,
        count: usize,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_checkpoint_config_create_dynamic(
        num_layers: usize,
        memory_fraction: f64,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_checkpoint_config_create_none(out: *mut *mut tft_checkpoint_config) -> tft_status;
    pub fn tft_checkpoint_config_clone(
        config: *const tft_checkpoint_config,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_checkpoint_config_free(config: *mut tft_checkpoint_config);
    pub fn tft_checkpoint_config_set_checkpoint_attention(
        config: *mut tft_checkpoint_config,
        enabled: c_int,
    ) -> tft_status;
    pub fn tft_checkpoint_config_set_checkpoint_ffn(
        config: *mut tft_checkpoint_config,
        enabled: c_int,
    ) -> tft_status;
    pub fn tft_checkpoint_config_set_min_interval(
        config: *mut tft_checkpoint_config,
        interval: usize,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_strategy(
        config: *const tft_checkpoint_config,
        out: *mut tft_checkpoint_strategy,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_checkpoint_attention(
        config: *const tft_checkpoint_config,
        out: *mut c_int,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_checkpoint_ffn(
        config: *const tft_checkpoint_config,
        out: *mut c_int,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_min_interval(
        config: *const tft_checkpoint_config,
        out: *mut usize,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_should_checkpoint(
        config: *const tft_checkpoint_config,
        layer: usize,
        out: *mut c_int,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_memory_savings(
        config: *const tft_checkpoint_config,
        num_layers: usize,
        out: *mut f64,
    ) -> tft_status;
    pub fn tft_checkpoint_config_get_compute_overhead(
        config: *const tft_checkpoint_config,
        num_layers: usize,
        out: *mut f64,
    ) -> tft_status;
    pub fn tft_checkpoint_config_validate(config: *const tft_checkpoint_config) -> tft_status;
    pub fn tft_checkpoint_config_get_summary(
        config: *const tft_checkpoint_config,
        buf: *mut c_char,
        len: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_checkpoint_config_to_yaml(
        config: *const tft_checkpoint_config,
        buf: *mut c_char,
        len: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_checkpoint_config_to_json(
        config: *const tft_checkpoint_config,
        buf: *mut c_char,
        len: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_checkpoint_config_create_from_yaml(
        yaml: *const c_char,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_checkpoint_config_create_from_json(
        json: *const c_char,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;

    // Training configuration
    pub fn tft_config_create_from_file(
        path: *const c_char,
        out: *mut *mut tft_config,
    ) -> tft_status;
    pub fn tft_config_create_from_yaml(
        yaml: *const c_char,
        out: *mut *mut tft_config,
    ) -> tft_status;
    pub fn tft_config_clone(config: *const tft_config, out: *mut *mut tft_config) -> tft_status;
    pub fn tft_config_free(config: *mut tft_config);
    pub fn tft_config_get_value(
        config: *const tft_config,
        key: *const c_char,
        buf: *mut c_char,
        len: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_config_set_value(
        config: *mut tft_config,
        key: *const c_char,
        value: *const c_char,
    ) -> tft_status;
    pub fn tft_config_set_checkpoint(
        config: *mut tft_config,
        checkpoint: *const tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_config_get_checkpoint(
        config: *const tft_config,
        out: *mut *mut tft_checkpoint_config,
    ) -> tft_status;
    pub fn tft_config_validate(config: *const tft_config) -> tft_status;
    pub fn tft_config_to_yaml(
        config: *const tft_config,
        buf: *mut c_char,
        len: usize,
        needed: *mut usize,
    ) -> tft_status;

    // Predictions
    pub fn tft_predictions_free(predictions: *mut tft_predictions);
    pub fn tft_predictions_get_shape(
        predictions: *const tft_predictions,
        forecasts: *mut usize,
        horizon: *mut usize,
        quantiles: *mut usize,
    ) -> tft_status;
    pub fn tft_predictions_get_quantiles(
        predictions: *const tft_predictions,
        levels: *mut f64,
        count: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_predictions_get_forecast_info(
        predictions: *const tft_predictions,
        index: usize,
        info: *mut tft_forecast_info,
    ) -> tft_status;
    pub fn tft_predictions_get_series_name(
        predictions: *const tft_predictions,
        series: usize,
        buf: *mut c_char,
        len: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_predictions_get_values(
        predictions: *const tft_predictions,
        values: *mut f32,
        count: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_predictions_get_actuals(
        predictions: *const tft_predictions,
        actuals: *mut f32,
        count: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_predictions_get_times(
        predictions: *const tft_predictions,
        times: *mut i64,
        count: usize,
        needed: *mut usize,
    ) -> tft_status;
    pub fn tft_predictions_write_csv(
        predictions: *const tft_predictions,
        path: *const c_char,
    ) -> tft_status;
    pub fn tft_predictions_to_arrow_stream(
        predictions: *const tft_predictions,
        out: *mut ArrowArrayStream,
    ) -> tft_status;

    // Data in memory
    pub fn tft_data_create_from_arrow_stream(
        stream: *mut ArrowArrayStream,
        out: *mut *mut tft_data,
    ) -> tft_status;
    pub fn tft_data_free(data: *mut tft_data);
    pub fn tft_data_get_num_rows(data: *const tft_data, out: *mut i64) -> tft_status;

    // Trainer
    pub fn tft_trainer_create(config: *const tft_config, out: *mut *mut tft_trainer) -> tft_status;
    pub fn tft_trainer_create_from_data(
        config: *const tft_config,
        data: *const tft_data,
        out: *mut *mut tft_trainer,
    ) -> tft_status;
    pub fn tft_trainer_free(trainer: *mut tft_trainer);
    pub fn tft_trainer_set_progress_callback(
        trainer: *mut tft_trainer,
        f: tft_progress_fn,
        user: *mut c_void,
    ) -> tft_status;
    pub fn tft_trainer_train(
        trainer: *mut tft_trainer,
        report: *mut *mut tft_train_report,
    ) -> tft_status;
    pub fn tft_trainer_resume(
        trainer: *mut tft_trainer,
        report: *mut *mut tft_train_report,
    ) -> tft_status;
    pub fn tft_trainer_cancel(trainer: *mut tft_trainer) -> tft_status;
    pub fn tft_trainer_evaluate(trainer: *mut tft_trainer, out: *mut tft_metrics) -> tft_status;
    pub fn tft_trainer_predict(
        trainer: *mut tft_trainer,
        out: *mut *mut tft_predictions,
    ) -> tft_status;
    pub fn tft_trainer_predict_csv(trainer: *mut tft_trainer, path: *const c_char) -> tft_status;
    pub fn tft_trainer_predict_data(
        trainer: *mut tft_trainer,
        data: *const tft_data,
        out: *mut *mut tft_predictions,
    ) -> tft_status;
    pub fn tft_trainer_save(trainer: *mut tft_trainer, directory: *const c_char) -> tft_status;
    pub fn tft_trainer_measure_memory(
        trainer: *mut tft_trainer,
        out: *mut tft_memory_report,
    ) -> tft_status;

    // Train report
    pub fn tft_train_report_free(report: *mut tft_train_report);
    pub fn tft_train_report_get_summary(
        report: *const tft_train_report,
        out: *mut tft_train_summary,
    ) -> tft_status;
    pub fn tft_train_report_get_validation(
        report: *const tft_train_report,
        out: *mut tft_metrics,
    ) -> tft_status;
    pub fn tft_train_report_get_memory(
        report: *const tft_train_report,
        out: *mut tft_memory_report,
    ) -> tft_status;

    // Backtest
    pub fn tft_backtest_run(
        config: *const tft_config,
        fn_: tft_progress_fn,
        user: *mut c_void,
        out: *mut *mut tft_backtest_report,
    ) -> tft_status;
    pub fn tft_backtest_report_free(report: *mut tft_backtest_report);
    pub fn tft_backtest_report_get_summary(
        report: *const tft_backtest_report,
        out: *mut tft_backtest_summary,
    ) -> tft_status;
    pub fn tft_backtest_report_get_metrics(
        report: *const tft_backtest_report,
        fold: i64,
        forecaster: tft_forecaster,
        out: *mut tft_metrics,
    ) -> tft_status;

    // Saved model
    pub fn tft_model_create_from_directory(
        directory: *const c_char,
        out: *mut *mut tft_model,
    ) -> tft_status;
    pub fn tft_model_free(model: *mut tft_model);
    pub fn tft_model_predict(
        model: *mut tft_model,
        csv_path: *const c_char,
        out: *mut *mut tft_predictions,
    ) -> tft_status;
    pub fn tft_model_predict_data(
        model: *mut tft_model,
        data: *const tft_data,
        out: *mut *mut tft_predictions,
    ) -> tft_status;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;
    use std::mem::{offset_of, size_of};

    // The layouts of the header's structs on LP64 (x86_64, aarch64 Linux), as gcc lays them
    // out (sizeof / offsetof printed by a C program).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn struct_layouts_match_the_header() {
        assert_eq!(size_of::<tft_metrics>(), 48);
        assert_eq!(offset_of!(tft_metrics, windows), 40);
        assert_eq!(size_of::<tft_forecast_info>(), 32);
        assert_eq!(offset_of!(tft_forecast_info, is_future), 24);
        assert_eq!(size_of::<tft_progress>(), 104);
        assert_eq!(offset_of!(tft_progress, epoch), 16);
        assert_eq!(offset_of!(tft_progress, learning_rate), 80);
        assert_eq!(offset_of!(tft_progress, fold), 88);
        assert_eq!(size_of::<tft_backtest_summary>(), 48);
        assert_eq!(offset_of!(tft_backtest_summary, interval_coverage), 32);
        assert_eq!(size_of::<tft_memory_report>(), 56);
        assert_eq!(offset_of!(tft_memory_report, num_units), 48);
        assert_eq!(size_of::<tft_train_summary>(), 96);
        assert_eq!(offset_of!(tft_train_summary, early_stopped), 32);
        assert_eq!(offset_of!(tft_train_summary, initial_validation_loss), 40);
        assert_eq!(offset_of!(tft_train_summary, train_seconds), 72);
        assert_eq!(offset_of!(tft_train_summary, peak_activation_bytes), 88);
        // The Arrow C Data Interface structs (the spec's, all fields 8 bytes on LP64).
        assert_eq!(size_of::<ArrowSchema>(), 72);
        assert_eq!(offset_of!(ArrowSchema, release), 56);
        assert_eq!(size_of::<ArrowArray>(), 80);
        assert_eq!(offset_of!(ArrowArray, release), 64);
        assert_eq!(size_of::<ArrowArrayStream>(), 40);
        assert_eq!(offset_of!(ArrowArrayStream, release), 24);
    }

    // The crate, the generated header and the library are one version (build.rs checks the
    // first two; this, the library at run time).
    #[test]
    fn version_is_cargo_header_and_library_version() {
        let cargo: Vec<c_int> = env!("CARGO_PKG_VERSION")
            .split('.')
            .map(|n| n.parse().unwrap())
            .collect();
        let (mut major, mut minor, mut patch) = (-1, -1, -1);
        unsafe { tft_version(&mut major, &mut minor, &mut patch) };
        assert_eq!(cargo, [major, minor, patch]);
        let text = unsafe { CStr::from_ptr(tft_version_string()) };
        assert_eq!(text.to_str().unwrap(), TFTRAIN_VERSION_STRING);
        assert_eq!(unsafe { tft_api_version() }, TFT_API_VERSION);
        assert_eq!(TFT_API_VERSION, major * 10000 + minor * 100 + patch);
    }

    #[test]
    fn version_and_a_raw_call() {
        let (mut major, mut minor, mut patch) = (-1, -1, -1);
        unsafe { tft_version(&mut major, &mut minor, &mut patch) };
        assert_eq!(
            (major, minor, patch),
            (
                TFTRAIN_VERSION_MAJOR,
                TFTRAIN_VERSION_MINOR,
                TFTRAIN_VERSION_PATCH
            )
        );
        let mut cfg = std::ptr::null_mut();
        assert_eq!(
            unsafe { tft_checkpoint_config_create_uniform(2, std::ptr::null_mut()) },
            TFT_ERROR_INVALID_ARGUMENT
        );
        let message = unsafe { CStr::from_ptr(tft_last_error()) }
            .to_string_lossy()
            .into_owned();
        assert!(message.contains("'out' is NULL"), "{message}");
        assert_eq!(
            unsafe { tft_checkpoint_config_create_uniform(2, &mut cfg) },
            TFT_OK
        );
        let mut flag = -1;
        assert_eq!(
            unsafe { tft_checkpoint_config_get_should_checkpoint(cfg, 4, &mut flag) },
            TFT_OK
        );
        assert_eq!(flag, 1);
        unsafe { tft_checkpoint_config_free(cfg) };
    }
}
