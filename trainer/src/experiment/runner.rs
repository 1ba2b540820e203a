//! Runs a manifest's experiments stage by stage: data, training runs, evaluation, report.
//!
//! Every stage's folder is named after a key of its inputs (see [`super::cache`]), so a rerun
//! skips finished stages and a changed setting gets a fresh folder rather than a stale result.
//! Training resumes from its last checkpoint; data generation resumes from its last committed
//! games; a tournament or puzzle run that was cut short is played again.

use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::time::Instant;

use plugin_api::{FeatureSet, PluginRegistry};
use tch::Device;

use super::cache::{read_path, stored_path};
use super::evaluate::{self, EvaluationResult, Player};
use super::ladder;
use super::lookup::{Lookup, Missing, lock_stage};
use super::manifest::{
    DataSource, Dataset, Entry, Evaluation, Experiment, GenerateTable, Manifest,
};
use super::prefix;
use super::records::{DataRecord, Handed, Handover, TrainRecord};
use super::report::{self, DataRole, DataSummary, ExperimentReport, FeatureSetRow, RunSummary};
use super::stage_key::StageKey;
use super::stages::{self, StageId};
use crate::data::Format;
use crate::gensfen::{self, GensfenConfig, Target};
use crate::insight;
use crate::train::run::{DataFile, Runtime, TrainConfig, TrainError, train};

/// How `trainer run` runs: where outputs go and on what.
#[derive(Debug)]
pub struct RunOptions {
    /// Root of all stage folders and reports.
    pub out: PathBuf,
    /// Run only these experiments (all when empty).
    pub only: Vec<String>,
    /// Where the feature plugins are (default: the usual plugin directories); passed on to
    /// data generation and to the `host` engines of tournaments and puzzles.
    pub plugin_dir: Option<PathBuf>,
    /// Tensors' device for training.
    pub device: Device,
    /// Loader threads (0: one per core).
    pub loader_threads: usize,
    /// Progress bars.
    pub progress: bool,
    /// How stages are looked up: computed when missing (the default), or only probed.
    pub lookup: Lookup,
    /// The records of the stages this run has met, which the stages that need them read.
    pub handover: Handover,
}

impl RunOptions {
    /// The same run, probing its stages instead of computing them (see [`Lookup`]).
    pub fn probing(&self) -> RunOptions {
        RunOptions {
            out: self.out.clone(),
            only: self.only.clone(),
            plugin_dir: self.plugin_dir.clone(),
            device: self.device,
            loader_threads: self.loader_threads,
            progress: false,
            lookup: Lookup::probe(),
            handover: Handover::default(),
        }
    }
}

/// Prints a stage line: which experiment, stage and run.
fn announce(experiment: &str, stage: &str, detail: &str) {
    eprintln!("==> [{experiment}] {stage}: {detail}");
}

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

/// Runs one stage of the manifest (`trainer run --stage ID`, what an executor's job does, and
/// each step of the local executor): the stages it needs are read from the run's
/// [`Handover`] (found done or, run out of order, computed first). A report stage returns its
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
    match id {
        StageId::Data { .. } | StageId::Train { .. } | StageId::Evaluate { .. } => {
            ctx.handed(id)?;
        }
        StageId::DataShard { dataset, shard } => {
            ensure_shard(manifest.dataset(dataset)?, *shard, options)
                .with_context(|| format!("stage {id}"))?;
        }
        StageId::EvaluateBatch {
            experiment: name,
            evaluation: evaluation_name,
            batch,
        } => {
            let e = ctx.experiment(id, name)?;
            let ev = evaluation_of(id, e, evaluation_name)?;
            evaluate::evaluate_batch(
                &e.name,
                ev,
                &ctx.players(e)?,
                &options.out,
                (*batch, &options.lookup),
            )
            .with_context(|| format!("stage {id}"))?;
        }
        StageId::Report { experiment: name } => {
            return report_experiment(ctx, ctx.experiment(id, name)?).map(Some);
        }
        StageId::Ladder { group } => {
            report_ladder(ctx, group)?;
        }
    }
    Ok(None)
}

/// The evaluation `name` of `e`, named by stage `id`.
fn evaluation_of<'a>(id: &StageId, e: &'a Experiment, name: &str) -> Result<&'a Evaluation> {
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

/// One run of a manifest's stages: the manifest, the plugins and the options (whose
/// [`Handover`] remembers the records of the stages met).
#[derive(Clone, Copy)]
struct Ctx<'a> {
    manifest: &'a Manifest,
    registry: &'a PluginRegistry,
    options: &'a RunOptions,
}

