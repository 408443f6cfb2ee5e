//! An rpath to libtftrain's folder (TFTRAIN_LIB_DIR, default ../../build/lib), so the runner
//! starts without LD_LIBRARY_PATH. Linking itself is tftrain-sys's business.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=TFTRAIN_LIB_DIR");
    let dir = match std::env::var_os("TFTRAIN_LIB_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("../../build/lib"),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{}", dir.display());
}
