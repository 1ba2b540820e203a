//! What every kind of stage is ([`Stage`]: its needs, its parts, its work and the record it
//! hands on), the run a stage works in ([`Ctx`]), and [`StageId`]'s one dispatch to its kind.
//!
//! Each kind implements [`Stage`] in its own file (`data.rs`, `train.rs`, `evaluation.rs`,
//! `report.rs`, `ladder.rs`); the graph ([`super::graph`]) is built from the kinds' needs, the
//! executors run a stage by [`Ctx::handed`], and the Slurm executor submits a kind's parts as
//! an array job. What a kind does is matched on in one place, [`StageId::stage`]; besides it
//! only the names' text form (`id.rs`) and the Slurm executor's grouping of an experiment's
//! training runs into one array job name the kinds.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

use plugin_api::PluginRegistry;

use super::id::StageId;
use crate::experiment::manifest::{Experiment, Manifest};
use crate::experiment::options::RunOptions;
use crate::experiment::records::{Handed, StageRecord};
use crate::experiment::stage_kind::StageKind;

/// One kind of stage: its name's struct ([`super::id`]) with what the kind needs, how it runs
/// in parts, what the manifest alone decides of it, and its work. Its work goes through the
/// one driver, [`Lookup::stage`](crate::experiment::lookup::Lookup::stage), for every stage
/// with a folder: finding it done, probing, holding its folder, marking it done.
pub(crate) trait Stage: Clone + Into<StageId> {
    /// What `[cluster]` gives resources by.
    const KIND: StageKind;

    /// What it hands on to the stages that need it.
    type Record: StageRecord;

    /// Its name, as `trainer run --stage` takes it.
    fn id(&self) -> StageId {
        self.clone().into()
    }

    /// The stages whose records it reads, in the order it reads them (the graph's edges).
    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>>;

    /// Its part `i`, for a kind that runs in parts before itself (a dataset's shards, a
    /// tournament's batches): a stage that the whole then finds done.
    fn part(&self, _i: u64) -> Option<StageId> {
        None
    }

    /// How many parts it runs in (0: none).
    fn part_count(&self, _manifest: &Manifest) -> Result<u64> {
        Ok(0)
    }

    /// Its folders that the manifest alone decides, nothing computed or read but the
    /// manifest's own input files (`trainer run --dry-run`).
    fn planned(&self, _plan: StagePlan) -> Result<Vec<PlannedStage>> {
        Ok(Vec::new())
    }

    /// Its record: found done, computed (reading its needs' records from `ctx`), or, probing,
    /// the error [`Missing`](crate::experiment::lookup::Missing) when it is not done.
    fn work(&self, ctx: Ctx) -> Result<Self::Record>;
}

/// [`Stage`] without its record's type, so that [`StageId`] can lend any kind.
pub(crate) trait AnyStage {
    /// [`Stage::KIND`].
    fn kind(&self) -> StageKind;
    /// [`Stage::needs`].
    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>>;
    /// [`Stage::part`].
    fn part(&self, i: u64) -> Option<StageId>;
    /// [`Stage::part_count`].
    fn part_count(&self, manifest: &Manifest) -> Result<u64>;
    /// [`Stage::planned`].
    fn planned(&self, plan: StagePlan) -> Result<Vec<PlannedStage>>;
    /// [`Stage::work`], its record as handed on.
    fn work(&self, ctx: Ctx) -> Result<Handed>;
}

impl<S: Stage> AnyStage for S {
    fn kind(&self) -> StageKind {
        S::KIND
    }
    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        Stage::needs(self, manifest)
    }
    fn part(&self, i: u64) -> Option<StageId> {
        Stage::part(self, i)
    }
    fn part_count(&self, manifest: &Manifest) -> Result<u64> {
        Stage::part_count(self, manifest)
    }
    fn planned(&self, plan: StagePlan) -> Result<Vec<PlannedStage>> {
        Stage::planned(self, plan)
    }
    fn work(&self, ctx: Ctx) -> Result<Handed> {
        Stage::work(self, ctx).map(StageRecord::handed)
    }
}

