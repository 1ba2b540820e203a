//! The resume record (`OUT.progress`): the configuration and its identity, the games done and
//! the bytes committed.

use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::GensfenConfig;
use crate::atomic_file::write_atomic;
use crate::data::Format;
use crate::digest::{file_digest, key_of};

/// The sidecar's contents.
#[derive(Serialize, Deserialize, Debug)]
pub(super) struct Progress {
    pub(super) version: u32,
    pub(super) config_hash: String,
    /// Games of this shard done (the next game is `shard.0 + games * shard.1`).
    pub(super) games: u64,
    pub(super) positions: u64,
    pub(super) bytes: u64,
    pub(super) complete: bool,
    pub(super) config: serde_json::Value,
}

/// Environment variable of the test hook described in the module docs (a whole number `K`).
pub const ABORT_AFTER_COMMITS_ENV: &str = "NNUE_GENSFEN_ABORT_AFTER_COMMITS";

/// The sidecar of `out`: `OUT.progress`.
pub fn progress_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".progress");
    PathBuf::from(s)
}

/// The parts of a configuration that change the output, with the contents of the book and the
/// network, hashed.
pub(super) fn identity(
    config: &GensfenConfig,
    format: Format,
) -> Result<(String, serde_json::Value)> {
    let mut c = config.clone();
    c.threads = 0;
    c.plugin_dir = None;
    let mut value = serde_json::to_value(&c)?;
    if let Some(obj) = value.as_object_mut() {
        obj.remove("threads");
        obj.remove("plugin_dir");
        obj.insert("format".into(), format.name().into());
        if let Some(b) = &config.player.book {
            obj.insert("book_digest".into(), file_digest(b)?.into());
        }
        if let Some(n) = &config.player.net {
            obj.insert("net_digest".into(), file_digest(n)?.into());
        }
        if let Some(n) = &config.label.net {
            let digest = file_digest(n).map_err(|e| anyhow!("label_net: {e}"))?;
            obj.insert("label_net_digest".into(), digest.into());
        }
        obj.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    }
    Ok((key_of(&value), value))
}

/// Replaces the sidecar of `out` with `p`, atomically (whole or not at all).
pub(super) fn write_progress(out: &Path, p: &Progress) -> Result<()> {
    let text = serde_json::to_string_pretty(p)? + "\n";
    write_atomic(&progress_path(out), text.as_bytes())
}

/// Whether the generation into `out` finished (its progress record says complete; a missing or
/// unreadable record: not finished).
pub fn is_complete(out: &Path) -> bool {
    read_progress(out)
        .ok()
        .flatten()
        .is_some_and(|p| p.complete)
}

pub(super) fn read_progress(out: &Path) -> Result<Option<Progress>> {
    let path = progress_path(out);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            anyhow!(
                "{}: unreadable progress record: {e} (use --force to start over)",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display()))),
    }
}
