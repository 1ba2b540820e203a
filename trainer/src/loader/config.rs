//! What a loader reads and how: the input files, cut into units, and the settings of reading,
//! filtering, shuffling and batching.

use anyhow::{Result, bail};
use std::path::PathBuf;

use crate::data::filter::FilterConfig;
use crate::data::{self, ErrorPolicy, Format, ReadOptions, Unit};

/// One input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
}

impl Input {
    /// An input whose format is given or else told by its extension.
    pub fn new(path: impl Into<PathBuf>, format: Option<Format>) -> Result<Input> {
        let path = path.into();
        let format = Format::resolve(format, &path).map_err(anyhow::Error::msg)?;
        Ok(Input { path, format })
    }
}

/// How a loader reads, filters, shuffles and batches (the same for positions and triplets).
#[derive(Clone, Debug)]
pub struct LoaderConfig {
    /// The files, mixed.
    pub inputs: Vec<Input>,
    /// Examples (positions or triplets) per batch.
    pub batch_size: usize,
    /// Threads of the loader's rayon pool (0: one per core).
    pub threads: usize,
    /// Units read at the same time.
    pub streams: usize,
    /// Records each stream reads per round.
    pub read_ahead: usize,
    /// Batches ready ahead of the consumer.
    pub queue: usize,
    /// Examples in the shuffle buffer (0: keep the order of the data).
    pub shuffle_buffer: usize,
    /// Seed of the unit order, the shuffle buffer and the random choices (skips, moves).
    pub seed: u64,
    /// Which positions to drop (for triplets: which p).
    pub filter: FilterConfig,
    /// Passes over the data (`None`: cycle forever).
    pub epochs: Option<u64>,
    /// Target size of a unit in bytes.
    pub unit_bytes: u64,
    /// Reader options (by default binary records are checked structurally, not with a move
    /// generator: the loader's hot path).
    pub read: ReadOptions,
    /// Skip bad records (counted, the first few kept in the report) or stop at the first.
    pub on_error: ErrorPolicy,
    /// Send the last, smaller batch at the end of the data.
    pub keep_last: bool,
}

impl Default for LoaderConfig {
    fn default() -> Self {
        LoaderConfig {
            inputs: Vec::new(),
            batch_size: 16384,
            threads: 0,
            streams: 8,
            read_ahead: 2048,
            queue: 4,
            shuffle_buffer: 262_144,
            seed: 0,
            filter: FilterConfig::quiet(),
            epochs: Some(1),
            unit_bytes: 1 << 20,
            read: ReadOptions { validate: false },
            on_error: ErrorPolicy::Skip,
            keep_last: true,
        }
    }
}

impl LoaderConfig {
    /// Refuses a configuration that cannot load anything.
    pub(crate) fn check(&self) -> Result<()> {
        if self.inputs.is_empty() {
            bail!("no input files");
        }
        if self.batch_size == 0 || self.streams == 0 || self.read_ahead == 0 {
            bail!("batch size, streams and read-ahead must be positive");
        }
        self.filter.check().map_err(anyhow::Error::msg)
    }
}

/// The units of `inputs` (byte ranges of about `unit_bytes`, in file order) and each file's
/// size in bytes (at least 1).
pub(crate) fn units_of(inputs: &[Input], unit_bytes: u64) -> Result<(Vec<Unit>, Vec<u64>)> {
    let mut units = Vec::new();
    let mut sizes = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let ranges = data::units(&input.path, input.format, unit_bytes)?;
        sizes.push(ranges.last().map_or(0, |r| r.1).max(1));
        units.extend(ranges.into_iter().map(|(start, end)| Unit {
            file: i,
            path: input.path.clone(),
            format: input.format,
            start,
            end,
        }));
    }
    Ok((units, sizes))
}
