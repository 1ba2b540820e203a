//! The evaluation stages: one evaluation of an experiment's networks ([`EvaluateStage`]: its
//! speed, tournament and puzzles, see [`crate::experiment::evaluate`]) and one batch of its
//! tournament's games ([`EvaluateBatch`], what a cluster's array job plays at once).

use anyhow::{Context, Result, anyhow};

use super::id::{EvaluateBatch, EvaluateStage, StageId, TrainStage};
use super::networks::players;
use super::stage::{Ctx, Stage};
use crate::experiment::evaluate::{self, EvaluationResult, Player};
use crate::experiment::manifest::{Evaluation, Experiment, Manifest};
use crate::experiment::stage_kind::StageKind;

/// Every training run of experiment `name`: what its evaluations and report read.
pub(super) fn training_runs(manifest: &Manifest, name: &str) -> Result<Vec<StageId>> {
    let e = manifest.experiment(name)?;
    let mut runs = Vec::new();
    for entry in e.entries() {
        for run in 1..=e.runs {
            let stage = TrainStage {
                experiment: e.name.clone(),
                entry: entry.name.clone(),
                run,
            };
            runs.push(stage.into());
        }
    }
    Ok(runs)
}

/// The evaluation `name` of `e`, named by stage `id`.
fn evaluation_of<'a>(id: StageId, e: &'a Experiment, name: &str) -> Result<&'a Evaluation> {
    e.evaluations
        .iter()
        .find(|v| v.name == name)
        .ok_or_else(|| {
            anyhow!(
                "stage {id}: experiment '{}' has no evaluation '{name}'",
                e.name
            )
        })
}

/// The evaluation `evaluation` of experiment `experiment` (named by stage `id`) and its
/// players, read from the experiment's training runs.
fn played<'a>(
    ctx: Ctx<'a>,
    id: StageId,
    experiment: &str,
    evaluation: &str,
) -> Result<(&'a Evaluation, Vec<Player>)> {
    let e = ctx.experiment(id.clone(), experiment)?;
    let ev = evaluation_of(id, e, evaluation)?;
    Ok((ev, players(ctx, e)?))
}

impl Stage for EvaluateStage {
    const KIND: StageKind = StageKind::Eval;
    type Record = EvaluationResult;

    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        training_runs(manifest, &self.experiment)
    }

    fn part(&self, i: u64) -> Option<StageId> {
        Some(
            EvaluateBatch {
                experiment: self.experiment.clone(),
                evaluation: self.evaluation.clone(),
                batch: i as usize,
            }
            .into(),
        )
    }

    fn part_count(&self, manifest: &Manifest) -> Result<u64> {
        let e = manifest.experiment(&self.experiment)?;
        let ev = evaluation_of(self.id(), e, &self.evaluation)?;
        Ok(ev.tournament.as_ref().map_or(1, |t| t.batch_count() as u64))
    }

    fn work(&self, ctx: Ctx) -> Result<EvaluationResult> {
        let (ev, players) = played(ctx, self.id(), &self.experiment, &self.evaluation)?;
        let options = ctx.options;
        let place = (options.progress, &options.lookup);
        evaluate::evaluate(&self.experiment, ev, &players, &options.out, place)
    }
}

impl Stage for EvaluateBatch {
    const KIND: StageKind = StageKind::Eval;
    type Record = ();

    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        training_runs(manifest, &self.experiment)
    }

    fn work(&self, ctx: Ctx) -> Result<()> {
        let (ev, players) = played(ctx, self.id(), &self.experiment, &self.evaluation)?;
        let options = ctx.options;
        let place = (self.batch, &options.lookup);
        evaluate::evaluate_batch(&self.experiment, ev, &players, &options.out, place)
            .with_context(|| format!("stage {}", self.id()))
    }
}
