//! A manifest run as a graph of stages: data → training runs → evaluations → report (→ the
//! ladder of a sweep over `train_positions`, after every rung's report). The local
//! executor walks an experiment in this order in one process; the Slurm executor
//! ([`super::slurm`]) submits each stage that is not done as a job that runs
//! `trainer run MANIFEST --stage ID`, after the jobs of the stages it needs.
//!
//! A stage's identity here is its place in the manifest (which dataset, which network and run,
//! which evaluation); where its output lives is decided by the content key of its inputs when
//! it runs (see [`super::cache`]), exactly as in a local run, so both executors share every
//! result.

use anyhow::{Result, anyhow};
use std::fmt;
use std::str::FromStr;

use super::manifest::{Entry, Experiment, Manifest};
use super::stage_kind::StageKind;

/// One stage, as `trainer run --stage` names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StageId {
    /// `data:DATASET`: a dataset generated (or its files named).
    Data {
        /// The dataset's name.
        dataset: String,
    },
    /// `data:DATASET:SHARD`: one shard of a dataset generated in shards (`shards`), which
    /// the dataset's own stage then finds done.
    DataShard {
        /// The dataset's name.
        dataset: String,
        /// The shard, from 0.
        shard: u64,
    },
    /// `train:EXPERIMENT:NETWORK:RUN`: one training run of one network of an experiment.
    Train {
        /// The experiment's name.
        experiment: String,
        /// The network's name in the experiment (`Entry::name`).
        entry: String,
        /// The run, from 1.
        run: u64,
    },
    /// `eval:EXPERIMENT:EVALUATION`: one evaluation of an experiment's networks.
    Evaluate {
        /// The experiment's name.
        experiment: String,
        /// The evaluation's name.
        evaluation: String,
    },
    /// `eval:EXPERIMENT:EVALUATION:BATCH`: one batch of the games of an evaluation's
    /// tournament played in batches (`batches`), which the evaluation's own stage then finds
    /// played.
    EvaluateBatch {
        /// The experiment's name.
        experiment: String,
        /// The evaluation's name.
        evaluation: String,
        /// The batch, from 0.
        batch: usize,
    },
    /// `report:EXPERIMENT`: the experiment's report from its finished stages.
    Report {
        /// The experiment's name.
        experiment: String,
    },
    /// `ladder:SWEEP`: the data ladder of a sweep over `train_positions` (one rung per cell),
    /// from the cells' finished stages.
    Ladder {
        /// The sweep's name (the `[[experiment]]` table's).
        group: String,
    },
}

impl StageId {
    /// Its kind.
    pub fn kind(&self) -> StageKind {
        match self {
            StageId::Data { .. } | StageId::DataShard { .. } => StageKind::Data,
            StageId::Train { .. } => StageKind::Train,
            StageId::Evaluate { .. } | StageId::EvaluateBatch { .. } => StageKind::Eval,
            StageId::Report { .. } | StageId::Ladder { .. } => StageKind::Report,
        }
    }

    /// Its part `i`, for a stage that can run in parts (a dataset's shards, a tournament's
    /// batches): the stage that finds its parts done.
    pub fn part(&self, i: u64) -> Option<StageId> {
        match self {
            StageId::Data { dataset } => Some(StageId::DataShard {
                dataset: dataset.clone(),
                shard: i,
            }),
            StageId::Evaluate {
                experiment,
                evaluation,
            } => Some(StageId::EvaluateBatch {
                experiment: experiment.clone(),
                evaluation: evaluation.clone(),
                batch: i as usize,
            }),
            _ => None,
        }
    }

    /// Its parts' names without their number (`data:D:`), for a job that appends the
    /// number of its array task.
    pub fn parts_prefix(&self) -> Option<String> {
        let first = self.part(0)?.to_string();
        Some(first.strip_suffix('0').unwrap_or(&first).to_string())
    }
}

impl fmt::Display for StageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StageId::Data { dataset } => write!(f, "data:{dataset}"),
            StageId::DataShard { dataset, shard } => write!(f, "data:{dataset}:{shard}"),
            StageId::Train {
                experiment,
                entry,
                run,
            } => write!(f, "train:{experiment}:{entry}:{run}"),
            StageId::Evaluate {
                experiment,
                evaluation,
            } => write!(f, "eval:{experiment}:{evaluation}"),
            StageId::EvaluateBatch {
                experiment,
                evaluation,
                batch,
            } => write!(f, "eval:{experiment}:{evaluation}:{batch}"),
            StageId::Report { experiment } => write!(f, "report:{experiment}"),
            StageId::Ladder { group } => write!(f, "ladder:{group}"),
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
        let id = match parts.as_slice() {
            ["data", d] => StageId::Data {
                dataset: d.to_string(),
            },
            ["data", d, i] => StageId::DataShard {
                dataset: d.to_string(),
                shard: i.parse().map_err(|_| bad())?,
            },
            ["train", e, n, r] => StageId::Train {
                experiment: e.to_string(),
                entry: n.to_string(),
                run: r.parse().ok().filter(|&r| r > 0).ok_or_else(bad)?,
            },
            ["eval", e, v] => StageId::Evaluate {
                experiment: e.to_string(),
                evaluation: v.to_string(),
            },
            ["eval", e, v, b] => StageId::EvaluateBatch {
                experiment: e.to_string(),
                evaluation: v.to_string(),
                batch: b.parse().map_err(|_| bad())?,
            },
            ["report", e] => StageId::Report {
                experiment: e.to_string(),
            },
            ["ladder", g] => StageId::Ladder {
                group: g.to_string(),
            },
            _ => return Err(bad()),
        };
        if parts[1..].iter().any(|p| p.is_empty()) {
            return Err(bad());
        }
        Ok(id)
    }
}

