//! The report stage ([`ReportStage`]): an experiment's report from the records its stages
//! hand on (its datasets', training runs' and evaluations'), with the pictures of its networks
//! and the list of the stage folders it was made from; the report's own format is
//! [`crate::experiment::report`].

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

use plugin_api::PluginRegistry;

use super::evaluation::training_runs;
use super::id::{EvaluateStage, ReportStage, StageId};
use super::networks::{experiment_data, trained_rows};
use super::stage::{Ctx, Stage, announce};
use crate::experiment::evaluate::EvaluationResult;
use crate::experiment::lookup::Missing;
use crate::experiment::manifest::{Experiment, Manifest};
use crate::experiment::options::RunOptions;
use crate::experiment::records::DataRecord;
use crate::experiment::report::{self, DataRole, DataSummary, ExperimentReport, FeatureSetRow};
use crate::experiment::stage_kind::StageKind;
use crate::insight;
use crate::train::held_out::HeldOutSet;

impl Stage for ReportStage {
    const KIND: StageKind = StageKind::Report;
    type Record = Box<ExperimentReport>;

    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        let mut needs = training_runs(manifest, &self.experiment)?;
        for ev in &manifest.experiment(&self.experiment)?.evaluations {
            let stage = EvaluateStage {
                experiment: self.experiment.clone(),
                evaluation: ev.name.clone(),
            };
            needs.push(stage.into());
        }
        Ok(needs)
    }

    fn work(&self, ctx: Ctx) -> Result<Box<ExperimentReport>> {
        let e = ctx.experiment(self.id(), &self.experiment)?;
        report_experiment(ctx, e).map(Box::new)
    }
}

/// The file beside a report that lists the stage folders it was made from.
const REPORT_STAGES: &str = "stages.json";

/// Writes the report of `e` from the records of its stages, with the list of the stage folders
/// they came from. When probing, writes nothing: the report stage is done if a report was
/// written from exactly the stages there are now, else the error [`Missing`].
fn report_experiment(ctx: Ctx, e: &Experiment) -> Result<ExperimentReport> {
    let options = ctx.options;
    let from = options.lookup.count();
    let report = experiment_report(ctx, e)?;
    // Relative to the output folder: the same list whether it is named absolutely (a Slurm
    // job's) or relatively (a driver's, a local run's).
    let stages: Vec<PathBuf> = options
        .lookup
        .met_since(from)
        .into_iter()
        .map(|d| {
            d.strip_prefix(&options.out)
                .map(Path::to_path_buf)
                .unwrap_or(d)
        })
        .collect();
    let dir = report_dir(options, &e.name);
    let listed = serde_json::to_vec_pretty(&stages)?;
    if options.lookup.probing() {
        return match std::fs::read(dir.join(REPORT_STAGES)) {
            Ok(written) if written == listed => Ok(report),
            _ => Err(Missing(dir).into()),
        };
    }
    report::write(&report, &dir)?;
    crate::atomic_file::write_atomic(&dir.join(REPORT_STAGES), &listed)?;
    println!("{}", report::markdown(&report));
    eprintln!(
        "==> [{}] report: {} and {}",
        e.name,
        dir.join("report.md").display(),
        dir.join("report.html").display()
    );
    Ok(report)
}

