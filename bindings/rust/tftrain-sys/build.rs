//! Links libtftrain. The folder holding libtftrain.so comes from the environment variable
//! TFTRAIN_LIB_DIR, by default ../../../build/lib relative to this crate (the project's
//! build folder). Dependents' build scripts get it as DEP_TFTRAIN_LIB_DIR (to set an rpath).
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=TFTRAIN_LIB_DIR");
    let dir = match env::var_os("TFTRAIN_LIB_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
            .join("../../../build/lib"),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("libtftrain.so").display()
    );
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=tftrain");
    // This crate's own tests find the library without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:lib_dir={}", dir.display());
}
