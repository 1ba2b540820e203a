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

/// Writes each case's bytes to `dir` as a network file and checks that `host eval` refuses it
/// in one line naming the file and containing the case's words, in 1 GiB of memory
/// ([`host_in_1gib`]): `cases` are (name, bytes, words), `fens` a FEN file to evaluate.
pub fn assert_networks_refused(dir: &Path, fens: &Path, cases: Vec<(&str, Vec<u8>, &str)>) {
    for (name, bytes, want) in cases {
        let path = dir.join(format!("{name}.nnue"));
        std::fs::write(&path, bytes).unwrap();
        let out = host_in_1gib()
            .args(["eval", "--net"])
            .arg(&path)
            .arg("--fens")
            .arg(fens)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{name}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains("cannot load network") && err.contains(want),
            "{name}: {err}"
        );
    }
}

/// The rows of a tab-separated vector file, its `#` lines and empty lines dropped.
pub fn tsv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
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
