//! The ladder stage ([`LadderStage`]): a sweep's data ladder over `train_positions`, drawn
//! from its rungs' reports (see [`crate::experiment::ladder`] for what it shows).

use anyhow::{Result, bail};

use super::id::{LadderStage, ReportStage, StageId};
use super::report::{experiment_report, report_dir};
use super::stage::{Ctx, Stage};
use crate::experiment::ladder;
use crate::experiment::lookup::Missing;
use crate::experiment::manifest::{Experiment, Manifest};
use crate::experiment::report::ExperimentReport;
use crate::experiment::stage_kind::StageKind;

impl Stage for LadderStage {
    const KIND: StageKind = StageKind::Report;
    type Record = ();

    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        Ok(manifest
            .ladder_rungs(&self.group)
            .iter()
            .map(|cell| {
                ReportStage {
                    experiment: cell.name.clone(),
                }
                .into()
            })
            .collect())
    }

    fn work(&self, ctx: Ctx) -> Result<()> {
        report_ladder(ctx, &self.group)
    }
}

/// Draws the data ladder `group` from its rungs' finished stages into the report folder named
/// after it (`ladder.md`, `ladder.json`, the pictures). When probing, writes nothing: the
/// ladder is done if the one written is the one its rungs make now, else the error [`Missing`].
fn report_ladder(ctx: Ctx, group: &str) -> Result<()> {
    let (manifest, options) = (ctx.manifest, ctx.options);
    if !manifest.ladders().iter().any(|g| g == group) {
        bail!(
            "stage ladder:{group}: {} has no sweep '{group}' over train_positions",
            manifest.path.display()
        );
    }
    let mut reports = Vec::new();
    for cell in manifest.ladder_rungs(group) {
        // The rungs' pictures of their networks are in their own reports.
        let cell = Experiment {
            insight: false,
            ..cell.clone()
        };
        let positions = cell
            .train_positions
            .expect("a ladder's cells set train_positions");
        reports.push((positions, experiment_report(ctx, &cell)?));
    }
    let rungs: Vec<(u64, &ExperimentReport)> = reports.iter().map(|(n, r)| (*n, r)).collect();
    let data: Vec<&str> = manifest.ladder_rungs(group)[0]
        .data
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let made = ladder::ladder(group, &data.join(", "), &rungs);
    let dir = report_dir(options, group);
    if options.lookup.probing() {
        let written = std::fs::read(dir.join("ladder.json")).ok();
        return match written == Some(serde_json::to_vec_pretty(&made)?) {
            true => Ok(()),
            false => Err(Missing(dir).into()),
        };
    }
    ladder::write(&made, &dir)?;
    println!("{}", ladder::markdown(&made));
    eprintln!("==> [{group}] ladder: {}", dir.join("ladder.md").display());
    Ok(())
}
