//! What a loader tells: why it stopped early, and what it did so far.

use std::fmt;

use crate::data::DataError;
use crate::data::filter::FilterCounts;

/// Why the loader stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoaderError {
    /// A bad record under [`crate::data::ErrorPolicy::Fail`], or a file that cannot be read.
    Data(DataError),
    /// A feature block failed.
    Encode(String),
}

impl fmt::Display for LoaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoaderError::Data(e) => write!(f, "{e}"),
            LoaderError::Encode(e) => write!(f, "encoding failed: {e}"),
        }
    }
}

impl std::error::Error for LoaderError {}

/// What the loader did so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoaderReport {
    /// Records decoded.
    pub read: u64,
    /// Examples (positions or triplets) sent in batches.
    pub sent: u64,
    /// Batches sent.
    pub batches: u64,
    /// What the filters dropped.
    pub filter: FilterCounts,
    /// Bad records skipped (and units that could not be opened).
    pub errors: u64,
    /// The first bad records (at most [`LoaderReport::KEPT_ERRORS`]).
    pub first_errors: Vec<DataError>,
    /// Epochs started.
    pub epoch: u64,
    /// Units finished.
    pub units_done: u64,
}

impl LoaderReport {
    /// How many bad records are kept with their messages.
    pub const KEPT_ERRORS: usize = 20;

    /// Counts a skipped bad record, keeping the first few.
    pub(crate) fn add_error(&mut self, e: DataError) {
        self.errors += 1;
        if self.first_errors.len() < Self::KEPT_ERRORS {
            self.first_errors.push(e);
        }
    }
}
