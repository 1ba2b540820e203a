//! Embeds an rpath to libtorch's `lib/` folder in every binary of the crate (the `trainer`
//! program, tests, benchmarks, examples), so that they find `libtorch*.so` at run time without
//! LD_LIBRARY_PATH. torch-sys reports the folder it linked against as `DEP_TCH_LIBTORCH_LIB` (its
//! `links` key is `tch`), which reaches this script because the crate depends on torch-sys
//! directly.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        let target = std::env::var("TARGET").unwrap_or_default();
        if !target.contains("windows") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}
