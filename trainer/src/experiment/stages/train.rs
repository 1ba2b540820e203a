//! The training stage ([`TrainStage`]): one run of one network of an experiment, on its
//! dataset's training files (their first `train_positions`, a ladder's rung, when set),
//! validated on its validation files, starting from the same run of the experiment its
//! `init_from` names.

use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};

use plugin_api::FeatureSet;

use super::data::planned_record;
use super::id::{DataStage, StageId, TrainStage};
use super::stage::{Ctx, PlannedStage, Stage, StagePlan, announce};
use crate::experiment::cache::{read_path, stored_path};
use crate::experiment::manifest::{Entry, Experiment, Manifest};
use crate::experiment::options::RunOptions;
use crate::experiment::prefix;
use crate::experiment::records::{DataRecord, TrainRecord};
use crate::experiment::stage_key::StageKey;
use crate::experiment::stage_kind::StageKind;
use crate::train::config::{DataFile, TrainConfig};
use crate::train::training_loop::{Runtime, TrainError, train};

impl TrainStage {
    /// Its experiment and network, checked against the manifest.
    fn find<'m>(&self, manifest: &'m Manifest) -> Result<(&'m Experiment, Entry)> {
        let e = manifest
            .experiment(&self.experiment)
            .with_context(|| format!("stage {}", self.id()))?;
        let entry = e
            .entries()
            .into_iter()
            .find(|x| x.name == self.entry)
            .ok_or_else(|| {
                anyhow!(
                    "stage {}: experiment '{}' has no network '{}'",
                    self.id(),
                    e.name,
                    self.entry
                )
            })?;
        if self.run > e.runs {
            bail!(
                "stage {}: experiment '{}' has {} run(s)",
                self.id(),
                e.name,
                e.runs
            );
        }
        Ok((e, entry))
    }

    /// The same run of the same network of the experiment `e`'s `init_from` names, if any.
    fn init_run(&self, e: &Experiment) -> Option<TrainStage> {
        e.init_from.as_ref().map(|other| TrainStage {
            experiment: other.clone(),
            entry: self.entry.clone(),
            run: self.run,
        })
    }
}

/// The datasets `entry` of `e` trains and is validated on.
fn datasets_of(e: &Experiment, entry: &Entry) -> Vec<DataStage> {
    std::iter::once(&entry.data)
        .chain(&e.val_data)
        .map(|d| DataStage {
            dataset: d.name.clone(),
        })
        .collect()
}

impl Stage for TrainStage {
    const KIND: StageKind = StageKind::Train;
    type Record = TrainRecord;

    fn needs(&self, manifest: &Manifest) -> Result<Vec<StageId>> {
        let (e, entry) = self.find(manifest)?;
        let mut needs: Vec<StageId> = datasets_of(e, &entry).into_iter().map(Into::into).collect();
        if let Some(init) = self.init_run(e) {
            let (name, fs) = (&init.experiment, &entry.name);
            let other = manifest.experiment(name)?;
            if !other.entries().iter().any(|x| &x.name == fs) {
                bail!("init_from: experiment '{name}' has no network '{fs}'");
            }
            needs.push(init.into());
        }
        Ok(needs)
    }

    fn planned(&self, plan: StagePlan) -> Result<Vec<PlannedStage>> {
        let (e, entry) = self.find(plan.manifest)?;
        // An `init_from` run's key holds that network's digest, as an evaluation's holds its
        // players'.
        if e.init_from.is_some() {
            return Ok(Vec::new());
        }
        let records: Vec<(String, DataRecord)> = std::iter::once(&entry.data)
            .chain(&e.val_data)
            .map(|d| Ok((d.name.clone(), planned_record(d, plan.out)?)))
            .collect::<Result<_>>()?;
        let name = self.id().to_string();
        let mut folders = Vec::new();
        let data = training_data(e, &entry, &records, |dataset, train, n| {
            let dir = prefix::rung_dir(dataset, train, n, plan.out)?;
            folders.push(PlannedStage {
                name: format!("{name} rung"),
                dir: dir.clone(),
            });
            Ok(dir.join(prefix::RUNG_FILE))
        })?;
        let set = plan
            .registry
            .feature_set(&entry.feature_set)
            .map_err(|err| anyhow!("{err}"))?;
        let config = train_config(&entry, set.training_size() as usize, self.run, &data, None)?;
        let dir = train_dir(e, &entry, &set, self.run, &config, plan.out)?;
        folders.push(PlannedStage { name, dir });
        Ok(folders)
    }

    fn work(&self, ctx: Ctx) -> Result<TrainRecord> {
        let (e, entry) = self.find(ctx.manifest)?;
        let mut records = Vec::new();
        for d in datasets_of(e, &entry) {
            let name = d.dataset.clone();
            records.push((name, ctx.need(d)?));
        }
        let data = training_data_cut(e, &entry, &records, ctx.options)?;
        let set = ctx
            .registry
            .feature_set(&entry.feature_set)
            .map_err(|err| anyhow!("{err}"))?;
        let init = match self.init_run(e) {
            Some(init) => Some(ctx.need(init)?.net),
            None => None,
        };
        train_one(e, &entry, &set, self.run, &data, init, ctx.options)
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
pub(super) fn training_data_cut(
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

/// The training configuration of run `run` of `entry`.
fn train_config(
    entry: &Entry,
    n: usize,
    run: u64,
    data: &DataRecord,
    init: Option<PathBuf>,
) -> Result<TrainConfig> {
    let mut config = TrainConfig::new(
        &entry.settings,
        &entry.feature_set,
        n,
        (
            DataFile::all(&data.train, None)?,
            DataFile::all(&data.val, None)?,
        ),
        data.units,
    );
    let cap = entry.settings.epoch_cap(entry.training_positions());
    config.recipe.epochs = i64::try_from(cap)
        .map_err(|e| e.to_string())
        .and_then(crate::checked::Count::try_from)
        .map_err(|e| anyhow!("{}: epochs: {e}", entry.name))?;
    config.recipe.seed = entry.settings.seed + run - 1;
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
    let label = format!("{fs} run {run}/{}", e.runs);
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
