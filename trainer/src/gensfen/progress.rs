//! The resume record (`OUT.progress`): the configuration and its identity, the games done and
//! the bytes committed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::*;
use crate::data::Format;

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
) -> Result<(String, serde_json::Value), String> {
    let file_crc = |p: &Path| -> Result<String, String> {
        let bytes = std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        Ok(format!("{:08x}", crc32fast::hash(&bytes)))
    };
    let mut c = config.clone();
    c.threads = 0;
    c.plugin_dir = None;
    let mut value = serde_json::to_value(&c).map_err(|e| e.to_string())?;
    if let Some(obj) = value.as_object_mut() {
        obj.remove("threads");
        obj.remove("plugin_dir");
        obj.insert("format".into(), format.name().into());
        if let Some(b) = &config.book {
            obj.insert("book_crc32".into(), file_crc(b)?.into());
        }
        if let Some(n) = &config.net {
            obj.insert("net_crc32".into(), file_crc(n)?.into());
        }
        obj.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    }
    let text = serde_json::to_string(&value).map_err(|e| e.to_string())?;
    let h = fnv1a(text.as_bytes());
    Ok((format!("{h:016x}"), value))
}

pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub(super) fn write_progress(out: &Path, p: &Progress) -> Result<(), String> {
    let path = progress_path(out);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let text = serde_json::to_string_pretty(p).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub(super) fn read_progress(out: &Path) -> Result<Option<Progress>, String> {
    let path = progress_path(out);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            format!(
                "{}: unreadable progress record: {e} (use --force to start over)",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}
