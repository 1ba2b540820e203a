//! Where the integration tests find the build's programs and plugins and the shared folder.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use plugin_api::PluginRegistry;

/// `target/<profile>`: the test executable is `target/<profile>/deps/<test>-<hash>`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// `target/<profile>/deps`: the test executables and the real plugins built beside them.
pub fn plugin_dir() -> PathBuf {
    target_dir().join("deps")
}

/// The real plugins, as the programs under test load them.
pub fn registry() -> PluginRegistry {
    PluginRegistry::discover(Some(&plugin_dir())).unwrap()
}

/// The shared folder (`../shared` beside the repository).
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .canonicalize()
        .expect("../shared beside the repository")
}

/// nnue-pytorch's sample of Stockfish-labelled positions in the shared folder (435,000 Stockfish
/// self-play positions, scores in Stockfish's internal units): tests that read its first
/// positions read them there.
pub fn stockfish_positions() -> PathBuf {
    shared().join("data/nnue-pytorch-small.binpack")
}

/// Stockfish-labelled positions for the tests that learn on a strong engine's scores: slices of
/// [`stockfish_positions`] cut at test time by the real `trainer convert`: `(train, val)`, the
/// 100,000 positions after the first 10,000 and the first 10,000. Made once per build directory
/// (each file written whole, then renamed into place) and reused.
pub fn stockfish_sample() -> (PathBuf, PathBuf) {
    static SAMPLE: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    SAMPLE
        .get_or_init(|| {
            let source = stockfish_positions();
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
            let slice = |name: &str, offset: &str, limit: &str| {
                let path = dir.join(name);
                if !path.exists() {
                    let part = dir.join(format!("part{}-{name}", std::process::id()));
                    let out = std::process::Command::new(env!("CARGO_BIN_EXE_trainer"))
                        .args(["convert", "--on-error", "fail", "--in"])
                        .arg(&source)
                        .args(["--offset", offset, "--limit", limit, "--out"])
                        .arg(&part)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "trainer convert {}: {}",
                        source.display(),
                        String::from_utf8_lossy(&out.stderr)
                    );
                    std::fs::rename(&part, &path).unwrap();
                }
                path
            };
            (
                slice("stockfish-sample-train.binpack", "10000", "100000"),
                slice("stockfish-sample-val.binpack", "0", "10000"),
            )
        })
        .clone()
}