/// The report of `e` from the records its stages hand on: its datasets', its training runs'
/// and its evaluations' (and the pictures of its networks, which the report makes).
pub(super) fn experiment_report(ctx: Ctx, e: &Experiment) -> Result<ExperimentReport> {
    let (registry, options) = (ctx.registry, ctx.options);
    let records = experiment_data(ctx, e)?;
    let (mut rows, entry_data) = trained_rows(ctx, e, &records)?;
    if let Some(test) = &e.test_data {
        test_networks(e, &test.name, &records, &mut rows, registry)?;
    }
    let evaluations = e
        .evaluations
        .iter()
        .map(|ev| {
            ctx.need(EvaluateStage {
                experiment: e.name.clone(),
                evaluation: ev.name.clone(),
            })
        })
        .collect::<Result<Vec<EvaluationResult>>>()?;
    for row in &mut rows {
        let name = &row.feature_set;
        for EvaluationResult { ratings, .. } in &evaluations {
            row.elo
                .push(ratings.iter().flatten().find(|p| &p.name == name).cloned());
        }
        row.puzzles = evaluations
            .iter()
            .flat_map(|ev| &ev.puzzles)
            .find(|p| &p.name == name)
            .cloned();
        row.nps = evaluations
            .iter()
            .flat_map(|ev| &ev.speed)
            .find(|s| &s.name == name)
            .map(|s| s.nps);
    }
    if e.insight && !options.lookup.probing() {
        // Every network is attributed on the same positions: the first entry's validation set
        // (the held-out `val_data` when there is one).
        let samples = insight_positions(e, &entry_data[0])?;
        for (row, data) in rows.iter_mut().zip(&entry_data) {
            look_inside(e, row, &samples, data, registry, options)?;
        }
    }
    let datasets = match e.data.len() > 1 || e.val_data.is_some() || e.test_data.is_some() {
        true => records
            .iter()
            .map(|(name, r)| DataSummary {
                name: name.clone(),
                positions: r.positions,
                seconds: r.seconds,
                role: DataRole::of(
                    e.data.iter().any(|d| &d.name == name),
                    e.val_data.as_ref().is_some_and(|v| &v.name == name),
                ),
            })
            .collect(),
        false => Vec::new(),
    };
    Ok(ExperimentReport {
        experiment: e.name.clone(),
        settings: e.settings.clone(),
        runs: e.runs,
        data: e.data_label(),
        datasets,
        rows,
        evaluations,
        shapes: e
            .archs
            .iter()
            .map(|(label, a)| {
                (
                    label.clone(),
                    a.resolve(e.settings.l2.get() as usize).to_string(),
                )
            })
            .collect(),
    })
}

/// Scores every run's network of `rows` on the validation files of `e`'s test dataset
/// `test` (its first `val_positions`), by `trainer score`'s yardstick.
fn test_networks(
    e: &Experiment,
    test: &str,
    records: &[(String, DataRecord)],
    rows: &mut [FeatureSetRow],
    registry: &PluginRegistry,
) -> Result<()> {
    let (_, record) = records
        .iter()
        .find(|(name, _)| name == test)
        .expect("experiment_data holds the test dataset");
    let positions = usize::try_from(e.settings.val_positions.get()).unwrap_or(usize::MAX);
    let set = HeldOutSet::read(&record.val, None, None, positions)
        .with_context(|| format!("[{}] test_data '{test}'", e.name))?;
    let kernels = nnue::Kernels::new(nnue::SimdLevel::from_env().map_err(anyhow::Error::msg)?)
        .map_err(anyhow::Error::msg)?;
    for row in rows {
        for run in &mut row.runs {
            let scored = set
                .score_file(&run.net, registry, kernels)
                .with_context(|| format!("[{}] testing {}", e.name, run.net.display()))?;
            run.test_loss = Some(scored.mse);
        }
    }
    Ok(())
}

/// Where experiment `name`'s report goes.
pub(super) fn report_dir(options: &RunOptions, name: &str) -> PathBuf {
    options.out.join("reports").join(name)
}

/// Positions the report's block attribution uses: the first ones of the validation files.
const INSIGHT_POSITIONS: usize = 10_000;

/// The first [`INSIGHT_POSITIONS`] validation positions of `data` that `e`'s training filter
/// keeps: what the report attributes every network on.
fn insight_positions(e: &Experiment, data: &DataRecord) -> Result<Vec<crate::data::Sample>> {
    let mut samples = Vec::new();
    for path in &data.val {
        let wanted = INSIGHT_POSITIONS - samples.len();
        samples.extend(crate::data::first_samples(
            path,
            None,
            wanted,
            Some(&e.settings.filter()),
        )?);
    }
    Ok(samples)
}

/// Draws and attributes the best network of `row` into the report's `insight/<feature set>/`
/// folder: its neurons, weight histograms and, on `samples`, the block attribution, with the
/// training files telling which features were never trained.
fn look_inside(
    e: &Experiment,
    row: &mut FeatureSetRow,
    samples: &[crate::data::Sample],
    data: &DataRecord,
    registry: &PluginRegistry,
    options: &RunOptions,
) -> Result<()> {
    announce(&e.name, "insight", &row.feature_set);
    let nnue = nnue::Nnue::load(&row.best().net, registry)?;
    let trained = insight::attribution::trained_features(nnue.features(), &data.train, None)?;
    let folder = crate::file_names::safe_file_name(&row.feature_set);
    let result = insight::write(
        &nnue.network(),
        nnue.features(),
        (!samples.is_empty()).then_some(samples),
        Some(&trained),
        &insight::Neurons::Top(insight::DEFAULT_NEURONS),
        &report_dir(options, &e.name).join("insight").join(&folder),
        &format!("insight/{folder}"),
    )?;
    row.insight = Some(result.markdown);
    row.attribution = result.attribution;
    Ok(())
}
