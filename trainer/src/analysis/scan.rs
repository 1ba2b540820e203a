//! One pass over training files in parallel: the units of all inputs are read on a rayon pool,
//! filtered, and folded into per-unit accumulators that are merged in file order (so results
//! that depend on order, like the game count of [`crate::analysis::stats`], do not depend on the number
//! of threads). Used by `trainer stats` and `trainer wdl-fit`.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::data::filter::{Filter, FilterConfig, FilterCounts};
use crate::data::{self, DataError, ErrorPolicy, ReadOptions, Sample, Unit};
use crate::invalid_setting::InvalidSetting;
use crate::loader::Input;

/// How to read.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Target unit size in bytes.
    pub unit_bytes: u64,
    /// Reader options.
    pub read: ReadOptions,
    /// Which positions to drop.
    pub filter: FilterConfig,
    /// Skip bad records or stop at the first.
    pub on_error: ErrorPolicy,
    /// Threads (0: one per core).
    pub threads: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            unit_bytes: 4 << 20,
            read: ReadOptions::default(),
            filter: FilterConfig::default(),
            on_error: ErrorPolicy::Skip,
            threads: 0,
        }
    }
}

/// What a scan read, dropped and skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanSummary {
    /// Records decoded.
    pub read: u64,
    /// What the filters dropped (and kept).
    pub filter: FilterCounts,
    /// Bad records skipped.
    pub errors: u64,
    /// The first bad records, in file order (at most [`ScanSummary::KEPT_ERRORS`]).
    pub first_errors: Vec<DataError>,
}

impl ScanSummary {
    /// How many bad records are kept with their messages.
    pub const KEPT_ERRORS: usize = 20;

    fn merge(&mut self, o: ScanSummary) {
        self.read += o.read;
        self.filter.merge(&o.filter);
        self.errors += o.errors;
        let room = Self::KEPT_ERRORS.saturating_sub(self.first_errors.len());
        self.first_errors
            .extend(o.first_errors.into_iter().take(room));
    }
}

/// The units of all inputs, in input order.
pub fn all_units(inputs: &[Input], unit_bytes: u64) -> Result<Vec<Unit>, DataError> {
    let mut units = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        for (start, end) in data::units(&input.path, input.format, unit_bytes)? {
            units.push(Unit {
                file: i,
                path: input.path.clone(),
                format: input.format,
                start,
                end,
            });
        }
    }
    Ok(units)
}

/// Why a scan stopped.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The filter's settings are refused.
    #[error(transparent)]
    Filter(#[from] InvalidSetting),
    /// A file could not be read, or a bad record under [`ErrorPolicy::Fail`].
    #[error(transparent)]
    Data(#[from] DataError),
    /// The worker threads could not be started.
    #[error("cannot start the scan's threads: {0}")]
    Threads(String),
    /// The fold refused a sample.
    #[error("{0}")]
    Fold(String),
    /// Skipped after another unit failed (never returned when that unit's error is known).
    #[error("stopped")]
    Stopped,
}

/// Reads every unit, folding the kept samples into accumulators made by `init`, merged in order
/// by `merge`. `done(bytes)` is called after each unit (for progress). Stops at the first error
/// (a bad record under [`ErrorPolicy::Fail`], an unreadable file, or an error of `fold`).
pub fn scan<A, I, F, M, P>(
    inputs: &[Input],
    options: &ScanOptions,
    init: I,
    fold: F,
    merge: M,
    done: P,
) -> Result<(A, ScanSummary), ScanError>
where
    A: Send,
    I: Fn() -> A + Sync,
    F: Fn(&mut A, &Sample) -> Result<(), String> + Sync,
    M: Fn(&mut A, A) + Sync,
    P: Fn(u64) + Sync,
{
    options.filter.check()?;
    let units = all_units(inputs, options.unit_bytes)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(arena::workers::workers(options.threads))
        .build()
        .map_err(|e| ScanError::Threads(e.to_string()))?;
    let abort = AtomicBool::new(false);
    let one = |(i, unit): (usize, &Unit)| -> Result<(A, ScanSummary), ScanError> {
        let mut acc = init();
        let mut summary = ScanSummary::default();
        if abort.load(Ordering::Relaxed) {
            return Err(ScanError::Stopped);
        }
        let mut filter = Filter::new(&options.filter, i as u64);
        let reader = data::open_reader(
            &unit.path,
            unit.format,
            Some((unit.start, unit.end)),
            options.read,
        )?;
        for item in reader {
            match item {
                Ok(s) => {
                    summary.read += 1;
                    if filter.keep(&s) {
                        fold(&mut acc, &s).map_err(ScanError::Fold)?;
                    }
                }
                Err(e) => {
                    if options.on_error == ErrorPolicy::Fail {
                        abort.store(true, Ordering::Relaxed);
                        return Err(e.into());
                    }
                    summary.errors += 1;
                    if summary.first_errors.len() < ScanSummary::KEPT_ERRORS {
                        summary.first_errors.push(e);
                    }
                }
            }
        }
        summary.filter = *filter.counts();
        done(unit.end - unit.start);
        Ok((acc, summary))
    };
    pool.install(|| {
        units.par_iter().enumerate().map(one).reduce(
            || Ok((init(), ScanSummary::default())),
            |a, b| match (a, b) {
                (Ok((mut x, mut sx)), Ok((y, sy))) => {
                    merge(&mut x, y);
                    sx.merge(sy);
                    Ok((x, sx))
                }
                // Keep the real error, not the one of a unit skipped after it.
                (Err(ScanError::Stopped), Err(f)) => Err(f),
                (Err(e), _) | (_, Err(e)) => Err(e),
            },
        )
    })
}
