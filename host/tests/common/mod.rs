//! Helpers shared by the integration tests: paths to the real `host` binary, the shared data
//! folder and the thesis networks.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `host` binary cargo built for these tests.
pub fn host() -> Command {
    Command::new(env!("CARGO_BIN_EXE_host"))
}

/// The `host` binary under a 1 GiB address-space limit (`ulimit -v`): a test of hostile input
/// fails cleanly instead of eating the machine if reading ever becomes unbounded again.
pub fn host_in_1gib() -> Command {
    let mut c = Command::new("sh");
    c.args([
        "-c",
        "ulimit -v 1048576 && exec \"$0\" \"$@\"",
        env!("CARGO_BIN_EXE_host"),
    ]);
    c
}

/// `../shared` beside the repository (CI clones the repo next to it).
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// The thesis networks, sorted by file name.
pub fn thesis_nets() -> Vec<PathBuf> {
    let mut nets: Vec<PathBuf> = std::fs::read_dir(shared().join("nets/thesis"))
        .expect("../shared/nets/thesis must exist beside the repository")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nn"))
        .collect();
    nets.sort();
    assert!(!nets.is_empty(), "no thesis networks found");
    nets
}

/// The feature-set name in a thesis `.nn` header (bytes up to the first NUL).
pub fn thesis_header_name(net: &Path) -> String {
    let bytes = std::fs::read(net).unwrap();
    let end = bytes.iter().position(|&b| b == 0).unwrap();
    String::from_utf8(bytes[..end].to_vec()).unwrap()
}

/// Runs a command and returns its output, panicking with stderr if it failed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("cannot start host");
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Sorted unique indices of a comma-separated list.
pub fn index_set(field: &str) -> Vec<u32> {
    let mut v: Vec<u32> = field
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
