//! Positions as examples: every record the filter keeps, encoded into a [`SparseBatch`].

use plugin_api::FeatureSet;

use super::{Examples, LoaderError};
use crate::data::Sample;
use crate::data::filter::Filter;
use crate::loader::batch::SparseBatch;

/// Examples that are single labelled positions (the score method's batches).
pub struct Positions;

impl Examples for Positions {
    type Example = Sample;
    type UnitState = ();
    type Part = SparseBatch;
    type Batch = SparseBatch;
    const NAME: &'static str = "loader";

    fn open(_seed: u64, _stream: u64) {}

    fn take(_: &mut (), record: Sample, filter: &mut Filter) -> Option<Sample> {
        filter.keep(&record).then_some(record)
    }

    fn skipped(_: &mut ()) {}

    fn encode(set: &FeatureSet, samples: &[Sample]) -> Result<SparseBatch, LoaderError> {
        let mut b = SparseBatch::with_capacity(set, samples.len());
        let mut scratch = Vec::with_capacity(set.max_active());
        for s in samples {
            b.push_sample(set, s, &mut scratch)
                .map_err(|e| LoaderError::Encode(e.to_string()))?;
        }
        Ok(b)
    }

    fn join(_: &FeatureSet, parts: Vec<SparseBatch>, _len: usize) -> SparseBatch {
        SparseBatch::concat(&parts)
    }

    fn len(batch: &SparseBatch) -> usize {
        batch.len
    }
}
