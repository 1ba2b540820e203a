//! What the stages of a run record and hand on: a dataset's files, a training run's network
//! and losses (each stored in its stage's `done.json`, paths inside the output folder relative
//! to it), and what a run remembers of the stages it looked up ([`Handover`]), so that a stage
//! reads its needs' records instead of looking them up again.

use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::cache::{read_path, stored_path};
use super::evaluate::EvaluationResult;
use super::lookup::Lookup;
use super::stages::StageId;

/// A dataset's files once it exists.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct DataRecord {
    /// Training files.
    pub(super) train: Vec<PathBuf>,
    /// Validation files.
    pub(super) val: Vec<PathBuf>,
    /// Positions generated (0 for named files).
    pub(super) positions: u64,
    /// Seconds the generation took.
    pub(super) seconds: f64,
}

impl DataRecord {
    /// The record of the files `train` and `val`, their count and generation time not measured
    /// (named files, or the files a generation will write).
    pub(super) fn listed(train: Vec<PathBuf>, val: Vec<PathBuf>) -> DataRecord {
        DataRecord {
            train,
            val,
            positions: 0,
            seconds: 0.0,
        }
    }

    /// The record as its stage stores it: paths inside the output folder `out` relative to it.
    pub(super) fn stored(&self, out: &Path) -> DataRecord {
        let rel = |p: &Vec<PathBuf>| p.iter().map(|p| stored_path(p, out)).collect();
        DataRecord {
            train: rel(&self.train),
            val: rel(&self.val),
            ..self.clone()
        }
    }

    /// A stored record as this run reads it (paths against the output folder `out`).
    pub(super) fn read(self, out: &Path) -> DataRecord {
        let abs = |p: Vec<PathBuf>| p.iter().map(|p| read_path(p, out)).collect();
        DataRecord {
            train: abs(self.train),
            val: abs(self.val),
            ..self
        }
    }
}

/// What a finished training run leaves.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct TrainRecord {
    /// Epochs trained.
    pub(super) epochs: u64,
    /// The epoch handed over: the one of lowest validation loss (1-based).
    pub(super) best_epoch: u64,
    /// Its network.
    pub(super) net: PathBuf,
    /// The lowest validation loss.
    pub(super) min_val_loss: f64,
    /// Every epoch's validation loss.
    pub(super) val_losses: Vec<f64>,
    /// Seconds of training.
    pub(super) seconds: f64,
}

impl TrainRecord {
    /// A stored record as this run reads it (its network against the output folder `out`).
    pub(super) fn read(self, out: &Path) -> TrainRecord {
        TrainRecord {
            net: read_path(&self.net, out),
            ..self
        }
    }
}

/// What a stage hands to the stages that need it.
#[derive(Clone, Debug)]
pub(super) enum Handed {
    /// A dataset's files.
    Data(DataRecord),
    /// A training run's network and losses.
    Train(TrainRecord),
    /// An evaluation's results.
    Evaluation(EvaluationResult),
}

/// The records of the stages a run has looked up (found done or computed), each once per
/// process, with the folders of the done stages met on the way: a stage that needs another
/// (an evaluation its training runs, a report its runs and evaluations, a run the one it
/// starts from) reads its record here, filled in the graph's order, instead of looking it up
/// again. A process that runs one stage (a Slurm job) looks each need up once.
#[derive(Debug, Default)]
pub struct Handover {
    records: Mutex<HashMap<StageId, (Handed, Vec<PathBuf>)>>,
}

impl Handover {
    /// The record of stage `id`: remembered, or made by `make` (which may need other stages)
    /// and remembered. Either way the folders met making it count as met again in `lookup`,
    /// so that a report lists every stage folder it was made from.
    pub(super) fn get_or(
        &self,
        id: &StageId,
        lookup: &Lookup,
        make: impl FnOnce() -> Result<Handed>,
    ) -> Result<Handed> {
        let remembered = self.lock().get(id).cloned();
        if let Some((record, met)) = remembered {
            lookup.met_again(&met);
            return Ok(record);
        }
        let from = lookup.count();
        let record = make()?;
        let met = lookup.met_since(from);
        self.lock().insert(id.clone(), (record.clone(), met));
        Ok(record)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<StageId, (Handed, Vec<PathBuf>)>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A stage's record is made once per run; a later need reads it, and the folders met
    /// making it count as met again (a report lists them all).
    #[test]
    fn a_stage_is_looked_up_once_and_its_folders_count_again() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("data/d-1");
        std::fs::create_dir_all(&folder).unwrap();
        super::super::cache::mark_done(&folder, &DataRecord::listed(vec![], vec![])).unwrap();
        let (handover, lookup) = (Handover::default(), Lookup::compute());
        let id: StageId = "data:d".parse().unwrap();
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            let record = lookup.done::<DataRecord>(&folder)?.expect("done");
            Ok(Handed::Data(record))
        };
        for _ in 0..3 {
            let handed = handover.get_or(&id, &lookup, make).unwrap();
            assert!(matches!(handed, Handed::Data(_)));
        }
        assert_eq!(made.get(), 1, "looked up once");
        assert_eq!(lookup.count(), 3, "met each time it was read");
        assert_eq!(lookup.met_since(1), vec![folder.clone()]);
        // A stage that fails is not remembered: the next need tries again.
        let other: StageId = "data:e".parse().unwrap();
        assert!(
            handover
                .get_or(&other, &lookup, || anyhow::bail!("missing"))
                .is_err()
        );
        let again = handover.get_or(&other, &lookup, || {
            Ok(Handed::Data(DataRecord::listed(vec![], vec![])))
        });
        assert!(again.is_ok());
    }
}
