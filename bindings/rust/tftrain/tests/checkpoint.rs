//! Version, status names and the checkpoint-configuration API (the estimates' table of
//! tests/capi/test_capi_checkpoint.c): no training.

use tftrain::{CheckpointConfig, Config, Status, Strategy};

mod common;
use common::assert_error;

#[test]
fn version_and_status_names() {
    let (major, minor, patch) = tftrain::version_numbers();
    assert_eq!(tftrain::version(), format!("{major}.{minor}.{patch}"));
    assert_eq!(tftrain::api_version(), major * 10000 + minor * 100 + patch);
    assert_eq!(tftrain::api_version(), tftrain::sys::TFT_API_VERSION);
    assert_eq!(Status::Config.name(), "ERROR_CONFIG");
    assert_eq!(Status::from_code(-6), Status::Cancelled);
}

#[test]
fn estimate_formulas() {
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