impl StageId {
    /// Its kind's [`Stage`]: the one place that matches on the kinds.
    pub(crate) fn stage(&self) -> &dyn AnyStage {
        match self {
            StageId::Data(s) => s,
            StageId::DataShard(s) => s,
            StageId::Train(s) => s,
            StageId::Evaluate(s) => s,
            StageId::EvaluateBatch(s) => s,
            StageId::Report(s) => s,
            StageId::Ladder(s) => s,
        }
    }

    /// Its kind, as `[cluster]` gives resources.
    pub fn kind(&self) -> StageKind {
        self.stage().kind()
    }

    /// The stages it needs, in the order it reads them (the graph's edges).
    pub fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        self.stage().needs(manifest)
    }

    /// Its parts, when it runs in more than one (a dataset's shards, a tournament's batches),
    /// which a cluster runs as one array job before it; else none.
    pub fn parts(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        let n = self.stage().part_count(manifest)?;
        Ok(match n > 1 {
            true => (0..n).filter_map(|i| self.stage().part(i)).collect(),
            false => Vec::new(),
        })
    }

    /// Its parts' names without their number (`data:D:`), for a job that appends the number
    /// of its array task.
    pub fn parts_prefix(&self) -> Option<String> {
        let first = self.stage().part(0)?.to_string();
        Some(first.strip_suffix('0').unwrap_or(&first).to_string())
    }
}

/// Prints a stage line: which experiment, stage and run.
pub(crate) fn announce(experiment: &str, stage: &str, detail: &str) {
    eprintln!("==> [{experiment}] {stage}: {detail}");
}

/// One run of a manifest's stages: the manifest, the plugins and the options (whose
/// [`Handover`](crate::experiment::records::Handover) remembers the records of the stages met).
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The manifest.
    pub(crate) manifest: &'a Manifest,
    /// The feature sets' plugins.
    pub(crate) registry: &'a PluginRegistry,
    /// How the run runs.
    pub(crate) options: &'a RunOptions,
}

impl<'a> Ctx<'a> {
    /// The record stage `id` hands on: remembered by this run, or worked out (found done, or
    /// computed) and remembered.
    pub(crate) fn handed(self, id: &StageId) -> Result<Handed> {
        let options = self.options;
        options
            .handover
            .get_or(&id.to_string(), &options.lookup, || id.stage().work(self))
    }

    /// The record of `stage`, a need of the stage at work (see [`handed`](Self::handed)).
    pub(crate) fn need<S: Stage>(self, stage: S) -> Result<S::Record> {
        let id: StageId = stage.into();
        let handed = self.handed(&id)?;
        Ok(S::Record::of(handed).expect("a stage hands on its own kind's record"))
    }

    /// The experiment `name`, named by stage `id`.
    pub(crate) fn experiment(self, id: StageId, name: &str) -> Result<&'a Experiment> {
        self.manifest
            .experiment(name)
            .with_context(|| format!("stage {id}"))
    }
}

/// What [`Stage::planned`] reads: the manifest, the plugins and the output folder.
#[derive(Clone, Copy)]
pub(crate) struct StagePlan<'a> {
    /// The manifest.
    pub(crate) manifest: &'a Manifest,
    /// The feature sets' plugins (a training run's folder holds its blocks' layouts).
    pub(crate) registry: &'a PluginRegistry,
    /// The output folder.
    pub(crate) out: &'a Path,
}

/// A stage whose folder the manifest alone decides ([`super::planned_folders`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedStage {
    /// The stage's name (`data:D`, `train:E:N:R`; a ladder's rung is `train:E:N:R rung`, after
    /// the first run that cuts it).
    pub name: String,
    /// Its folder under the output folder.
    pub dir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_as_they_parse() {
        let data: StageId = "data:d".parse().unwrap();
        assert_eq!(data.parts_prefix().as_deref(), Some("data:d:"));
        assert_eq!(data.stage().part(3), Some("data:d:3".parse().unwrap()));
        let eval: StageId = "eval:e:v".parse().unwrap();
        assert_eq!(eval.parts_prefix().as_deref(), Some("eval:e:v:"));
        assert_eq!(eval.stage().part(1), Some("eval:e:v:1".parse().unwrap()));
        let report: StageId = "report:e".parse().unwrap();
        assert_eq!(report.stage().part(0), None);
        assert_eq!(report.parts_prefix(), None);
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
}
