//! Runs a manifest's experiments stage by stage: data, training runs, evaluation, report (each
//! kind of stage in its own file under [`super::stages`]).
//!
//! Every stage's folder is named after a key of its inputs (see [`super::cache`]), so a rerun
//! skips finished stages and a changed setting gets a fresh folder rather than a stale result.
//! Training resumes from its last checkpoint; data generation resumes from its last committed
//! games; a tournament or puzzle run that was cut short is played again.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

use plugin_api::PluginRegistry;

use super::lookup::Missing;
use super::manifest::{Experiment, Manifest};
use super::options::RunOptions;
use super::records::Handed;
use super::report::ExperimentReport;
use super::stages::{self, Ctx, StageId};

/// Runs the selected experiments of `manifest` and writes their reports; returns them. The
/// local executor: every stage of [`stages::graph`], in its order, through [`run_stage`],
/// exactly as the Slurm executor's jobs run them.
pub fn run_manifest(
    manifest: &Manifest,
    registry: &PluginRegistry,
    options: &RunOptions,
) -> Result<Vec<ExperimentReport>> {
    let selected = manifest.select(&options.only)?;
    check_feature_sets(manifest, &selected, registry)?;
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("cannot create {}", options.out.display()))?;
    let mut reports = Vec::new();
    for stage in stages::graph(manifest, &selected)? {
        if let Some(report) = run_stage(manifest, registry, options, &stage.id)? {
            reports.push(report);
        }
    }
    Ok(reports)
}

/// Every feature set of `selected` must load before hours are spent on the first experiment.
pub fn check_feature_sets(
    manifest: &Manifest,
    selected: &[&Experiment],
    registry: &PluginRegistry,
) -> Result<()> {
    for e in selected {
        for (fs, place) in e.feature_sets.iter().zip(&e.feature_set_places) {
            registry
                .feature_set(fs)
                .with_context(|| format!("{place}: feature_sets"))?;
        }
        e.settings.check_i8_blocks(registry).map_err(|err| {
            anyhow::anyhow!(
                "{}: experiment '{}': {err}",
                manifest.path.display(),
                e.name
            )
        })?;
    }
    Ok(())
}

/// Runs one stage of the manifest (`trainer run --stage ID`, what an executor's job does, and
/// each step of the local executor): the stages it needs are read from the run's
/// [`Handover`](super::records::Handover) (found done or, run out of order, computed first). A report stage returns its
/// report. With a probing [`RunOptions::lookup`] it computes nothing and fails with
/// [`Missing`] unless the stage is done.
pub fn run_stage(
    manifest: &Manifest,
    registry: &PluginRegistry,
    options: &RunOptions,
    id: &StageId,
) -> Result<Option<ExperimentReport>> {
    let ctx = Ctx {
        manifest,
        registry,
        options,
    };
    Ok(match ctx.handed(id)? {
        Handed::Report(report) => Some(*report),
        _ => None,
    })
}

/// Whether stage `id` is done, probing its cache without computing anything (`probe`: a
/// [`probing`](RunOptions::probing) run): what the Slurm executor submits and what
/// `trainer run --dry-run` shows.
pub fn stage_is_done(
    manifest: &Manifest,
    registry: &PluginRegistry,
    probe: &RunOptions,
    id: &StageId,
) -> Result<bool> {
    match run_stage(manifest, registry, probe, id) {
        Ok(_) => Ok(true),
        Err(e) if e.downcast_ref::<Missing>().is_some() => Ok(false),
        Err(e) => Err(e.context(format!("cannot tell whether stage {id} is done"))),
    }
}

/// The default output root for a manifest: `runs/` beside it.
pub fn default_out(manifest: &Path) -> PathBuf {
    manifest.parent().unwrap_or(Path::new("")).join("runs")
}
