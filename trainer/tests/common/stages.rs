//! What a rerun must leave alone: the files of a run's stage folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Every file under `out`'s stage folders (data, train, tournament, ...; the reports aside,
/// which a rerun may redraw) with its length and modification time. A rerun that computes
/// nothing leaves it equal; an empty map would make that vacuous, so it is refused.
pub fn stage_files(out: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    fn walk(dir: &Path, files: &mut BTreeMap<PathBuf, (u64, SystemTime)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                walk(&entry.path(), files);
            } else {
                files.insert(entry.path(), (meta.len(), meta.modified().unwrap()));
            }
        }
    }
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() && entry.file_name() != "reports" {
            walk(&entry.path(), &mut files);
        }
    }
    assert!(
        files.keys().any(|f| f.ends_with("done.json")),
        "no finished stage under {}",
        out.display()
    );
    files
}
