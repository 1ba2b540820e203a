//! The output file: batches of whole games, encoded and appended in game order, each commit
//! recorded in the resume record.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::progress::{Progress, write_progress};
use crate::data::bin::BinWriter;
use crate::data::binpack::BinpackWriter;
use crate::data::text::TextWriter;
use crate::data::{DataErrorKind, Format, Sample, SampleWriter};

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
            Err(e) if e.kind == DataErrorKind::Unrepresentable => Ok(false),
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
pub(super) struct ShardOutput<'a> {
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
    /// The keys of written positions, when duplicates are dropped.
    pub(super) seen: Option<SeenKeys>,
    /// Positions dropped as duplicates by this run.
    pub(super) duplicates: u64,
}

/// The keys of the positions written so far, Stockfish's `gensfen` way: one slot per key
/// modulo the table's size, so memory stays bounded; a position whose key is in its slot is a
/// duplicate (an older key in the slot is forgotten when a new one takes it). Filled in game
/// order by the one writer, and refilled from the file's own positions on resuming, it holds
/// the same keys whatever the threads and interruptions.
pub(super) struct SeenKeys {
    slots: Vec<u64>,
}

impl SeenKeys {
    /// A table of `mb` MiB.
    pub(super) fn new(mb: usize) -> Self {
        SeenKeys {
            slots: vec![0; (mb << 20) / std::mem::size_of::<u64>()],
        }
    }

    fn slot(&self, key: u64) -> usize {
        (key % self.slots.len() as u64) as usize
    }

    /// Whether `key` was written before.
    pub(super) fn contains(&self, key: u64) -> bool {
        self.slots[self.slot(key)] == key
    }

    /// Records `key` as written.
    pub(super) fn insert(&mut self, key: u64) {
        let i = self.slot(key);
        self.slots[i] = key;
    }

    /// Records the positions of the first `bytes` of the output `path` (its committed part),
    /// in order, as the run that wrote them did.
    pub(super) fn refill(&mut self, path: &Path, format: Format, bytes: u64) -> Result<()> {
        let reader = crate::data::open_reader(
            path,
            format,
            Some((0, bytes)),
            crate::data::ReadOptions::default(),
        )?;
        for sample in reader {
            let pos = sample?.to_chess().map_err(anyhow::Error::msg)?;
            self.insert(host::engine::zobrist::hash(&pos));
        }
        Ok(())
    }
}

impl ShardOutput<'_> {
    /// Adds a finished game's samples (with their position keys) to the batch, up to `limit`
    /// positions in the file, dropping duplicates when asked to; returns how many it added.
    pub(super) fn add_game(
        &mut self,
        samples: &[Sample],
        keys: &[u64],
        limit: Option<u64>,
    ) -> Result<u64> {
        let batch = self
            .batch
            .get_or_insert_with(|| BatchWriter::new(self.format, &self.name));
        let mut written = 0;
        for (s, &key) in samples.iter().zip(keys) {
            if let Some(l) = limit
                && self.positions + self.pending_positions >= l
            {
                break;
            }
            if let Some(seen) = &self.seen
                && seen.contains(key)
            {
                self.duplicates += 1;
                continue;
            }
            if batch.write(s)? {
                if let Some(seen) = &mut self.seen {
                    seen.insert(key);
                }
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
        )?;
        // Every label this program writes is in centipawns (the host's evaluators and UCI
        // engines speak them): recorded beside the finished file.
        if complete {
            crate::data::score_units::record(self.out, nnue::units::ScoreUnits::Centipawns)?;
        }
        Ok(())
    }
}
