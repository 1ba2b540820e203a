//! Stage caching: every stage's output lives in a folder named after a key of its inputs, and
//! a stage counts as done only when its `done.json` marker (written atomically, last) exists.
//! A rerun skips done stages; an interrupted stage is redone or resumed by the stage itself.

use anyhow::Result;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::atomic_file::write_atomic;
pub use crate::digest::{file_digest, key_of};

/// The marker file of a finished stage.
pub const DONE: &str = "done.json";

/// A stage's folder: `root/kind/name-key`.
pub fn stage_dir(root: &Path, kind: &str, name: &str, key: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    root.join(kind).join(format!("{safe}-{key}"))
}

/// The record of a finished stage, if its marker exists and reads back.
pub fn done<T: DeserializeOwned>(dir: &Path) -> Option<T> {
    let bytes = std::fs::read(dir.join(DONE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Marks a stage finished with its record (atomically: a kill leaves no half marker).
pub fn mark_done(dir: &Path, record: &impl Serialize) -> Result<()> {
    let json = serde_json::to_vec_pretty(record)?;
    write_atomic(&dir.join(DONE), &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_inputs() {
        assert_eq!(key_of(&("a", 1)), key_of(&("a", 1)));
        assert_ne!(key_of(&("a", 1)), key_of(&("a", 2)));
        assert_eq!(key_of(&1).len(), 16);
    }

    #[test]
    fn markers_round_trip_and_absent_is_not_done() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(done::<u32>(dir.path()), None);
        mark_done(dir.path(), &7u32).unwrap();
        assert_eq!(done::<u32>(dir.path()), Some(7));
        assert_eq!(
            stage_dir(Path::new("r"), "t", "a+b c", "k"),
            Path::new("r/t/a+b_c-k")
        );
    }
}
