use std::any::Any;
use std::ffi::{c_int, c_void};
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::{Arc, Weak};

use tftrain_sys as sys;

use crate::config::Config;
use crate::data::Data;
use crate::error::{check, cpath, Error, Result, Status};
use crate::predictions::Predictions;

/// What a progress record reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressKind {
    /// After an optimisation step.
    Step,
    /// After an epoch's validation (the validation fields are set).
    Epoch,
}

/// What the progress callback receives (`tft_progress`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub kind: ProgressKind,
    /// 1-based.
    pub epoch: i64,
    pub epochs: i64,
    /// 1-based within the epoch.
    pub step: i64,
    pub steps_per_epoch: i64,
    pub train_loss: f64,
    /// Epoch records only; NaN otherwise.
    pub validation_loss: f64,
    pub samples_per_second: f64,
    pub peak_activation_bytes: i64,
    pub learning_rate: f64,
    /// `backtest_with_progress`: the fold training (1-based); 0 in a `Trainer`.
    pub fold: i64,
    /// `backtest_with_progress`: `backtest.folds`; 0 in a `Trainer`.
    pub folds: i64,
}

/// Forecast quality of a set of windows (`tft_metrics`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    pub loss: f64,
    pub q_risk_p50: f64,
    pub q_risk_p90: f64,
    pub mae_p50: f64,
    pub windows: i64,
}

impl From<&sys::tft_metrics> for Metrics {
    fn from(m: &sys::tft_metrics) -> Metrics {
        Metrics {
            loss: m.loss,
            q_risk_p50: m.q_risk_p50,
            q_risk_p90: m.q_risk_p90,
            mae_p50: m.mae_p50,
            windows: m.windows,
        }
    }
}

/// One training step's activation memory (`tft_memory_report`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryReport {
    pub checkpointed_peak_bytes: i64,
    pub unchecked_peak_bytes: i64,
    pub measured_savings: f64,
    pub predicted_savings: f64,
    pub predicted_compute_overhead: f64,
    pub num_units: usize,
}

impl From<&sys::tft_memory_report> for MemoryReport {
    fn from(m: &sys::tft_memory_report) -> MemoryReport {
        MemoryReport {
            checkpointed_peak_bytes: m.checkpointed_peak_bytes,
            unchecked_peak_bytes: m.unchecked_peak_bytes,
            measured_savings: m.measured_savings,
            predicted_savings: m.predicted_savings,
            predicted_compute_overhead: m.predicted_compute_overhead,
            num_units: m.num_units,
        }
    }
}

/// How a training run ended: `tft_train_report`'s summary (`tft_train_summary`), validation
/// metrics and memory report, read through `tft_train_report_get_*`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainReport {
    pub epochs_run: i64,
    pub best_epoch: i64,
    pub resumed_from_epoch: i64,
    pub early_stopped: bool,
    pub initial_validation_loss: f64,
    pub best_validation_loss: f64,
    pub final_validation_loss: f64,
    pub final_train_loss: f64,
    pub validation: Metrics,
    pub train_seconds: f64,
    pub samples_per_second: f64,
    pub peak_activation_bytes: i64,
    pub memory: MemoryReport,
}

impl TrainReport {
    fn read(report: NonNull<sys::tft_train_report>) -> Result<TrainReport> {
        let r = report.as_ptr();
        let mut s = sys::tft_train_summary {
            struct_size: std::mem::size_of::<sys::tft_train_summary>(),
            ..Default::default()
        };
        let mut v = sys::tft_metrics {
            struct_size: std::mem::size_of::<sys::tft_metrics>(),
            ..Default::default()
        };
        let mut m = sys::tft_memory_report {
            struct_size: std::mem::size_of::<sys::tft_memory_report>(),
            ..Default::default()
        };
        check(unsafe { sys::tft_train_report_get_summary(r, &mut s) })?;
        check(unsafe { sys::tft_train_report_get_validation(r, &mut v) })?;
        check(unsafe { sys::tft_train_report_get_memory(r, &mut m) })?;
        Ok(TrainReport {
            epochs_run: s.epochs_run,
            best_epoch: s.best_epoch,
            resumed_from_epoch: s.resumed_from_epoch,
            early_stopped: s.early_stopped != 0,
            initial_validation_loss: s.initial_validation_loss,
            best_validation_loss: s.best_validation_loss,
            final_validation_loss: s.final_validation_loss,
            final_train_loss: s.final_train_loss,
            validation: Metrics::from(&v),
            train_seconds: s.train_seconds,
            samples_per_second: s.samples_per_second,
            peak_activation_bytes: s.peak_activation_bytes,
            memory: MemoryReport::from(&m),
        })
    }
}

