//! Stage caching: every stage's output lives in a folder named after a key of its inputs, and
//! a stage counts as done only when its `done.json` marker (written atomically, last) exists.
//! A rerun skips done stages; an interrupted stage is redone or resumed by the stage itself.

use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::atomic_file::write_atomic;
pub use crate::digest::{file_digest, key_of};

/// The marker file of a finished stage.
pub const DONE: &str = "done.json";

/// A stage's folder: `root/kind/name-key`.
pub fn stage_dir(root: &Path, kind: &str, name: &str, key: &str) -> PathBuf {
    let safe = crate::file_names::safe_file_name(name);
    root.join(kind).join(format!("{safe}-{key}"))
}

/// The identity of a file a stage reads, as its key holds it: a file inside the output folder
/// `out` (another stage's output, whose folder is named after that stage's key) by its path
/// relative to `out`; any other file by its contents (SHA-256, computed once per file and
/// process). Neither where the output folder lies nor where the run is started from changes a
/// key: the same manifest run into two folders, or a cluster's output folder copied home, finds
/// the same stages.
pub fn file_identity(path: &Path, out: &Path) -> Result<String> {
    if let Ok(inside) = path.strip_prefix(out) {
        return Ok(inside.to_string_lossy().into_owned());
    }
    static DIGESTS: Mutex<Option<HashMap<PathBuf, String>>> = Mutex::new(None);
    if let Some(d) = DIGESTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_default()
        .get(path)
    {
        return Ok(d.clone());
    }
    let digest = format!("sha256:{}", file_digest(path)?);
    DIGESTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_default()
        .insert(path.to_path_buf(), digest.clone());
    Ok(digest)
}

/// `path` as a stage's record stores it: relative to the output folder `out` when inside it
/// (so that the folder can move), as it is otherwise.
pub fn stored_path(path: &Path, out: &Path) -> PathBuf {
    path.strip_prefix(out)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// A path a stage's record stores, as this run reads it: relative ones inside the output folder
/// `out` (records written before they were stored relative hold absolute paths, which stay).
pub fn read_path(stored: &Path, out: &Path) -> PathBuf {
    out.join(stored)
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
    fn files_of_other_stages_are_named_inside_the_output_folder_others_by_contents() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for out in [&a, &b] {
            std::fs::create_dir_all(out.join("data/d-1234")).unwrap();
            std::fs::write(out.join("data/d-1234/train.binpack"), b"x").unwrap();
        }
        // The same stage's file in two output folders: one identity.
        assert_eq!(
            file_identity(&a.join("data/d-1234/train.binpack"), &a).unwrap(),
            file_identity(&b.join("data/d-1234/train.binpack"), &b).unwrap()
        );
        // Files outside: by contents, wherever they lie.
        let (f, g) = (dir.path().join("f.bin"), dir.path().join("g.bin"));
        std::fs::write(&f, b"same").unwrap();
        std::fs::write(&g, b"same").unwrap();
        let id = file_identity(&f, &a).unwrap();
        assert!(id.starts_with("sha256:"), "{id}");
        assert_eq!(id, file_identity(&g, &a).unwrap());
        let stored = stored_path(&a.join("data/d-1234/train.binpack"), &a);
        assert_eq!(stored, Path::new("data/d-1234/train.binpack"));
        assert_eq!(read_path(&stored, &b), b.join("data/d-1234/train.binpack"));
        assert_eq!(read_path(&f, &b), f);
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
