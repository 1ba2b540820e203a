//! Links libtorch for every binary of the crate (the `trainer` program, tests, benchmarks,
//! examples):
//!
//! - an rpath to libtorch's `lib/` folder, so that they find `libtorch*.so` at run time without
//!   LD_LIBRARY_PATH. torch-sys reports the folder it linked against as `DEP_TCH_LIBTORCH_LIB`
//!   (its `links` key is `tch`), which reaches this script because the crate depends on
//!   torch-sys directly;
//! - `libtorch.so` as a needed library even though no symbol comes from it. rustc links with
//!   `--as-needed`, which dropped it, and with it the `libtorch_cuda.so` it depends on, whose
//!   static initialisers register CUDA with libtorch: without them `tch::Cuda::device_count()`
//!   is 0 on any machine. With `scripts/setup-torch.sh`'s CPU variant the library is an empty
//!   one; run with a full libtorch first on LD_LIBRARY_PATH, the same binary trains on a GPU.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let target = std::env::var("TARGET").unwrap_or_default();
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB")
        && !target.contains("windows")
    {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
    if target.contains("linux") {
        println!("cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,-ltorch,--pop-state");
    }
}
