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
