//! The one thing that differs between loaders: what a unit's records become (a position, a
//! PQR triplet) and how a batch of them is encoded.

use plugin_api::FeatureSet;

use super::LoaderError;
use crate::data::Sample;
use crate::data::filter::Filter;

/// What a loader makes of the records of one unit, and how it encodes them. The reading,
/// filtering, shuffling, batching and queueing around it are the same for every kind
/// ([`super::Loader`]).
pub trait Examples: Send + Sync + 'static {
    /// One training example.
    type Example: Clone + Send + Sync;
    /// What a unit remembers between its records (the previous record, a random stream).
    type UnitState: Send;
    /// The encoding of a run of examples, made on one pool thread.
    type Part: Send;
    /// An encoded batch.
    type Batch: Send + 'static;
    /// The name of the loader and its threads.
    const NAME: &'static str;

    /// The state of a unit just opened; `stream` numbers the unit in the run (epoch × units +
    /// unit), `seed` is the run's.
    fn open(seed: u64, stream: u64) -> Self::UnitState;

    /// The example this record gives, if any, given the unit's filter.
    fn take(
        state: &mut Self::UnitState,
        record: Sample,
        filter: &mut Filter,
    ) -> Option<Self::Example>;

    /// A bad record was skipped in the unit: whatever spans records starts again.
    fn skipped(state: &mut Self::UnitState);

    /// Encodes a run of examples through the feature set.
    fn encode(set: &FeatureSet, examples: &[Self::Example]) -> Result<Self::Part, LoaderError>;

    /// The batch of `len` examples whose runs, in order, are `parts`.
    fn join(set: &FeatureSet, parts: Vec<Self::Part>, len: usize) -> Self::Batch;

    /// The number of examples in a batch.
    fn len(batch: &Self::Batch) -> usize;
}
