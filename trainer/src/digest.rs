//! The project's one hashing scheme for identities: SHA-256, shortened to 16 hex digits, of a
//! value's canonical JSON or of a file's bytes. It names `trainer run`'s cached stages and a
//! `gensfen` run's configuration (its resume record); stable across Rust versions and machines,
//! unlike `std`'s hasher. (Checkpoints carry a CRC-32 as well: a checksum against torn files,
//! not an identity.)

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// A 16-hex-digit key of a stage's inputs: SHA-256 of their canonical JSON.
pub fn key_of(inputs: &impl Serialize) -> String {
    let json = serde_json::to_vec(inputs).expect("stage inputs serialize");
    hex16(&Sha256::digest(&json))
}

/// A 16-hex-digit SHA-256 digest of a file's bytes (networks named by content, not path).
pub fn file_digest(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex16(&hasher.finalize()))
}

fn hex16(bytes: &[u8]) -> String {
    bytes[..8].iter().map(|b| format!("{b:02x}")).collect()
}