/// The native trainer, shared with `Canceller`s (weakly) so that a cancel in flight keeps it
/// alive; freed when the last strong reference goes.
struct Handle(NonNull<sys::tft_trainer>);

// SAFETY: tft_trainer_cancel may be called from any thread while the trainer is alive; every
// other call goes through `&mut Trainer` (one thread at a time).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe { sys::tft_trainer_free(self.0.as_ptr()) }
    }
}

/// A progress closure as the trampoline calls it: a `Trainer`'s lives as long as the trainer
/// (`'static`), a backtest's for the call only.
pub(crate) type Callback<'a> = Box<dyn FnMut(&Progress) -> ControlFlow<()> + Send + 'a>;

/// What `trampoline`'s `user` points to: the closure, and the panic that cancelled the run.
pub(crate) struct CallbackState<'a> {
    pub(crate) callback: Callback<'a>,
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

impl CallbackState<'_> {
    /// `result`, its error naming the closure's panic when one cancelled the run.
    pub(crate) fn take_panic_into<T>(&mut self, result: Result<T>) -> Result<T> {
        match (result, self.panic.take()) {
            (Err(e), Some(payload)) => Err(Error::new(
                e.status(),
                format!(
                    "{} (the progress callback panicked: {})",
                    e.message(),
                    panic_message(&*payload)
                ),
            )),
            (result, _) => result,
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_string()
    }
}

/// Whether the library filled `field` of `p`: it lies within `p.struct_size`.
fn filled(p: &sys::tft_progress, field: &i64) -> bool {
    let end = field as *const i64 as usize + std::mem::size_of::<i64>();
    end - (p as *const sys::tft_progress as usize) <= p.struct_size
}

/// Calls the closure; a panic is caught (it must not unwind into C) and cancels training.
pub(crate) unsafe extern "C" fn trampoline(
    progress: *const sys::tft_progress,
    user: *mut c_void,
) -> c_int {
    if progress.is_null() || user.is_null() {
        return 0;
    }
    // SAFETY: `user` is a CallbackState that outlives the run: the Trainer's while its callback
    // is set, or the one backtest_with_progress keeps on its stack. The library calls back on
    // the thread running the call (inside `&mut self`, or the backtest's own call).
    let state = unsafe { &mut *(user as *mut CallbackState) };
    if state.panic.is_some() {
        return 1;
    }
    let p = unsafe { &*progress };
    let record = Progress {
        kind: if p.kind == sys::TFT_PROGRESS_EPOCH {
            ProgressKind::Epoch
        } else {
            ProgressKind::Step
        },
        epoch: p.epoch,
        epochs: p.epochs,
        step: p.step,
        steps_per_epoch: p.steps_per_epoch,
        train_loss: p.train_loss,
        validation_loss: p.validation_loss,
        samples_per_second: p.samples_per_second,
        peak_activation_bytes: p.peak_activation_bytes,
        learning_rate: p.learning_rate,
        // Fields beyond struct_size (an older library) stay 0.
        fold: if filled(p, &p.fold) { p.fold } else { 0 },
        folds: if filled(p, &p.folds) { p.folds } else { 0 },
    };
    match catch_unwind(AssertUnwindSafe(|| (state.callback)(&record))) {
        Ok(ControlFlow::Continue(())) => 0,
        Ok(ControlFlow::Break(())) => 1,
        Err(payload) => {
            state.panic = Some(payload);
            1
        }
    }
}

