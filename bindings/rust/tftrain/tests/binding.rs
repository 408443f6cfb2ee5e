//! The Rust binding's tests: the checkpoint-configuration API (the seed formula table of
//! tests/capi/test_capi_checkpoint.c), configs, errors, progress and cancel, training on
//! examples/configs/tiny.yaml, predictions and a saved model.
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tftrain::{CheckpointConfig, Config, Model, ProgressKind, Status, Strategy, Trainer};

/// A temporary folder removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tftrain-rs-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tiny_path() -> PathBuf {
    match std::env::var_os("TFTRAIN_TINY_CONFIG") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/configs/tiny.yaml"),
    }
}

fn tiny(dir: &TempDir) -> Config {
    let mut config = Config::load(tiny_path()).unwrap();
    config
        .set("output.directory", dir.path().to_str().unwrap())
        .unwrap();
    config
}

fn assert_error<T: std::fmt::Debug>(
    result: tftrain::Result<T>,
    status: Status,
    fragment: &str,
) -> tftrain::Error {
    let e = result.expect_err("expected an error");
    assert_eq!(e.status(), status, "{e}");
    assert!(
        e.message().contains(fragment),
        "message {:?} lacks {:?}",
        e.message(),
        fragment
    );
    e
}

#[test]
fn version_and_status_names() {
    let (major, minor, patch) = tftrain::version_numbers();
    assert_eq!(tftrain::version(), format!("{major}.{minor}.{patch}"));
    assert_eq!(Status::Config.name(), "ERROR_CONFIG");
    assert_eq!(Status::from_code(-6), Status::Cancelled);
}

#[test]
fn seed_formulas() {
    type Make = fn() -> CheckpointConfig;
    let uniform2: Make = || CheckpointConfig::uniform(2).unwrap();
    let uniform3: Make = || CheckpointConfig::uniform(3).unwrap();
    let uniform0: Make = || CheckpointConfig::uniform(0).unwrap();
    let selective03: Make = || CheckpointConfig::selective(&[0, 3]).unwrap();
    let selective_empty: Make = || CheckpointConfig::selective(&[]).unwrap();
    let dynamic10: Make = || CheckpointConfig::dynamic(10, 0.35).unwrap();
    let dynamic6_min4: Make = || {
        let mut c = CheckpointConfig::dynamic(6, 0.3).unwrap();
        c.set_min_interval(4).unwrap();
        c
    };
    let none: Make = || CheckpointConfig::none().unwrap();
    let rows: &[(&str, Make, usize, usize, bool, f64, f64)] = &[
        (
            "uniform(2) n6 i0",
            uniform2,
            6,
            0,
            true,
            1.0 - 3.0 / 6.0,
            1.0 + 1.0 / 6.0,
        ),
        (
            "uniform(2) n6 i1",
            uniform2,
            6,
            1,
            false,
            1.0 - 3.0 / 6.0,
            1.0 + 1.0 / 6.0,
        ),
        (
            "uniform(2) n6 i4",
            uniform2,
            6,
            4,
            true,
            1.0 - 3.0 / 6.0,
            1.0 + 1.0 / 6.0,
        ),
        (
            "uniform(3) n7 i3",
            uniform3,
            7,
            3,
            true,
            1.0 - 3.0 / 7.0,
            1.0 + 1.0 / 7.0,
        ),
        (
            "uniform(3) n7 i5",
            uniform3,
            7,
            5,
            false,
            1.0 - 3.0 / 7.0,
            1.0 + 1.0 / 7.0,
        ),
        ("uniform(3) n3 (k >= n)", uniform3, 3, 0, true, 0.0, 1.0),
        ("uniform(2) n1 (k >= n)", uniform2, 1, 0, true, 0.0, 1.0),
        ("uniform(0)", uniform0, 6, 0, false, 0.0, 1.0),
        (
            "selective{0,3} n6 i3",
            selective03,
            6,
            3,
            true,
            1.0 - 2.0 / 6.0,
            1.0 + 1.0 / 6.0,
        ),
        (
            "selective{0,3} n6 i2",
            selective03,
            6,
            2,
            false,
            1.0 - 2.0 / 6.0,
            1.0 + 1.0 / 6.0,
        ),
        (
            "selective{0,3} n10 i0",
            selective03,
            10,
            0,
            true,
            1.0 - 2.0 / 10.0,
            1.0 + 2.0 / 10.0,
        ),
        ("selective{} n6", selective_empty, 6, 0, false, 0.0, 1.0),
        (
            "dynamic(10,0.35) i3",
            dynamic10,
            10,
            3,
            true,
            1.0 - 0.35,
            1.0 + 0.65 * 0.3,
        ),
        (
            "dynamic(10,0.35) i4",
            dynamic10,
            10,
            4,
            false,
            1.0 - 0.35,
            1.0 + 0.65 * 0.3,
        ),
        (
            "dynamic(6,0.3)+min4 i4",
            dynamic6_min4,
            6,
            4,
            true,
            1.0 - 0.3,
            1.0 + 0.7 * 0.3,
        ),
        (
            "dynamic(6,0.3)+min4 i1",
            dynamic6_min4,
            6,
            1,
            false,
            1.0 - 0.3,
            1.0 + 0.7 * 0.3,
        ),
        ("none", none, 6, 0, false, 0.0, 1.0),
    ];
    for &(label, make, n, i, should, savings, overhead) in rows {
        let c = make();
        let got = (
            c.should_checkpoint(i).unwrap(),
            c.memory_savings(n).unwrap(),
            c.compute_overhead(n).unwrap(),
        );
        assert!(
            got.0 == should
                && (got.1 - savings).abs() <= 1e-12
                && (got.2 - overhead).abs() <= 1e-12,
            "{label}: got {got:?}, want ({should}, {savings}, {overhead})"
        );
    }
}

