//! Configs and their errors, progress and cancel, training on examples/configs/tiny.yaml,
//! predictions and a saved model.
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tftrain::{CheckpointConfig, Config, Model, ProgressKind, Status, Strategy, Trainer};

mod common;
use common::{assert_error, tiny, TempDir};

#[test]
fn config_get_set_and_errors() {
    let dir = TempDir::new();
    let mut config = tiny(&dir);
    assert_eq!(config.get("training.epochs").unwrap(), "2");
    config.set("training.epochs", "3").unwrap();
    assert_eq!(config.get("training.epochs").unwrap(), "3");
    assert_error(
        config.set("training.epochs", "ten"),
        Status::Config,
        "training.epochs",
    );
    assert_error(config.set("training.epoch", "1"), Status::Config, "epoch");
    assert_error(config.get("no.such.key"), Status::Config, "");
    config
        .set_checkpoint(&CheckpointConfig::uniform(2).unwrap())
        .unwrap();
    assert_eq!(
        config.checkpoint().unwrap().strategy().unwrap(),
        Strategy::Uniform
    );
    config.validate().unwrap();
    let again = Config::parse(&config.to_yaml().unwrap()).unwrap();
    assert_eq!(again.get("training.epochs").unwrap(), "3");
    assert_eq!(
        config.try_clone().unwrap().get("training.epochs").unwrap(),
        "3"
    );

    let e = assert_error(
        Config::parse("data:\n  path: x.csv\ntraining:\n  epochs: ten\n"),
        Status::Config,
        "training.epochs",
    );
    assert!(e.to_string().starts_with("ERROR_CONFIG: "), "{e}");
    assert_error(
        Config::load(dir.path().join("missing.yaml")),
        Status::Io,
        "",
    );
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "windows:\n  encoder_length: 4\n  prediction_length: 2\ntraining:\n  epoch: 3\n",
    )
    .unwrap();
    assert_error(Config::load(&bad), Status::Config, "bad.yaml:");
}