impl<'a> Ctx<'a> {
    /// The experiment `name`, named by stage `id`.
    fn experiment(self, id: &StageId, name: &str) -> Result<&'a Experiment> {
        self.manifest
            .experiment(name)
            .with_context(|| format!("stage {id}"))
    }

    /// The record stage `id` hands on (a dataset's, a training run's or an evaluation's):
    /// remembered by this run, or looked up (found done, or computed) and remembered.
    fn handed(self, id: &StageId) -> Result<Handed> {
        let options = self.options;
        options
            .handover
            .get_or(id, &options.lookup, || self.work(id))
    }

    /// The work of a stage that hands a record on.
    fn work(self, id: &StageId) -> Result<Handed> {
        let options = self.options;
        match id {
            StageId::Data { dataset } => {
                ensure_data(&id.to_string(), self.manifest.dataset(dataset)?, options)
                    .map(Handed::Data)
            }
            StageId::Train {
                experiment: name,
                entry,
                run,
            } => {
                let e = self.experiment(id, name)?;
                let entry = e
                    .entries()
                    .into_iter()
                    .find(|x| &x.name == entry)
                    .ok_or_else(|| {
                        anyhow!("stage {id}: experiment '{name}' has no network '{entry}'")
                    })?;
                if *run > e.settings.runs.get() {
                    bail!(
                        "stage {id}: experiment '{name}' has {} run(s)",
                        e.settings.runs
                    );
                }
                let mut records = Vec::new();
                for d in std::iter::once(&entry.data).chain(&e.val_data) {
                    records.push((d.name.clone(), self.data(d)?));
                }
                let data = training_data_cut(e, &entry, &records, options)?;
                self.train_run(e, &entry, *run, &data).map(Handed::Train)
            }
            StageId::Evaluate {
                experiment: name,
                evaluation,
            } => {
                let e = self.experiment(id, name)?;
                let ev = evaluation_of(id, e, evaluation)?;
                evaluate::evaluate(
                    &e.name,
                    ev,
                    &self.players(e)?,
                    &options.out,
                    (options.progress, &options.lookup),
                )
                .map(Handed::Evaluation)
            }
            other => bail!("stage {other} hands no record on"),
        }
    }

    /// The files of dataset `d` (its stage's record).
    fn data(self, d: &Dataset) -> Result<DataRecord> {
        let id = StageId::Data {
            dataset: d.name.clone(),
        };
        match self.handed(&id)? {
            Handed::Data(record) => Ok(record),
            other => unreachable!("stage {id} handed {other:?}"),
        }
    }

    /// The record of run `run` of network `entry` of `e` (its stage's).
    fn trained(self, e: &Experiment, entry: &Entry, run: u64) -> Result<TrainRecord> {
        let id = StageId::Train {
            experiment: e.name.clone(),
            entry: entry.name.clone(),
            run,
        };
        match self.handed(&id)? {
            Handed::Train(record) => Ok(record),
            other => unreachable!("stage {id} handed {other:?}"),
        }
    }

    /// The results of evaluation `ev` of `e` (its stage's record).
    fn evaluated(self, e: &Experiment, ev: &Evaluation) -> Result<EvaluationResult> {
        let id = StageId::Evaluate {
            experiment: e.name.clone(),
            evaluation: ev.name.clone(),
        };
        match self.handed(&id)? {
            Handed::Evaluation(result) => Ok(result),
            other => unreachable!("stage {id} handed {other:?}"),
        }
    }

    /// Every dataset of `e` by name, in the order [`Experiment::datasets`] lists them.
    fn experiment_data(self, e: &Experiment) -> Result<Vec<(String, DataRecord)>> {
        e.datasets()
            .map(|d| Ok((d.name.clone(), self.data(d)?)))
            .collect()
    }

    /// The players of an experiment's evaluations: its networks, each row's best.
    fn players(self, e: &Experiment) -> Result<Vec<Player>> {
        let records = self.experiment_data(e)?;
        let (rows, _) = self.trained_rows(e, &records)?;
        Ok(players(&rows, self.options))
    }

    /// The final network of run `run` of `entry` in experiment `e` with its dataset `data`:
    /// trained (after the run it starts from, read from its stage), resumed, or found.
    fn train_run(
        self,
        e: &Experiment,
        entry: &Entry,
        run: u64,
        data: &DataRecord,
    ) -> Result<TrainRecord> {
        let set = self
            .registry
            .feature_set(&entry.feature_set)
            .map_err(|err| err.to_string())
            .map_err(anyhow::Error::msg)?;
        let init = match &e.init_from {
            Some(other) => {
                let source = self.manifest.experiment(other)?;
                let theirs = source
                    .entries()
                    .into_iter()
                    .find(|x| x.name == entry.name)
                    .expect("checked when parsing");
                Some(self.trained(source, &theirs, run)?.net)
            }
            None => None,
        };
        train_one(e, entry, &set, run, data, init, self.options)
    }

    /// Every network of `e` (its training runs' records) on its datasets `records`, one row
    /// per entry with its runs, and the data each entry trained on.
    fn trained_rows(
        self,
        e: &Experiment,
        records: &[(String, DataRecord)],
    ) -> Result<(Vec<FeatureSetRow>, Vec<DataRecord>)> {
        let mut rows = Vec::new();
        let mut entry_data = Vec::new();
        for entry in e.entries() {
            let data = training_data_cut(e, &entry, records, self.options)?;
            let set = self
                .registry
                .feature_set(&entry.feature_set)
                .map_err(|err| err.to_string())
                .map_err(anyhow::Error::msg)?;
            let mut runs = Vec::new();
            for run in 1..=e.settings.runs.get() {
                let record = self.trained(e, &entry, run)?;
                runs.push(RunSummary {
                    run,
                    net: record.net.clone(),
                    best_epoch: record.best_epoch,
                    min_val_loss: record.min_val_loss,
                    val_losses: record.val_losses.clone(),
                    seconds: record.seconds,
                });
            }
            rows.push(FeatureSetRow {
                feature_set: entry.name.clone(),
                features: set.size() as u64,
                runs,
                elo: Vec::new(),
                puzzles: None,
                nps: None,
                insight: None,
                attribution: None,
            });
            entry_data.push(data);
        }
        Ok((rows, entry_data))
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

/// The players of an experiment's evaluations: each row's best network.
fn players(rows: &[FeatureSetRow], options: &RunOptions) -> Vec<Player> {
    rows.iter()
        .map(|r| Player {
            name: r.feature_set.clone(),
            net: r.best().net.clone(),
            plugin_dir: options.plugin_dir.clone(),
        })
        .collect()
}

/// The report of `e` from the records its stages hand on: its datasets', its training runs'
/// and its evaluations' (and the pictures of its networks, which the report makes).
fn experiment_report(ctx: Ctx, e: &Experiment) -> Result<ExperimentReport> {
    let (registry, options) = (ctx.registry, ctx.options);
    let records = ctx.experiment_data(e)?;
    let (mut rows, entry_data) = ctx.trained_rows(e, &records)?;
    let evaluations = e
        .evaluations
        .iter()
        .map(|ev| ctx.evaluated(e, ev))
        .collect::<Result<Vec<_>>>()?;
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
    let datasets = match e.data.len() > 1 || e.val_data.is_some() {
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

/// Where experiment `name`'s report goes.
fn report_dir(options: &RunOptions, name: &str) -> PathBuf {
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

/// `trainer gensfen`'s configuration for a dataset's generation spec.
fn gensfen_config(
    g: &GenerateTable,
    target: Target,
    seed: u64,
    plugin_dir: Option<&Path>,
) -> GensfenConfig {
    GensfenConfig {
        target,
        player: g.player.clone(),
        plugin_dir: plugin_dir.map(Path::to_path_buf),
        threads: g.threads as usize,
        seed,
        format: Some(Format::Binpack),
        game: g.game.clone(),
        label: g.label.clone(),
        ..GensfenConfig::default()
    }
}

/// What `entry` trains and is validated on: its dataset's training files (their first
/// `train_positions` when it is set: the file `rung` gives for the dataset, its files and the
/// count), and the validation files of the experiment's `val_data` if it names one, else its
/// dataset's.
fn training_data(
    e: &Experiment,
    entry: &Entry,
    records: &[(String, DataRecord)],
    rung: impl FnOnce(&str, &[PathBuf], u64) -> Result<PathBuf>,
) -> Result<DataRecord> {
    let find = |name: &str| {
        &records
            .iter()
            .find(|(n, _)| n == name)
            .expect("experiment_data holds every dataset of the experiment")
            .1
    };
    let mut data = find(&entry.data.name).clone();
    if let Some(v) = &e.val_data {
        data.val = find(&v.name).val.clone();
    }
    if let Some(n) = entry.train_positions {
        data.train = vec![rung(&entry.data.name, &data.train, n)?];
    }
    Ok(data)
}

/// [`training_data`] as a run trains on it: a rung cut now unless done.
fn training_data_cut(
    e: &Experiment,
    entry: &Entry,
    records: &[(String, DataRecord)],
    options: &RunOptions,
) -> Result<DataRecord> {
    training_data(e, entry, records, |dataset, train, n| {
        let place = (options.out.as_path(), &options.lookup);
        prefix::first_positions(&e.name, dataset, train, n, place)
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

/// A stage whose folder the manifest alone decides ([`planned_folders`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedStage {
    /// The stage's name (`data:D`, `train:E:N:R`; a ladder's rung is `train:E:N:R rung`, after
    /// the first run that cuts it).
    pub name: String,
    /// Its folder under the output folder.
    pub dir: PathBuf,
}

/// The folder of every stage of the experiments `selected` whose key the manifest alone
/// decides, in the order of [`stages::graph`], with its stage's name: every generated
/// dataset's, every ladder rung's, and every training run's that does not start from another
/// run's network (an `init_from` run's key holds that network's digest, as an evaluation's
/// holds its players'). Nothing is computed or read but the manifest's own input files.
pub fn planned_folders(
    manifest: &Manifest,
    registry: &PluginRegistry,
    selected: &[&Experiment],
    out: &Path,
) -> Result<Vec<PlannedStage>> {
    let planned = |d: &Dataset| -> Result<(String, DataRecord)> {
        let (train, val) = match &d.source {
            DataSource::Files { train, val } => (train.clone(), val.clone()),
            DataSource::Generate(g) => {
                let (train, val) = generated_files(&data_dir(d, g, out)?, g);
                (train, vec![val])
            }
        };
        Ok((d.name.clone(), DataRecord::listed(train, val)))
    };
    let mut folders: Vec<PlannedStage> = Vec::new();
    for stage in stages::graph(manifest, selected)? {
        let name = stage.id.to_string();
        match &stage.id {
            StageId::Data { dataset } => {
                let d = manifest.dataset(dataset)?;
                if let Some(g) = generation(d) {
                    let dir = data_dir(d, g, out)?;
                    folders.push(PlannedStage { name, dir });
                }
            }
            StageId::Train {
                experiment,
                entry,
                run,
            } => {
                let e = manifest.experiment(experiment)?;
                let entry = e
                    .entries()
                    .into_iter()
                    .find(|x| &x.name == entry)
                    .expect("the graph's networks are the experiment's");
                if e.init_from.is_some() {
                    continue;
                }
                let records: Vec<(String, DataRecord)> = std::iter::once(&entry.data)
                    .chain(&e.val_data)
                    .map(planned)
                    .collect::<Result<_>>()?;
                let mut rung = None;
                let data = training_data(e, &entry, &records, |dataset, train, n| {
                    let dir = prefix::rung_dir(dataset, train, n, out)?;
                    rung = Some(dir.clone());
                    Ok(dir.join(prefix::RUNG_FILE))
                })?;
                if let Some(dir) = rung.filter(|d| folders.iter().all(|p| &p.dir != d)) {
                    let name = format!("{name} rung");
                    folders.push(PlannedStage { name, dir });
                }
                let set = registry
                    .feature_set(&entry.feature_set)
                    .map_err(|err| anyhow!("{err}"))?;
                let config = train_config(&entry, set.training_size() as usize, *run, &data, None)?;
                let dir = train_dir(e, &entry, &set, *run, &config, out)?;
                folders.push(PlannedStage { name, dir });
            }
            _ => {}
        }
    }
    Ok(folders)
}

/// The folder of a generated dataset's stage under the output folder `out` (its
/// [`StageKey::data`]).
fn data_dir(d: &Dataset, g: &GenerateTable, out: &Path) -> Result<PathBuf> {
    Ok(StageKey::data(g, out)?.dir(out, &d.name))
}

/// The training and validation files a dataset generated with `g` into its folder `dir` holds.
fn generated_files(dir: &Path, g: &GenerateTable) -> (Vec<PathBuf>, PathBuf) {
    let n = g.shard_count();
    (
        (0..n).map(|i| shard_file(dir, i, n)).collect(),
        dir.join("val.binpack"),
    )
}

/// The training file of shard `i` of a dataset generated in `n` shards.
fn shard_file(dir: &Path, i: u64, n: u64) -> PathBuf {
    match n {
        1 => dir.join("train.binpack"),
        _ => dir.join(format!("train-{i}-of-{n}.binpack")),
    }
}

/// The generation settings as run: a labeller network exported from an engine
/// (`label_net = "export:..."`) is exported once into the stage's folder `dir` (atomically:
/// shards exporting at once write the same file) and named by its path.
fn prepared(experiment: &str, d: &Dataset, g: &GenerateTable, dir: &Path) -> Result<GenerateTable> {
    let mut g = g.clone();
    if let Some(engine) = &g.label_net_from {
        let file = dir.join("label-net.nnue");
        if !file.is_file() {
            announce(
                experiment,
                "data",
                &format!(
                    "{}: exporting {engine}'s network into {}",
                    d.name,
                    file.display()
                ),
            );
            let partial = dir.join(format!("label-net.nnue.partial-{}", std::process::id()));
            super::engine_net::export(engine, &partial)
                .and_then(|()| {
                    std::fs::rename(&partial, &file)
                        .with_context(|| format!("cannot rename {}", partial.display()))
                })
                .with_context(|| format!("data.{}.generate.label_net", d.name))?;
        }
        g.label.net = Some(file);
    }
    Ok(g)
}

/// Generates (or resumes, or finds complete) shard `i` of the training data of `d` into its
/// file in `dir`; returns the positions it holds.
fn generate_shard(
    experiment: &str,
    (d, g): (&Dataset, &GenerateTable),
    dir: &Path,
    i: u64,
    options: &RunOptions,
) -> Result<u64> {
    let n = g.shard_count();
    let path = shard_file(dir, i, n);
    // Shards of one dataset run at once (an array job), each held by its own lock.
    let _held = lock_stage(dir, &format!(".lock-shard-{i}"))?;
    let shard = match n {
        1 => String::new(),
        _ => format!(" (shard {i} of {n})"),
    };
    announce(
        experiment,
        "data",
        &format!(
            "{}: generating {} of training data{shard} into {}",
            d.name,
            g.target,
            path.display()
        ),
    );
    let mut config = gensfen_config(g, g.target, g.seed, options.plugin_dir.as_deref());
    config.shard = (i, n);
    let summary =
        gensfen::generate(&config, &path, options.progress).map_err(anyhow::Error::msg)?;
    Ok(summary.positions)
}

/// The generation settings of dataset `d` (`None` for files).
fn generation(d: &Dataset) -> Option<&GenerateTable> {
    match &d.source {
        DataSource::Files { .. } => None,
        DataSource::Generate(g) => Some(g),
    }
}

/// Shard `shard` of the generated dataset `d` (`trainer run --stage data:D:SHARD`); probing,
/// done when its file is complete.
fn ensure_shard(d: &Dataset, shard: u64, options: &RunOptions) -> Result<()> {
    let g = generation(d)
        .filter(|g| shard < g.shard_count())
        .ok_or_else(|| anyhow!("dataset '{}' has no shard {shard}", d.name))?;
    let dir = data_dir(d, g, &options.out)?;
    let file = shard_file(&dir, shard, g.shard_count());
    if options.lookup.probing() {
        return match gensfen::is_complete(&file) {
            true => Ok(()),
            false => Err(Missing(dir).into()),
        };
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let label = format!("data:{}:{shard}", d.name);
    let g = prepared(&label, d, g, &dir)?;
    generate_shard(&label, (d, &g), &dir, shard, options)?;
    Ok(())
}

/// The dataset's files, generating them first if the manifest asks for self-play data: its
/// training shards one after another (each resumed, or found complete), then its validation
/// games.
fn ensure_data(experiment: &str, d: &Dataset, options: &RunOptions) -> Result<DataRecord> {
    let g = match &d.source {
        DataSource::Files { train, val } => {
            return Ok(DataRecord::listed(train.clone(), val.clone()));
        }
        DataSource::Generate(g) => g,
    };
    let dir = data_dir(d, g, &options.out)?;
    let what = format_args!("[{experiment}] data: {}", d.name);
    let stored = options.lookup.stage(&dir, Some(what), Some, || {
        let started = Instant::now();
        let g = prepared(experiment, d, g, &dir)?;
        let n = g.shard_count();
        let mut positions = 0;
        for i in 0..n {
            positions += generate_shard(experiment, (d, &g), &dir, i, options)?;
        }
        // Validation games come from another seed: no game is in both sets.
        let (train, val) = generated_files(&dir, &g);
        announce(
            experiment,
            "data",
            &format!(
                "{}: generating {} validation games into {}",
                d.name,
                g.val_games.get(),
                val.display()
            ),
        );
        let config = gensfen_config(
            &g,
            Target::Games(g.val_games.get()),
            g.seed ^ 0x7a1d_a7e5_0000_0001,
            options.plugin_dir.as_deref(),
        );
        positions += gensfen::generate(&config, &val, options.progress)
            .map_err(anyhow::Error::msg)?
            .positions;
        let record = DataRecord {
            train,
            val: vec![val],
            positions,
            seconds: started.elapsed().as_secs_f64(),
        };
        Ok(record.stored(&options.out))
    })?;
    Ok(stored.read(&options.out))
}

/// The training configuration of run `run` of `entry`.
fn train_config(
    entry: &Entry,
    n: usize,
    run: u64,
    data: &DataRecord,
    init: Option<PathBuf>,
) -> Result<TrainConfig> {
    let mut config = entry.settings.config(
        &entry.feature_set,
        n,
        DataFile::all(&data.train, None)?,
        DataFile::all(&data.val, None)?,
    );
    config.seed = entry.settings.seed + run - 1;
    config.init = init;
    config.check()?;
    Ok(config)
}

/// Each block of `set` as a training stage's key holds it: `name:layout_version:layout_id`.
fn layouts_of(set: &FeatureSet) -> Vec<String> {
    nnue::BlockInfo::of_set(set)
        .iter()
        .map(|b| format!("{}:{}:{}", b.name, b.layout_version, b.layout_id))
        .collect()
}

/// The folder of run `run` of `entry` of `e` (feature set `set`) trained as `config`, under
/// the output folder `out`.
fn train_dir(
    e: &Experiment,
    entry: &Entry,
    set: &FeatureSet,
    run: u64,
    config: &TrainConfig,
    out: &Path,
) -> Result<PathBuf> {
    let name = format!("{}-{}-run{run}", e.name, entry.name);
    Ok(StageKey::train(config, layouts_of(set), out)?.dir(out, &name))
}

/// Trains (or resumes, or finds finished) run `run` of `entry`.
fn train_one(
    e: &Experiment,
    entry: &Entry,
    set: &FeatureSet,
    run: u64,
    data: &DataRecord,
    init: Option<PathBuf>,
    options: &RunOptions,
) -> Result<TrainRecord> {
    let config = train_config(entry, set.training_size() as usize, run, data, init)?;
    let fs = &entry.name;
    let dir = train_dir(e, entry, set, run, &config, &options.out)?;
    let label = format!("{fs} run {run}/{}", e.settings.runs);
    // Done with fewer epochs than asked for is not done: the run resumes.
    let finished = |r: TrainRecord| {
        let net = read_path(&r.net, &options.out);
        (config.finished_after(r.epochs, &r.val_losses) && net.exists()).then_some(r)
    };
    let what = format_args!("[{}] train: {label}", e.name);
    let stored = options.lookup.stage(&dir, Some(what), finished, || {
        announce(
            &e.name,
            "train",
            &format!(
                "{label}: {} -> {}, {}, into {}",
                set.size(),
                entry.settings.layers_label(),
                entry.settings.length_label(),
                dir.display()
            ),
        );
        let rt = Runtime {
            device: options.device,
            loader_threads: options.loader_threads,
            out: dir.clone(),
            resume: true,
            progress: options.progress,
            log: true,
            stop_after_steps: None,
        };
        let outcome = train(config.clone(), set, &rt).map_err(|err| match err {
            TrainError::Failed(m) => anyhow!("[{}] training {label}: {m}", e.name),
            other => other.into(),
        })?;
        let history = &outcome.state.history;
        let record = TrainRecord {
            epochs: outcome.state.epoch,
            best_epoch: outcome.best_epoch,
            net: outcome.net.clone(),
            min_val_loss: history
                .iter()
                .map(|m| m.val_loss)
                .fold(f64::INFINITY, f64::min),
            val_losses: history.iter().map(|m| m.val_loss).collect(),
            seconds: history.iter().map(|m| m.seconds).sum(),
        };
        Ok(TrainRecord {
            net: stored_path(&record.net, &options.out),
            ..record
        })
    })?;
    Ok(stored.read(&options.out))
}

/// The default output root for a manifest: `runs/` beside it.
pub fn default_out(manifest: &Path) -> PathBuf {
    manifest.parent().unwrap_or(Path::new("")).join("runs")
}
