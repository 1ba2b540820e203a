//! The output file: batches of whole games, encoded and appended in game order, each commit
//! recorded in the resume record.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::*;
use crate::data::bin::BinWriter;
use crate::data::binpack::BinpackWriter;
use crate::data::text::TextWriter;
use crate::data::{ErrorKind, Format, Sample, SampleWriter};

/// One batch of whole games, encoded in the output format.
pub(super) enum BatchWriter {
    Text(Box<TextWriter<Vec<u8>>>),
    Bin(BinWriter<Vec<u8>>),
    Binpack(Box<BinpackWriter<Vec<u8>>>),
}

impl BatchWriter {
    pub(super) fn new(format: Format, name: &str) -> Self {
        match format {
            Format::Text => {
                BatchWriter::Text(Box::new(TextWriter::new(name.into(), Vec::new(), false)))
            }
            Format::Compact => {
                BatchWriter::Text(Box::new(TextWriter::new(name.into(), Vec::new(), true)))
            }
            Format::Bin => BatchWriter::Bin(BinWriter::new(name.into(), Vec::new())),
            Format::Binpack => {
                BatchWriter::Binpack(Box::new(BinpackWriter::new(name.into(), Vec::new())))
            }
        }
    }

    pub(super) fn writer(&mut self) -> &mut dyn SampleWriter {
        match self {
            BatchWriter::Text(w) => w.as_mut(),
            BatchWriter::Bin(w) => w,
            BatchWriter::Binpack(w) => w.as_mut(),
        }
    }

    /// Writes a sample; `false` when the format cannot hold it (skipped).
    pub(super) fn write(&mut self, s: &Sample) -> Result<bool> {
        match self.writer().write(s) {
            Ok(()) => Ok(true),
            Err(e) if e.kind == ErrorKind::Unrepresentable => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) fn finish(mut self) -> Result<Vec<u8>> {
        self.writer().finish()?;
        Ok(match self {
            BatchWriter::Text(w) => (*w).into_inner(),
            BatchWriter::Bin(w) => w.into_inner(),
            BatchWriter::Binpack(w) => (*w).into_inner().unwrap_or_default(),
        })
    }
}

/// The output file, its sidecar and the current batch.
pub(super) struct Output<'a> {
    pub(super) out: &'a Path,
    pub(super) name: String,
    pub(super) file: File,
    pub(super) format: Format,
    pub(super) hash: String,
    pub(super) config: serde_json::Value,
    pub(super) batch: Option<BatchWriter>,
    pub(super) batch_positions: u64,
    /// Committed state.
    pub(super) games: u64,
    pub(super) positions: u64,
    pub(super) bytes: u64,
    /// Pending (in the batch).
    pub(super) pending_games: u64,
    pub(super) pending_positions: u64,
    /// Commits made, and the test hook's [`ABORT_AFTER_COMMITS_ENV`].
    pub(super) commits: u64,
    pub(super) abort_after_commits: Option<u64>,
}

impl Output<'_> {
    pub(super) fn add_game(&mut self, samples: &[Sample], limit: Option<u64>) -> Result<u64> {
        let batch = self
            .batch
            .get_or_insert_with(|| BatchWriter::new(self.format, &self.name));
        let mut written = 0;
        for s in samples {
            if let Some(l) = limit
                && self.positions + self.pending_positions >= l
            {
                break;
            }
            if batch.write(s)? {
                self.pending_positions += 1;
                self.batch_positions += 1;
                written += 1;
            }
        }
        self.pending_games += 1;
        Ok(written)
    }

    /// Appends the batch to the file and records the new state in the sidecar.
    pub(super) fn commit(&mut self, complete: bool) -> Result<()> {
        if let Some(batch) = self.batch.take() {
            let bytes = batch.finish()?;
            self.file
                .write_all(&bytes)
                .and_then(|()| self.file.flush())
                .with_context(|| format!("cannot write {}", self.out.display()))?;
            self.bytes += bytes.len() as u64;
        }
        if self.abort_after_commits == Some(self.commits) {
            std::process::abort();
        }
        self.commits += 1;
        self.games += self.pending_games;
        self.positions += self.pending_positions;
        self.pending_games = 0;
        self.pending_positions = 0;
        self.batch_positions = 0;
        let _ = self.file.sync_data();
        write_progress(
            self.out,
            &Progress {
                version: 1,
                config_hash: self.hash.clone(),
                games: self.games,
                positions: self.positions,
                bytes: self.bytes,
                complete,
                config: self.config.clone(),
            },
        )
    }
}