/// A stage and the stages it needs (indices into the same graph, all before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Which stage.
    pub id: StageId,
    /// The stages whose results it reads.
    pub needs: Vec<usize>,
}

/// The stages of `selected` (and of the experiments their `init_from` starts from), in an
/// order where every stage comes after those it needs: the datasets first (a dataset read by
/// several experiments is one stage), then each experiment's training runs one after another,
/// its evaluations and its report; last, the ladder of every data ladder all of whose rungs
/// are selected.
pub fn graph(manifest: &Manifest, selected: &[&Experiment]) -> Result<Vec<Stage>> {
    let mut stages: Vec<Stage> = Vec::new();
    for e in selected {
        add_data(manifest, e, None, &mut stages)?;
    }
    for e in selected {
        add_experiment(manifest, e, &mut stages)?;
    }
    for group in manifest.selected_ladders(selected) {
        let needs: Vec<usize> = manifest
            .ladder_rungs(&group)
            .iter()
            .map(|cell| {
                let id = StageId::Report {
                    experiment: cell.name.clone(),
                };
                stage(&mut stages, id, Vec::new())
            })
            .collect();
        stage(&mut stages, StageId::Ladder { group }, needs);
    }
    Ok(stages)
}

/// Adds the datasets the networks `names` of `e` (all when `None`) train and are validated
/// on, and those of the runs of the experiment their `init_from` starts from.
fn add_data(
    manifest: &Manifest,
    e: &Experiment,
    names: Option<&[String]>,
    stages: &mut Vec<Stage>,
) -> Result<()> {
    let entries: Vec<Entry> = e
        .entries()
        .into_iter()
        .filter(|x| names.is_none_or(|n| n.contains(&x.name)))
        .collect();
    if let Some(name) = &e.init_from {
        let other = manifest.experiment(name)?;
        let wanted: Vec<String> = entries.iter().map(|x| x.name.clone()).collect();
        add_data(manifest, other, Some(&wanted), stages)?;
    }
    for d in entries.iter().map(|x| &x.data).chain(&e.val_data) {
        let id = StageId::Data {
            dataset: d.name.clone(),
        };
        stage(stages, id, Vec::new());
    }
    Ok(())
}

/// The index of `id` in `stages`, adding it with `needs` if it is not there.
fn stage(stages: &mut Vec<Stage>, id: StageId, needs: Vec<usize>) -> usize {
    match stages.iter().position(|s| s.id == id) {
        Some(i) => i,
        None => {
            stages.push(Stage { id, needs });
            stages.len() - 1
        }
    }
}

/// Adds run `run` of network `entry` of `e` (after its data, and after the same run of the
/// same network of the experiment its `init_from` starts from, added too); returns its index.
fn add_train_run(
    manifest: &Manifest,
    e: &Experiment,
    entry: &Entry,
    run: u64,
    stages: &mut Vec<Stage>,
) -> Result<usize> {
    let mut needs: Vec<usize> = std::iter::once(&entry.data)
        .chain(&e.val_data)
        .map(|d| {
            let id = StageId::Data {
                dataset: d.name.clone(),
            };
            stage(stages, id, Vec::new())
        })
        .collect();
    if let Some(name) = &e.init_from {
        let other = manifest.experiment(name)?;
        let theirs = other
            .entries()
            .into_iter()
            .find(|x| x.name == entry.name)
            .ok_or_else(|| {
                anyhow!(
                    "init_from: experiment '{name}' has no network '{}'",
                    entry.name
                )
            })?;
        needs.push(add_train_run(manifest, other, &theirs, run, stages)?);
    }
    let id = StageId::Train {
        experiment: e.name.clone(),
        entry: entry.name.clone(),
        run,
    };
    Ok(stage(stages, id, needs))
}

/// Adds every stage of `e`: its training, evaluations and report.
fn add_experiment(manifest: &Manifest, e: &Experiment, stages: &mut Vec<Stage>) -> Result<()> {
    let mut trained = Vec::new();
    for entry in e.entries() {
        for run in 1..=e.settings.runs.get() {
            trained.push(add_train_run(manifest, e, &entry, run, stages)?);
        }
    }
    let mut report_needs = trained.clone();
    for ev in &e.evaluations {
        let id = StageId::Evaluate {
            experiment: e.name.clone(),
            evaluation: ev.name.clone(),
        };
        report_needs.push(stage(stages, id, trained.clone()));
    }
    let id = StageId::Report {
        experiment: e.name.clone(),
    };
    stage(stages, id, report_needs);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_as_they_parse() {
        let data: StageId = "data:d".parse().unwrap();
        assert_eq!(data.parts_prefix().as_deref(), Some("data:d:"));
        assert_eq!(data.part(3), Some("data:d:3".parse().unwrap()));
        let eval: StageId = "eval:e:v".parse().unwrap();
        assert_eq!(eval.parts_prefix().as_deref(), Some("eval:e:v:"));
        assert_eq!(eval.part(1), Some("eval:e:v:1".parse().unwrap()));
        assert_eq!("report:e".parse::<StageId>().unwrap().part(0), None);
        for (id, kind) in [
            ("data:d:2", StageKind::Data),
            ("train:e:n:1", StageKind::Train),
            ("eval:e:v:0", StageKind::Eval),
            ("ladder:g", StageKind::Report),
        ] {
            assert_eq!(id.parse::<StageId>().unwrap().kind(), kind);
            assert!(id.starts_with(kind.name()) || kind == StageKind::Report);
        }
    }

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
