//! An rpath to libtftrain's folder, so the runner starts without LD_LIBRARY_PATH. Linking itself
//! is tftrain-sys's business, and the folder is found as it finds it: TFTRAIN_LIB_DIR, else
//! pkg-config's tftrain.pc (the SDK archive: PKG_CONFIG_PATH=<sdk>/lib/pkgconfig), else the
//! project's build folder (../../build/lib).
use std::path::PathBuf;
use std::process::Command;

fn pkg_config_libdir() -> Option<PathBuf> {
    let output =
        Command::new(std::env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into()))
            .args(["--variable=libdir", "tftrain"])
            .output()
            .ok()?;
    let dir = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !dir.trim().is_empty()).then(|| PathBuf::from(dir.trim()))
}

fn main() {
    println!("cargo:rerun-if-env-changed=TFTRAIN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let dir = match std::env::var_os("TFTRAIN_LIB_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => pkg_config_libdir().unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("../../build/lib")
        }),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{}", dir.display());
}
