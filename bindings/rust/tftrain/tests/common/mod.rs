//! Helpers shared by the integration tests (checkpoint.rs, training.rs).
#![allow(dead_code)] // each test crate uses a part

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use tftrain::{Config, Status};

/// A temporary folder removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tftrain-rs-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn tiny_path() -> PathBuf {
    match std::env::var_os("TFTRAIN_TINY_CONFIG") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/configs/tiny.yaml"),
    }
}

pub fn tiny(dir: &TempDir) -> Config {
    let mut config = Config::load(tiny_path()).unwrap();
    config
        .set("output.directory", dir.path().to_str().unwrap())
        .unwrap();
    config
}

pub fn assert_error<T: std::fmt::Debug>(
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
