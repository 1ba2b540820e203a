//! A stage's name, as `trainer run --stage` takes it: one struct per kind of stage holding
//! its place in the manifest (which dataset, which network and run, which evaluation), and
//! [`StageId`], the one enum over them, written and parsed as `data:DATASET`,
//! `train:EXPERIMENT:NETWORK:RUN`, ...
//!
//! Where a stage's output lives is not here: it is decided by the content key of its inputs
//! when it runs (see [`super::super::stage_key`]), exactly as in a local run, so both executors
//! share every result.

use anyhow::{Result, anyhow};
use std::fmt;
use std::str::FromStr;

/// `data:DATASET`: a dataset generated (or its files named).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataStage {
    /// The dataset's name.
    pub dataset: String,
}

/// `data:DATASET:SHARD`: one shard of a dataset generated in shards (`shards`), which the
/// dataset's own stage then finds done.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataShard {
    /// The dataset's name.
    pub dataset: String,
    /// The shard, from 0.
    pub shard: u64,
}

/// `train:EXPERIMENT:NETWORK:RUN`: one training run of one network of an experiment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TrainStage {
    /// The experiment's name.
    pub experiment: String,
    /// The network's name in the experiment (`Entry::name`).
    pub entry: String,
    /// The run, from 1.
    pub run: u64,
}

/// `eval:EXPERIMENT:EVALUATION`: one evaluation of an experiment's networks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EvaluateStage {
    /// The experiment's name.
    pub experiment: String,
    /// The evaluation's name.
    pub evaluation: String,
}

/// `eval:EXPERIMENT:EVALUATION:BATCH`: one batch of the games of an evaluation's tournament
/// played in batches (`batches`), which the evaluation's own stage then finds played.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EvaluateBatch {
    /// The experiment's name.
    pub experiment: String,
    /// The evaluation's name.
    pub evaluation: String,
    /// The batch, from 0.
    pub batch: usize,
}

/// `report:EXPERIMENT`: the experiment's report from its finished stages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReportStage {
    /// The experiment's name.
    pub experiment: String,
}

/// `ladder:SWEEP`: the data ladder of a sweep over `train_positions` (one rung per cell), from
/// the cells' finished stages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LadderStage {
    /// The sweep's name (the `[[experiment]]` table's).
    pub group: String,
}

/// One stage, as `trainer run --stage` names it: one variant per kind, each holding its kind's
/// struct (whose `Stage` implementation says what the kind needs and does).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StageId {
    /// A dataset.
    Data(DataStage),
    /// One shard of a dataset.
    DataShard(DataShard),
    /// A training run.
    Train(TrainStage),
    /// An evaluation.
    Evaluate(EvaluateStage),
    /// One batch of an evaluation's games.
    EvaluateBatch(EvaluateBatch),
    /// An experiment's report.
    Report(ReportStage),
    /// A sweep's data ladder.
    Ladder(LadderStage),
}

/// The [`From`] of each kind's struct into [`StageId`].
macro_rules! into_stage_id {
    ($($ty:ident => $variant:ident),* $(,)?) => {
        $(impl From<$ty> for StageId {
            fn from(stage: $ty) -> StageId {
                StageId::$variant(stage)
            }
        })*
    };
}

into_stage_id!(
    DataStage => Data,
    DataShard => DataShard,
    TrainStage => Train,
    EvaluateStage => Evaluate,
    EvaluateBatch => EvaluateBatch,
    ReportStage => Report,
    LadderStage => Ladder,
);

impl fmt::Display for StageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StageId::Data(DataStage { dataset }) => write!(f, "data:{dataset}"),
            StageId::DataShard(DataShard { dataset, shard }) => {
                write!(f, "data:{dataset}:{shard}")
            }
            StageId::Train(TrainStage {
                experiment,
                entry,
                run,
            }) => write!(f, "train:{experiment}:{entry}:{run}"),
            StageId::Evaluate(EvaluateStage {
                experiment,
                evaluation,
            }) => write!(f, "eval:{experiment}:{evaluation}"),
            StageId::EvaluateBatch(EvaluateBatch {
                experiment,
                evaluation,
                batch,
            }) => write!(f, "eval:{experiment}:{evaluation}:{batch}"),
            StageId::Report(ReportStage { experiment }) => write!(f, "report:{experiment}"),
            StageId::Ladder(LadderStage { group }) => write!(f, "ladder:{group}"),
        }
    }
}

impl FromStr for StageId {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self> {
        let parts: Vec<&str> = s.split(':').collect();
        let bad = || {
            anyhow!(
                "stage '{s}': expected data:DATASET, data:DATASET:SHARD, train:EXPERIMENT:NETWORK:RUN, eval:EXPERIMENT:EVALUATION, eval:EXPERIMENT:EVALUATION:BATCH, report:EXPERIMENT or ladder:SWEEP"
            )
        };
        if parts[1..].iter().any(|p| p.is_empty()) {
            return Err(bad());
        }
        let name = |x: &&str| x.to_string();
        Ok(match parts.as_slice() {
            ["data", d] => DataStage { dataset: name(d) }.into(),
            ["data", d, i] => DataShard {
                dataset: name(d),
                shard: i.parse().map_err(|_| bad())?,
            }
            .into(),
            ["train", e, n, r] => TrainStage {
                experiment: name(e),
                entry: name(n),
                run: r.parse().ok().filter(|&r| r > 0).ok_or_else(bad)?,
            }
            .into(),
            ["eval", e, v] => EvaluateStage {
                experiment: name(e),
                evaluation: name(v),
            }
            .into(),
            ["eval", e, v, b] => EvaluateBatch {
                experiment: name(e),
                evaluation: name(v),
                batch: b.parse().map_err(|_| bad())?,
            }
            .into(),
            ["report", e] => ReportStage {
                experiment: name(e),
            }
            .into(),
            ["ladder", g] => LadderStage { group: name(g) }.into(),
            _ => return Err(bad()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_names_round_trip_and_bad_ones_are_refused() {
        for text in [
            "data:stockfish-12k",
            "data:stockfish-12k:3",
            "train:king:halfka_v2_hm^@sfnnv5:2",
            "eval:threats:threats-nodes",
            "eval:threats:threats-nodes:7",
            "report:default",
            "ladder:ladder",
        ] {
            let id: StageId = text.parse().unwrap();
            assert_eq!(id.to_string(), text);
        }
        for bad in [
            "",
            "data",
            "data:",
            "train:x:y:0",
            "train:x:y:z",
            "eval:x",
            "nope:x",
        ] {
            let err = bad.parse::<StageId>().unwrap_err().to_string();
            assert!(err.starts_with(&format!("stage '{bad}'")), "{err}");
        }
    }
}
