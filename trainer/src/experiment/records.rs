//! What the stages of a run record and hand on: a dataset's files, a training run's network
//! and losses (each stored in its stage's `done.json`, paths inside the output folder relative
//! to it), an evaluation's results, a report; and what a run remembers of the stages it looked
//! up ([`Handover`]), so that a stage reads its needs' records instead of looking them up
//! again.

use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nnue::units::ScoreUnits;
use serde::{Deserialize, Serialize};

use super::cache::{read_path, stored_path};
use super::evaluate::EvaluationResult;
use super::lookup::Lookup;
use super::report::ExperimentReport;

/// A dataset's files once it exists.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct DataRecord {
    /// Training files.
    pub(crate) train: Vec<PathBuf>,
    /// Validation files.
    pub(crate) val: Vec<PathBuf>,
    /// Positions generated (0 for named files).
    pub(crate) positions: u64,
    /// Seconds the generation took.
    pub(crate) seconds: f64,
    /// The units of the training files' scores (centipawns, every generated dataset's, is not
    /// written).
    #[serde(default, skip_serializing_if = "crate::checked::is_zero")]
    pub(crate) units: ScoreUnits,
}

impl DataRecord {
    /// The record of the files `train` and `val`, their count and generation time not measured
    /// (named files, or the files a generation will write).
    pub(crate) fn listed(train: Vec<PathBuf>, val: Vec<PathBuf>) -> DataRecord {
        DataRecord {
            train,
            val,
            positions: 0,
            seconds: 0.0,
            units: ScoreUnits::Centipawns,
        }
    }

    /// The record as its stage stores it: paths inside the output folder `out` relative to it.
    pub(crate) fn stored(&self, out: &Path) -> DataRecord {
        let rel = |p: &Vec<PathBuf>| p.iter().map(|p| stored_path(p, out)).collect();
        DataRecord {
            train: rel(&self.train),
            val: rel(&self.val),
            ..self.clone()
        }
    }

    /// A stored record as this run reads it (paths against the output folder `out`).
    pub(crate) fn read(self, out: &Path) -> DataRecord {
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
pub(crate) struct TrainRecord {
    /// Epochs trained.
    pub(crate) epochs: u64,
    /// The epoch handed over: the one of lowest validation loss (1-based).
    pub(crate) best_epoch: u64,
    /// Its network.
    pub(crate) net: PathBuf,
    /// The lowest validation loss.
    pub(crate) min_val_loss: f64,
    /// Every epoch's validation loss.
    pub(crate) val_losses: Vec<f64>,
    /// Seconds of training.
    pub(crate) seconds: f64,
}

impl TrainRecord {
    /// A stored record as this run reads it (its network against the output folder `out`).
    pub(crate) fn read(self, out: &Path) -> TrainRecord {
        TrainRecord {
            net: read_path(&self.net, out),
            ..self
        }
    }
}

/// What a stage hands to the stages that need it (or to the executor: a report).
#[derive(Clone, Debug)]
pub(crate) enum Handed {
    /// A dataset's files.
    Data(DataRecord),
    /// A training run's network and losses.
    Train(TrainRecord),
    /// An evaluation's results.
    Evaluation(EvaluationResult),
    /// An experiment's report.
    Report(Box<ExperimentReport>),
    /// Nothing but that it is done (a shard, a batch of games, a ladder).
    Done,
}

/// The record one kind of stage hands on, as [`Handed`] holds it.
pub(crate) trait StageRecord: Sized {
    /// As handed on.
    fn handed(self) -> Handed;
    /// Back from what was handed on; `None` if another kind's record.
    fn of(handed: Handed) -> Option<Self>;
}

/// [`StageRecord`] for a type held by one variant of [`Handed`].
macro_rules! record {
    ($ty:ty, $variant:ident) => {
        impl StageRecord for $ty {
            fn handed(self) -> Handed {
                Handed::$variant(self)
            }
            fn of(handed: Handed) -> Option<Self> {
                match handed {
                    Handed::$variant(record) => Some(record),
                    _ => None,
                }
            }
        }
    };
}

record!(DataRecord, Data);
record!(TrainRecord, Train);
record!(EvaluationResult, Evaluation);
record!(Box<ExperimentReport>, Report);

impl StageRecord for () {
    fn handed(self) -> Handed {
        Handed::Done
    }
    fn of(handed: Handed) -> Option<Self> {
        matches!(handed, Handed::Done).then_some(())
    }
}

/// The records of the stages a run has looked up (found done or computed), each once per
/// process and by the stage's name, with the folders of the done stages met on the way: a stage that needs another
/// (an evaluation its training runs, a report its runs and evaluations, a run the one it
/// starts from) reads its record here, filled in the graph's order, instead of looking it up
/// again. A process that runs one stage (a Slurm job) looks each need up once.
#[derive(Debug, Default)]
pub struct Handover {
    records: Mutex<HashMap<String, (Handed, Vec<PathBuf>)>>,
}

impl Handover {
    /// The record of the stage named `id`: remembered, or made by `make` (which may need other
    /// stages) and remembered. Either way the folders met making it count as met again in `lookup`,
    /// so that a report lists every stage folder it was made from.
    pub(crate) fn get_or(
        &self,
        id: &str,
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
        self.lock().insert(id.to_string(), (record.clone(), met));
        Ok(record)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Handed, Vec<PathBuf>)>> {
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
        let id = "data:d";
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            let record = lookup.done::<DataRecord>(&folder)?.expect("done");
            Ok(Handed::Data(record))
        };
        for _ in 0..3 {
            let handed = handover.get_or(id, &lookup, make).unwrap();
            assert!(matches!(handed, Handed::Data(_)));
        }
        assert_eq!(made.get(), 1, "looked up once");
        assert_eq!(lookup.count(), 3, "met each time it was read");
        assert_eq!(lookup.met_since(1), vec![folder.clone()]);
        // A stage that fails is not remembered: the next need tries again.
        let other = "data:e";
        assert!(
            handover
                .get_or(other, &lookup, || anyhow::bail!("missing"))
                .is_err()
        );
        let again = handover.get_or(other, &lookup, || {
            Ok(Handed::Data(DataRecord::listed(vec![], vec![])))
        });
        assert!(again.is_ok());
    }
}
