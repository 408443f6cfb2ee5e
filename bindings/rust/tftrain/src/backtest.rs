//! A rolling-origin backtest of a config (`tft_backtest_run`, docs/backtest.md).
use std::ops::ControlFlow;
use std::ptr;

use tftrain_sys as sys;

use crate::config::Config;
use crate::error::{check, Result};
use crate::trainer::{trampoline, CallbackState, Metrics, Progress};

/// One fold's figures, or every fold's pooled: the model's and both baselines'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Forecasts {
    pub model: Metrics,
    pub naive: Metrics,
    /// `windows` 0: not scored.
    pub seasonal_naive: Metrics,
}

/// How a backtest went.
#[derive(Debug, Clone, PartialEq)]
pub struct BacktestReport {
    /// `backtest.folds`.
    pub folds: i64,
    pub finished_folds: i64,
    /// Finished folds whose P50 q-risk is below the naive forecast's.
    pub folds_beating_naive: i64,
    /// The model's, lowest to highest quantile, over every fold.
    pub interval_coverage: f64,
    pub seconds: f64,
    /// Every fold pooled.
    pub overall: Forecasts,
    /// Fold 1 first.
    pub per_fold: Vec<Forecasts>,
}

/// Frees the report handle on every path.
struct Handle(*mut sys::tft_backtest_report);

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe { sys::tft_backtest_report_free(self.0) }
    }
}

/// Runs the backtest `config` describes (`backtest.folds`, `backtest.mode`,
/// `backtest.refit_epochs`) on `data.path`, writing each fold's run and backtest.csv,
/// backtest.json and backtest.svg under `output.directory`. Reports no progress.
pub fn backtest(config: &Config) -> Result<BacktestReport> {
    let mut raw = ptr::null_mut();
    check(unsafe { sys::tft_backtest_run(config.as_ptr(), None, ptr::null_mut(), &mut raw) })?;
    read(Handle(raw))
}

/// `backtest` with a progress closure, called on this thread after every step and epoch of
/// every fold's training, with `fold` and `folds` set. `ControlFlow::Break` cancels (a
/// `Status::Cancelled` error; the folds finished stay on disk), and so does a panic in it,
/// which the error then names.
pub fn backtest_with_progress<F>(config: &Config, progress: F) -> Result<BacktestReport>
where
    F: FnMut(&Progress) -> ControlFlow<()> + Send,
{
    let mut state = CallbackState {
        callback: Box::new(progress),
        panic: None,
    };
    let mut raw = ptr::null_mut();
    let code = unsafe {
        sys::tft_backtest_run(
            config.as_ptr(),
            Some(trampoline),
            (&mut state as *mut CallbackState).cast(),
            &mut raw,
        )
    };
    state.take_panic_into(check(code))?;
    read(Handle(raw))
}

/// The report's figures, read before the handle frees it.
fn read(handle: Handle) -> Result<BacktestReport> {
    let mut s = sys::tft_backtest_summary {
        struct_size: std::mem::size_of::<sys::tft_backtest_summary>(),
        ..Default::default()
    };
    check(unsafe { sys::tft_backtest_report_get_summary(handle.0, &mut s) })?;
    let forecasts = |fold: i64| -> Result<Forecasts> {
        let mut out = [Metrics::from(&sys::tft_metrics::default()); 3];
        for (which, slot) in out.iter_mut().enumerate() {
            let mut m = sys::tft_metrics {
                struct_size: std::mem::size_of::<sys::tft_metrics>(),
                ..Default::default()
            };
            check(unsafe {
                sys::tft_backtest_report_get_metrics(
                    handle.0,
                    fold,
                    which as sys::tft_forecaster,
                    &mut m,
                )
            })?;
            *slot = Metrics::from(&m);
        }
        Ok(Forecasts {
            model: out[0],
            naive: out[1],
            seasonal_naive: out[2],
        })
    };
    Ok(BacktestReport {
        folds: s.folds,
        finished_folds: s.finished_folds,
        folds_beating_naive: s.folds_beating_naive,
        interval_coverage: s.interval_coverage,
        seconds: s.seconds,
        overall: forecasts(0)?,
        per_fold: (1..=s.finished_folds)
            .map(forecasts)
            .collect::<Result<_>>()?,
    })
}
