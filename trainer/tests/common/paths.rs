//! Where the integration tests find the build's programs and plugins and the shared folder.

use std::path::{Path, PathBuf};

/// `target/<profile>`: the test executable is `target/<profile>/deps/<test>-<hash>`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The shared folder (`../shared` beside the repository).
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .canonicalize()
        .expect("../shared beside the repository")
}
