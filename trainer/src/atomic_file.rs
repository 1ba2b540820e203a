//! Atomic file writes: a reader (or a resumed run) sees the old file or the new one, never half
//! of one, even if the process is killed mid-write. Every file the trainer writes as a result
//! (checkpoints, networks, metrics, `done.json`, reports, resume records) goes through here.

use anyhow::{Result, anyhow};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, `fsync`, rename,
/// `fsync` of the folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |tmp| {
        let mut f = File::create(tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })
}

/// Like [`write_atomic`], for writers that need a path (a plot library, say): `write` fills the
/// temporary file at the path it is given, which is then synced and renamed over `path`.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<()> {
    let err = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!("cannot write {}", path.display()))
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("cannot write {}: not a file name", path.display()))?;
    let tmp: PathBuf = path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    if let Err(e) = write(&tmp).and_then(|()| File::open(&tmp)?.sync_all()) {
        let _ = fs::remove_file(&tmp);
        return Err(err(e));
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        err(e)
    })?;
    if let Some(dir) = dir
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.ckpt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_failing_writer_keeps_the_old_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.svg");
        write_atomic(&path, b"old").unwrap();
        let e = write_atomic_with(&path, |tmp| {
            fs::write(tmp, b"half")?;
            Err(std::io::Error::other("plot failed"))
        })
        .unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("plot.svg") && e.contains("plot failed"), "{e}");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