#[test]
fn flags_and_validation() {
    let c = CheckpointConfig::none().unwrap();
    assert!(!c.checkpoint_attention().unwrap());
    assert!(!c.checkpoint_ffn().unwrap());
    assert_eq!(c.min_interval().unwrap(), 1);
    assert_eq!(c.strategy().unwrap(), Strategy::None);
    c.close();

    let mut c = CheckpointConfig::dynamic(6, 0.5).unwrap();
    assert_eq!(c.strategy().unwrap(), Strategy::Dynamic);
    assert!(c.checkpoint_attention().unwrap());
    c.set_checkpoint_attention(false).unwrap();
    c.set_checkpoint_ffn(false).unwrap();
    let mut copy = c.try_clone().unwrap();
    assert!(!copy.checkpoint_attention().unwrap());
    assert!(!copy.checkpoint_ffn().unwrap());
    copy.validate().unwrap();
    copy.set_min_interval(0).unwrap();
    assert_error(
        copy.validate(),
        Status::Config,
        "checkpoint.min_checkpoint_interval: must be at least 1 (got 0)",
    );

    assert_error(
        CheckpointConfig::dynamic(0, 0.5),
        Status::Config,
        "checkpoint.num_layers: must be at least 1 (got 0)",
    );
    assert_error(
        CheckpointConfig::dynamic(6, 1.5),
        Status::Config,
        "(got 1.5)",
    );
    assert_error(
        CheckpointConfig::dynamic(6, f64::NAN),
        Status::Config,
        "(got nan)",
    );
    assert_error(
        CheckpointConfig::uniform(0).unwrap().validate(),
        Status::Config,
        "checkpoint.interval: must be at least 1 (got 0)",
    );
    assert_error(
        CheckpointConfig::selective(&[1, 1]).unwrap().validate(),
        Status::Config,
        "duplicate index 1",
    );
}

#[test]
fn summary_yaml_json() {
    let c = CheckpointConfig::dynamic(6, 0.3).unwrap();
    assert_eq!(
        c.summary().unwrap(),
        "Dynamic checkpointing (6 layers, 30.0% memory target)"
    );
    assert_eq!(
        CheckpointConfig::uniform(2).unwrap().summary().unwrap(),
        "Uniform checkpointing every 2 layers"
    );

    let mut s = CheckpointConfig::selective(&[0, 3]).unwrap();
    s.set_checkpoint_ffn(false).unwrap();
    let yaml = s.to_yaml().unwrap();
    assert!(yaml.contains("strategy: selective"), "{yaml}");
    let back = CheckpointConfig::from_yaml(&yaml).unwrap();
    assert_eq!(back.strategy().unwrap(), Strategy::Selective);
    assert!(back.should_checkpoint(3).unwrap());
    assert!(!back.checkpoint_ffn().unwrap());
    let back = CheckpointConfig::from_json(&s.to_json().unwrap()).unwrap();
    assert!(back.should_checkpoint(0).unwrap());

    let e = assert_error(
        CheckpointConfig::from_yaml("strategy: uniform\ninterval: 2\nintervall: 3\n"),
        Status::Config,
        "unknown key 'intervall'",
    );
    assert!(e.message().contains("line 3"), "{e}");
    assert_error(
        CheckpointConfig::from_yaml("strategy: [unclosed\n"),
        Status::Config,
        "",
    );
    assert_error(
        CheckpointConfig::from_json("{\"strategy\": 3}"),
        Status::Config,
        "checkpoint.strategy",
    );
    assert_error(CheckpointConfig::from_json("{not json"), Status::Config, "");
    assert_error(
        CheckpointConfig::from_yaml("a\0b"),
        Status::InvalidArgument,
        "NUL",
    );
}

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
    assert!(trainer.memory_report().unwrap().num_units > 0);

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
    let parquet_loss = Trainer::new(&config).unwrap().train().unwrap().final_validation_loss;
    assert_eq!(csv_loss.to_bits(), parquet_loss.to_bits(), "csv {csv_loss}, parquet {parquet_loss}");
    let mut model = Model::load(&model_dir).unwrap();
    let (forecasts, _, _) = model.predict(Some(&parquet)).unwrap().shape().unwrap();
    assert!(forecasts > 0);
}