#[test]
fn train_progress_cancel_and_panic() {
    let dir = TempDir::new();
    let config = tiny(&dir);
    let mut trainer = Trainer::new(&config).unwrap();

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    trainer
        .set_progress(move |p| {
            sink.lock().unwrap().push(*p);
            ControlFlow::Continue(())
        })
        .unwrap();
    let report = trainer.train().unwrap();
    let records = seen.lock().unwrap().clone();
    let steps: Vec<_> = records
        .iter()
        .filter(|p| p.kind == ProgressKind::Step)
        .map(|p| (p.epoch, p.step))
        .collect();
    assert!(steps.len() >= 2);
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "steps not increasing: {steps:?}"
    );
    let epochs: Vec<_> = records
        .iter()
        .filter(|p| p.kind == ProgressKind::Epoch)
        .collect();
    assert_eq!(epochs.len(), 2);
    assert!(epochs.iter().all(|p| !p.validation_loss.is_nan()));
    assert_eq!(report.epochs_run, 2);
    assert!(report.final_validation_loss.is_finite() && report.final_validation_loss > 0.0);
    assert!(report.memory.num_units > 0);
    let m = trainer.evaluate().unwrap();
    assert!(m.windows > 0 && m.loss > 0.0);
    assert!(trainer.measure_memory().unwrap().num_units > 0);
    assert!(report.validation.windows > 0);
    assert!((report.validation.loss - report.best_validation_loss).abs() < 1e-12);
    assert!(report.peak_activation_bytes > 0 && report.memory.checkpointed_peak_bytes > 0);

    // Break after 3 calls.
    let mut calls = 0;
    let counter = Arc::new(AtomicUsize::new(0));
    let c2 = Arc::clone(&counter);
    trainer
        .set_progress(move |_| {
            calls += 1;
            c2.store(calls, Ordering::SeqCst);
            if calls >= 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_error(trainer.train(), Status::Cancelled, "");
    assert_eq!(counter.load(Ordering::SeqCst), 3);

    // A panic is caught by the trampoline and cancels.
    trainer.set_progress(|_| panic!("boom")).unwrap();
    let e = assert_error(trainer.train(), Status::Cancelled, "boom");
    assert!(e.message().contains("panicked"), "{e}");

    // Cancel before training applies to the next run; a canceller from another thread.
    trainer.clear_progress().unwrap();
    trainer.cancel().unwrap();
    assert_error(trainer.train(), Status::Cancelled, "");
    let canceller = trainer.canceller();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    trainer
        .set_progress(move |_| {
            let _ = tx.send(());
            std::thread::sleep(std::time::Duration::from_millis(20));
            ControlFlow::Continue(())
        })
        .unwrap();
    let c = canceller.clone();
    let thread = std::thread::spawn(move || {
        rx.recv().unwrap();
        c.cancel().unwrap();
    });
    assert_error(trainer.train(), Status::Cancelled, "");
    thread.join().unwrap();
    trainer.close();
    assert_error(canceller.cancel(), Status::InvalidArgument, "dropped");
}

#[test]
fn predictions_save_and_model() {
    let dir = TempDir::new();
    let mut config = tiny(&dir);
    config.set("training.epochs", "1").unwrap();
    let mut trainer = Trainer::new(&config).unwrap();
    trainer.train().unwrap();
    let preds = trainer.predict().unwrap();
    let (f, h, q) = preds.shape().unwrap();
    assert!(f > 0);
    assert_eq!((h, q), (7, 3));
    assert_eq!(preds.quantiles().unwrap(), vec![0.1, 0.5, 0.9]);
    assert_eq!(preds.values().unwrap().len(), f * h * q);
    assert_eq!(preds.actuals().unwrap().len(), f * h);
    assert_eq!(preds.times().unwrap().len(), f * h);
    let info = preds.info(f - 1).unwrap();
    assert!(info.is_future);
    assert!(!preds.series_name(info.series).unwrap().is_empty());
    assert_error(preds.info(f), Status::InvalidArgument, "");
    preds.write_csv(dir.path().join("forecast.csv")).unwrap();
    trainer
        .predict_csv(dir.path().join("forecast2.csv"))
        .unwrap();
    let model_dir = dir.path().join("model");
    trainer.save(Some(&model_dir)).unwrap();
    let mut model = Model::load(&model_dir).unwrap();
    assert_eq!(model.predict(None).unwrap().shape().unwrap().0, f);
    assert!(Model::load(dir.path().join("nothing")).is_err());
}

#[test]
fn many_handles_are_released() {
    for _ in 0..1000 {
        let c = CheckpointConfig::uniform(2).unwrap();
        let _copy = c.try_clone().unwrap();
    }
}

/// A Parquet copy of the tiny data (TFTRAIN_TINY_PARQUET, written by ctest's fixture with
/// scripts/csv_to_parquet.py) trains the same model as the CSV, and a saved model reads it.
#[test]
fn parquet_trains_like_csv() {
    let Some(parquet) = std::env::var_os("TFTRAIN_TINY_PARQUET") else {
        eprintln!("skipped: TFTRAIN_TINY_PARQUET is not set (a build without Parquet)");
        return;
    };
    let parquet = PathBuf::from(parquet);
    let dir = TempDir::new();
    let mut config = tiny(&dir);
    config.set("training.epochs", "1").unwrap();
    let mut from_csv = Trainer::new(&config).unwrap();
    let csv_loss = from_csv.train().unwrap().final_validation_loss;
    let model_dir = dir.path().join("model");
    from_csv.save(Some(&model_dir)).unwrap();
    config.set("data.path", parquet.to_str().unwrap()).unwrap();
    let parquet_loss = Trainer::new(&config)
        .unwrap()
        .train()
        .unwrap()
        .final_validation_loss;
    assert_eq!(
        csv_loss.to_bits(),
        parquet_loss.to_bits(),
        "csv {csv_loss}, parquet {parquet_loss}"
    );
    let mut model = Model::load(&model_dir).unwrap();
    let (forecasts, _, _) = model.predict(Some(&parquet)).unwrap().shape().unwrap();
    assert!(forecasts > 0);
}

/// A refit (training.init_from, docs/refit.md) starts from the saved model: its first
/// validation loss is the saved model's, on the same data. A key that contradicts the saved
/// architecture is a config error naming it.
#[test]
fn refit_starts_from_the_saved_model() {
    let first = TempDir::new();
    let saved = Trainer::new(&tiny(&first)).unwrap().train().unwrap();

    let second = TempDir::new();
    let mut config = tiny(&second);
    let model = first.path().join("model");
    config
        .set("training.init_from", model.to_str().unwrap())
        .unwrap();
    let report = Trainer::new(&config).unwrap().train().unwrap();
    assert_eq!(
        report.initial_validation_loss.to_bits(),
        saved.best_validation_loss.to_bits()
    );
    let summary = std::fs::read_to_string(second.path().join("summary.json")).unwrap();
    assert!(summary.contains("\"init_from\""), "{summary}");
    config.set("model.hidden_size", "16").unwrap();
    assert_error(
        Trainer::new(&config),
        Status::Config,
        "model.hidden_size is 16 here but 8",
    );
}

/// tiny.yaml backtested over two folds, each refit for one epoch from the fold before.
fn two_fold_refit(dir: &TempDir) -> Config {
    let mut config = tiny(dir);
    config.set("backtest.folds", "2").unwrap();
    config.set("backtest.mode", "refit").unwrap();
    config.set("backtest.refit_epochs", "1").unwrap();
    config
}

/// A refit backtest of tiny.yaml over two folds: both finish, and the pooled forecasts are
/// both folds'.
#[test]
fn backtest_reports_every_fold() {
    let dir = TempDir::new();
    let mut config = two_fold_refit(&dir);
    let report = tftrain::backtest(&config).unwrap();
    assert_eq!(report.finished_folds, 2);
    assert_eq!(report.per_fold.len(), 2);
    assert_eq!(
        report.overall.model.windows,
        report.per_fold[0].model.windows + report.per_fold[1].model.windows
    );
    assert!(report.overall.model.q_risk_p50 > 0.0 && report.overall.naive.q_risk_p50 > 0.0);
    assert!(dir.path().join("backtest.csv").exists());
    config.set("backtest.folds", "500").unwrap();
    assert_error(
        tftrain::backtest(&config),
        Status::Config,
        "backtest.folds 500",
    );
}

/// Progress reaches a backtest's closure with the fold it trains; a break in fold 2 keeps
/// fold 1 on disk, and a panic in the closure cancels and is named in the error.
#[test]
fn backtest_reports_progress_and_cancels() {
    let dir = TempDir::new();
    let mut config = two_fold_refit(&dir);
    let mut calls = [0usize; 3];
    let report = tftrain::backtest_with_progress(&config, |p| {
        assert!(p.folds == 2 && (1..=2).contains(&p.fold), "{p:?}");
        calls[p.fold as usize] += 1;
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(report.finished_folds, 2);
    assert!(
        calls[1] > 0 && calls[2] > 0,
        "progress calls per fold {calls:?}"
    );

    let cancelled = dir.path().join("cancelled");
    config
        .set("output.directory", cancelled.to_str().unwrap())
        .unwrap();
    assert_error(
        tftrain::backtest_with_progress(&config, |p| {
            if p.fold == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }),
        Status::Cancelled,
        "",
    );
    assert!(cancelled.join("folds/fold-1/summary.json").exists());
    assert!(cancelled.join("backtest.json").exists());
    assert!(!cancelled.join("folds/fold-2/summary.json").exists());

    assert_error(
        tftrain::backtest_with_progress(&config, |_| panic!("in the closure")),
        Status::Cancelled,
        "the progress callback panicked: in the closure",
    );
}
