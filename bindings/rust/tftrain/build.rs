//! Sets an rpath to libtftrain's folder (from tftrain-sys) for this crate's tests and
//! examples, so they run without LD_LIBRARY_PATH.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TFTRAIN_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