/// Trains one model (`tft_trainer`). Released on drop.
pub struct Trainer {
    handle: Arc<Handle>,
    callback: *mut CallbackState<'static>, // owned (Box::into_raw); null when none is set
}

// SAFETY: the callback is Send; the native trainer may move between threads.
unsafe impl Send for Trainer {}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("handle", &self.handle.0)
            .finish()
    }
}

/// Cancels a running `Trainer::train` from any thread (`tft_trainer_cancel`).
#[derive(Clone)]
pub struct Canceller(Weak<Handle>);

impl Canceller {
    /// Asks the training to stop at the next step (a request made while not training is
    /// kept for the next run). An InvalidArgument error once the trainer is dropped.
    pub fn cancel(&self) -> Result<()> {
        match self.0.upgrade() {
            Some(handle) => check(unsafe { sys::tft_trainer_cancel(handle.0.as_ptr()) }),
            None => Err(Error::new(
                Status::InvalidArgument,
                "the trainer was dropped",
            )),
        }
    }
}

impl Trainer {
    /// Reads the data, builds the model; `config` is copied.
    pub fn new(config: &Config) -> Result<Trainer> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::tft_trainer_create(config.as_ptr(), &mut out) })?;
        Trainer::made(out)
    }

    /// The same with the data in memory instead of data.path (which is then not read):
    /// training and validation windows come from `data` as they would from the file. `config`
    /// is copied; `data` is read during the call only. Errors: Data (a configured column
    /// missing from the data or of an unsupported type, a null where a value is needed), as
    /// well as `new`'s.
    pub fn from_data(config: &Config, data: &Data) -> Result<Trainer> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::tft_trainer_create_from_data(config.as_ptr(), data.as_ptr(), &mut out)
        })?;
        Trainer::made(out)
    }

    fn made(out: *mut sys::tft_trainer) -> Result<Trainer> {
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Status::Internal, "the library returned no trainer"))?;
        Ok(Trainer {
            handle: Arc::new(Handle(raw)),
            callback: ptr::null_mut(),
        })
    }

    fn raw(&self) -> *mut sys::tft_trainer {
        self.handle.0.as_ptr()
    }

    /// Releases the trainer now (the same as dropping it).
    pub fn close(self) {}

    /// Sets the progress callback, called after every step and epoch on the thread running
    /// `train`: `ControlFlow::Break(())` cancels training (a Cancelled error). A panic in the
    /// closure is caught and cancels training too; the error's message names it.
    pub fn set_progress<F>(&mut self, callback: F) -> Result<()>
    where
        F: FnMut(&Progress) -> ControlFlow<()> + Send + 'static,
    {
        let state = Box::into_raw(Box::new(CallbackState {
            callback: Box::new(callback),
            panic: None,
        }));
        let code = unsafe {
            sys::tft_trainer_set_progress_callback(self.raw(), Some(trampoline), state.cast())
        };
        if let Err(e) = check(code) {
            drop(unsafe { Box::from_raw(state) });
            return Err(e);
        }
        self.free_callback();
        self.callback = state;
        Ok(())
    }

    /// Removes the progress callback.
    pub fn clear_progress(&mut self) -> Result<()> {
        check(unsafe {
            sys::tft_trainer_set_progress_callback(self.raw(), None, ptr::null_mut())
        })?;
        self.free_callback();
        Ok(())
    }

    fn free_callback(&mut self) {
        if !self.callback.is_null() {
            drop(unsafe { Box::from_raw(self.callback) });
            self.callback = ptr::null_mut();
        }
    }

    fn run(&mut self, resume: bool) -> Result<TrainReport> {
        if let Some(state) = unsafe { self.callback.as_mut() } {
            state.panic = None;
        }
        let mut r: *mut sys::tft_train_report = ptr::null_mut();
        let code = unsafe {
            if resume {
                sys::tft_trainer_resume(self.raw(), &mut r)
            } else {
                sys::tft_trainer_train(self.raw(), &mut r)
            }
        };
        let mut result = check(code);
        if let Some(state) = unsafe { self.callback.as_mut() } {
            result = state.take_panic_into(result);
        }
        result?;
        let report = NonNull::new(r)
            .ok_or_else(|| Error::new(Status::Internal, "the library returned no report"))?;
        let result = TrainReport::read(report);
        unsafe { sys::tft_train_report_free(report.as_ptr()) };
        result
    }

    /// Trains from the initial weights, keeps the best epoch's weights and writes the run's
    /// files to output.directory.
    pub fn train(&mut self) -> Result<TrainReport> {
        self.run(false)
    }

    /// Continues from the snapshot of an earlier run with this output.directory.
    pub fn resume(&mut self) -> Result<TrainReport> {
        self.run(true)
    }

    /// Asks training to stop at the next step (kept for the next run when not training).
    pub fn cancel(&self) -> Result<()> {
        check(unsafe { sys::tft_trainer_cancel(self.raw()) })
    }

    /// A handle that cancels this trainer's training from another thread.
    pub fn canceller(&self) -> Canceller {
        Canceller(Arc::downgrade(&self.handle))
    }

    /// The current weights on the validation windows.
    pub fn evaluate(&mut self) -> Result<Metrics> {
        let mut m = sys::tft_metrics {
            struct_size: std::mem::size_of::<sys::tft_metrics>(),
            ..Default::default()
        };
        check(unsafe { sys::tft_trainer_evaluate(self.raw(), &mut m) })?;
        Ok(Metrics::from(&m))
    }

    /// One training step's activation peak, with checkpointing as configured and without
    /// (`tft_trainer_measure_memory`).
    pub fn measure_memory(&mut self) -> Result<MemoryReport> {
        let mut m = sys::tft_memory_report {
            struct_size: std::mem::size_of::<sys::tft_memory_report>(),
            ..Default::default()
        };
        check(unsafe { sys::tft_trainer_measure_memory(self.raw(), &mut m) })?;
        Ok(MemoryReport::from(&m))
    }

    /// Forecasts of the current weights.
    pub fn predict(&mut self) -> Result<Predictions> {
        let mut out = ptr::null_mut();
        let code = unsafe { sys::tft_trainer_predict(self.raw(), &mut out) };
        Predictions::from_raw(code, out)
    }

    /// Forecasts of the current weights for other data in memory laid out like the training
    /// data, through the transforms fitted in training: its validation windows and the window
    /// after its data.
    pub fn predict_data(&mut self, data: &Data) -> Result<Predictions> {
        let mut out = ptr::null_mut();
        let code = unsafe { sys::tft_trainer_predict_data(self.raw(), data.as_ptr(), &mut out) };
        Predictions::from_raw(code, out)
    }

    /// Forecasts of the current weights as CSV.
    pub fn predict_csv(&mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = cpath(path.as_ref())?;
        check(unsafe { sys::tft_trainer_predict_csv(self.raw(), path.as_ptr()) })
    }

    /// Writes the current weights as a model folder; None: output.directory/model.
    pub fn save(&mut self, directory: Option<&Path>) -> Result<()> {
        let directory = directory.map(cpath).transpose()?;
        let p = directory.as_ref().map_or(ptr::null(), |d| d.as_ptr());
        check(unsafe { sys::tft_trainer_save(self.raw(), p) })
    }
}

impl Drop for Trainer {
    fn drop(&mut self) {
        // The native trainer may outlive this value briefly (a Canceller's cancel in flight):
        // clear the callback before its state is freed.
        unsafe { sys::tft_trainer_set_progress_callback(self.raw(), None, ptr::null_mut()) };
        self.free_callback();
    }
}
