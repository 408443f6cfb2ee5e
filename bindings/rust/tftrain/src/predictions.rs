use std::path::Path;
use std::ptr::{self, NonNull};

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use tftrain_sys as sys;

use crate::data::{predictions_to_reader, Data};
use crate::error::{check, cpath, read_array, read_string, Error, Result, Status};

/// One forecast's description (`tft_forecast_info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForecastInfo {
    pub series: usize,
    /// The last encoder step's time: the integer, or microseconds since 1970 (ISO 8601).
    pub origin: i64,
    /// The window after the data (actuals unknown).
    pub is_future: bool,
}

/// Forecasts: the validation windows in order, then one window after the data per series, in
/// original units (`tft_predictions`). Released on drop.
#[derive(Debug)]
pub struct Predictions {
    raw: NonNull<sys::tft_predictions>,
}

// SAFETY: see CheckpointConfig.
unsafe impl Send for Predictions {}

impl Predictions {
    pub(crate) fn from_raw(
        code: sys::tft_status,
        out: *mut sys::tft_predictions,
    ) -> Result<Predictions> {
        check(code)?;
        NonNull::new(out)
            .map(|raw| Predictions { raw })
            .ok_or_else(|| Error::new(Status::Internal, "the library returned no predictions"))
    }

    /// (forecasts, horizon steps, quantiles per step).
    pub fn shape(&self) -> Result<(usize, usize, usize)> {
        let (mut f, mut h, mut q) = (0, 0, 0);
        check(unsafe {
            sys::tft_predictions_get_shape(self.raw.as_ptr(), &mut f, &mut h, &mut q)
        })?;
        Ok((f, h, q))
    }

    /// The quantile levels, e.g. [0.1, 0.5, 0.9].
    pub fn quantiles(&self) -> Result<Vec<f64>> {
        let raw = self.raw.as_ptr();
        read_array(|a, count, needed| unsafe {
            sys::tft_predictions_get_quantiles(raw, a, count, needed)
        })
    }

    pub fn info(&self, index: usize) -> Result<ForecastInfo> {
        let mut i = sys::tft_forecast_info {
            struct_size: std::mem::size_of::<sys::tft_forecast_info>(),
            ..Default::default()
        };
        check(unsafe { sys::tft_predictions_get_forecast_info(self.raw.as_ptr(), index, &mut i) })?;
        Ok(ForecastInfo {
            series: i.series,
            origin: i.origin,
            is_future: i.is_future != 0,
        })
    }

    /// The series' name ("" when the data is one series).
    pub fn series_name(&self, series: usize) -> Result<String> {
        let raw = self.raw.as_ptr();
        read_string(|buf, len, needed| unsafe {
            sys::tft_predictions_get_series_name(raw, series, buf, len, needed)
        })
    }

    /// [forecasts x horizon x quantiles], row-major.
    pub fn values(&self) -> Result<Vec<f32>> {
        let raw = self.raw.as_ptr();
        read_array(|a, count, needed| unsafe {
            sys::tft_predictions_get_values(raw, a, count, needed)
        })
    }

    /// [forecasts x horizon] (NaN: unknown).
    pub fn actuals(&self) -> Result<Vec<f32>> {
        let raw = self.raw.as_ptr();
        read_array(|a, count, needed| unsafe {
            sys::tft_predictions_get_actuals(raw, a, count, needed)
        })
    }

    /// [forecasts x horizon], the forecast steps' times.
    pub fn times(&self) -> Result<Vec<i64>> {
        let raw = self.raw.as_ptr();
        read_array(|a, count, needed| unsafe {
            sys::tft_predictions_get_times(raw, a, count, needed)
        })
    }

    /// forecast.csv's layout.
    pub fn write_csv(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = cpath(path.as_ref())?;
        check(unsafe { sys::tft_predictions_write_csv(self.raw.as_ptr(), path.as_ptr()) })
    }

    /// The forecasts as Arrow record batches with forecast.csv's columns, typed: kind and the
    /// series columns utf8; origin and time int64, date32 or timestamp[us] as the data's time
    /// column; horizon int64; one float64 column per quantile ("q0.1", ...; the float32
    /// forecasts widened exactly); actual float64, null where unknown. The reader owns its own
    /// copy: `self` may be dropped first.
    pub fn to_arrow(&self) -> Result<ArrowArrayStreamReader> {
        predictions_to_reader(self.raw.as_ptr())
    }
}

impl Drop for Predictions {
    fn drop(&mut self) {
        unsafe { sys::tft_predictions_free(self.raw.as_ptr()) }
    }
}

/// A saved model folder (`tft_model`). Released on drop.
#[derive(Debug)]
pub struct Model {
    raw: NonNull<sys::tft_model>,
}

// SAFETY: see CheckpointConfig.
unsafe impl Send for Model {}

impl Model {
    /// Loads a model folder written by training or `Trainer::save`.
    pub fn load(directory: impl AsRef<Path>) -> Result<Model> {
        let directory = cpath(directory.as_ref())?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::tft_model_create_from_directory(directory.as_ptr(), &mut out) })?;
        NonNull::new(out)
            .map(|raw| Model { raw })
            .ok_or_else(|| Error::new(Status::Internal, "the library returned no model"))
    }

    /// Forecasts a CSV laid out like the training data; None: the training data.
    pub fn predict(&mut self, csv: Option<&Path>) -> Result<Predictions> {
        let csv = csv.map(cpath).transpose()?;
        let p = csv.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        let mut out = ptr::null_mut();
        let code = unsafe { sys::tft_model_predict(self.raw.as_ptr(), p, &mut out) };
        Predictions::from_raw(code, out)
    }

    /// Forecasts data in memory laid out like the training data (the way to forecast a model
    /// trained from memory, which has no data.path to fall back on).
    pub fn predict_data(&mut self, data: &Data) -> Result<Predictions> {
        let mut out = ptr::null_mut();
        let code =
            unsafe { sys::tft_model_predict_data(self.raw.as_ptr(), data.as_ptr(), &mut out) };
        Predictions::from_raw(code, out)
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::tft_model_free(self.raw.as_ptr()) }
    }
}
