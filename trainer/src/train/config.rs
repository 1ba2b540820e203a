//! A run's configuration: the recipe ([`TrainSettings`]) plus what it is applied to (the
//! feature set, the data and their units, a starting network) and which networks to export;
//! what a checkpoint stores and a resumed run must agree with.

use anyhow::{Result, bail};
use std::path::PathBuf;

use nnue::Shape;
use nnue::units::ScoreUnits;
use serde::{Deserialize, Serialize};

use super::objective::Method;
use super::optim::AdamConfig;
use super::schedule::{LrSchedule, Schedule};
use super::settings::TrainSettings;
use super::stop::StopRule;
use crate::checked::UnitReal;
use crate::data::Format;
use crate::data::filter::FilterConfig;
use crate::loader::Input;
use crate::model::FirstLayerInit;

/// One data file of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFile {
    /// The file.
    pub path: PathBuf,
    /// Its format's name (`text`, `compact`, `bin`, `binpack`).
    pub format: String,
}

impl DataFile {
    /// The data files at `paths`, in the format given or else told by each extension.
    pub fn all(paths: &[PathBuf], format: Option<Format>) -> Result<Vec<DataFile>> {
        paths
            .iter()
            .map(|p| {
                Ok(DataFile {
                    path: p.clone(),
                    format: Format::resolve(format, p)
                        .map_err(anyhow::Error::msg)?
                        .name()
                        .to_string(),
                })
            })
            .collect()
    }

    /// The loader's input.
    pub fn input(&self) -> Result<Input> {
        Input::new(
            self.path.clone(),
            Some(self.format.parse::<Format>().map_err(anyhow::Error::msg)?),
        )
    }
}

/// Everything that determines a run's result: the recipe ([`TrainSettings`], as the command
/// line, the manifest and `trainer bench` hold it, its seed this run's) and what it is applied
/// to (the feature set, the data and their units, a starting network), with which networks to
/// export. Stored in its checkpoints; a resumed run must agree with it (except for the number
/// of epochs, the stop rule and the exports, which may change).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Feature set spec: blocks joined by `+` (sum) and `*` (product), a term's `^` for a
    /// factorizer.
    pub feature_set: String,
    /// Its size N (features, virtual ones included).
    pub features: usize,
    /// The recipe.
    pub recipe: TrainSettings,
    /// Training files.
    pub train: Vec<DataFile>,
    /// Validation files (held out: never trained on).
    pub val: Vec<DataFile>,
    /// The units the data's scores are read in (the recipe's `score_units`, else the data's),
    /// recorded in the exported networks.
    pub score_units: ScoreUnits,
    /// How a fresh model's first layer starts (the recipe's `first_layer_init`, else its base
    /// recipe's). Left out where it is `active-fan-in`: configurations stored before the
    /// setting existed started so, and keep their identity.
    #[serde(default = "active_fan_in", skip_serializing_if = "is_active_fan_in")]
    pub first_layer_init: FirstLayerInit,
    /// Start from this checkpoint or network (weights only) instead of random weights.
    pub init: Option<PathBuf>,
    /// Export a network every this many epochs (0: only the last).
    pub export_every: u64,
    /// Also export at these epochs.
    pub export_epochs: Vec<u64>,
}

impl TrainConfig {
    /// The configuration of a run of `recipe` on `feature_set` (N = `n` features) and these
    /// files, whose scores are in `data_units`: the recipe plus its data.
    pub fn new(
        recipe: &TrainSettings,
        feature_set: &str,
        n: usize,
        (train, val): (Vec<DataFile>, Vec<DataFile>),
        data_units: ScoreUnits,
    ) -> TrainConfig {
        TrainConfig {
            feature_set: feature_set.to_string(),
            features: n,
            recipe: recipe.written_out(),
            first_layer_init: recipe.first_layer_init(),
            train,
            val,
            score_units: recipe.units(data_units),
            init: None,
            export_every: 0,
            export_epochs: Vec::new(),
        }
    }

    /// A configuration with the default recipe ([`TrainSettings::default`]) for a feature set
    /// of `n` features; the caller sets the files.
    pub fn with_defaults(feature_set: &str, n: usize) -> TrainConfig {
        TrainConfig::new(
            &TrainSettings::default(),
            feature_set,
            n,
            (Vec::new(), Vec::new()),
            ScoreUnits::Centipawns,
        )
    }

    /// Checks what the recipe's types and [`TrainSettings::check`] cannot: the files, and the
    /// network's size against the format's limits.
    pub fn check(&self) -> Result<()> {
        if self.train.is_empty() {
            bail!("no training files");
        }
        if self.val.is_empty() {
            bail!("no validation files (the validation set is held out from training)");
        }
        if self.train.iter().any(|t| self.val.contains(t)) {
            bail!("a validation file is also a training file");
        }
        if self.features == 0 {
            bail!("the feature set '{}' has no features", self.feature_set);
        }
        self.recipe.check().map_err(anyhow::Error::new)?;
        let shape = self.shape();
        // The network format's limits, checked before anything is allocated: a product such
        // as `halfkp*kr` (110M features) would otherwise abort on its first allocation.
        nnue::check_sizes(shape.n as u64, shape.l1 as u64, shape.l2() as u64).map_err(|e| {
            anyhow::anyhow!("the network of '{}' is too large: {e}", self.feature_set)
        })?;
        for f in self.train.iter().chain(&self.val) {
            f.input()?;
        }
        Ok(())
    }

    /// The network's shape.
    pub fn shape(&self) -> Shape {
        self.recipe.shape(self.features)
    }

    /// The training method and its loss, its win-rate scales in the data's units.
    pub fn method(&self) -> Method {
        self.recipe.method().in_units(self.score_units)
    }

    /// The position filters, the WDL skip reading the data's units.
    pub fn filter(&self) -> FilterConfig {
        FilterConfig {
            score_units: self.score_units,
            ..self.recipe.filter()
        }
    }

    /// The optimizer's settings.
    pub fn adam(&self) -> AdamConfig {
        self.recipe.adam()
    }

    /// When the run stops before its epoch cap, and which epoch it hands over.
    pub fn stop(&self) -> StopRule {
        self.recipe.stop_rule()
    }

    /// The epoch cap.
    pub fn epochs(&self) -> u64 {
        self.recipe.epochs.get()
    }

    /// The run's seed (weights, data order, random skips).
    pub fn seed(&self) -> u64 {
        self.recipe.seed
    }

    /// Positions (triplets for PQR) per step.
    pub fn batch_size(&self) -> usize {
        self.recipe.batch_size.get() as usize
    }

    /// Validation positions (triplets for PQR) taken from the start of the validation files.
    pub fn val_size(&self) -> u64 {
        self.recipe.val_positions.get()
    }

    /// The blocks whose first-layer rows are trained within ±127/127 and exported as `i8`.
    pub fn i8_blocks(&self) -> Vec<String> {
        self.recipe.i8_blocks()
    }

    /// Optimizer steps per epoch.
    pub fn steps_per_epoch(&self) -> u64 {
        self.recipe
            .epoch_positions
            .get()
            .div_ceil(self.batch_size() as u64)
    }

    /// The learning rate and λ at every step of the run.
    pub fn schedule(&self) -> Schedule {
        let r = &self.recipe;
        let lambda = match self.method() {
            Method::Score(loss) => loss.lambda,
            Method::Pqr(_) => 1.0,
        };
        Schedule {
            kind: r.lr_schedule,
            lr: r.lr(),
            gamma: r.gamma(),
            floor: r.lr_floor.get(),
            warmup: r.warmup_steps,
            steps_per_epoch: self.steps_per_epoch(),
            total_steps: self.epochs().saturating_mul(self.steps_per_epoch()),
            lambda_start: lambda,
            lambda_end: r.lambda_end.map_or(lambda, |l| l.get()),
        }
    }

    /// How many epochs the stochastic weight average holds before epoch `epoch` (1-based) is
    /// added to it; `None` where that epoch is not averaged.
    pub fn swa_before(&self, epoch: u64) -> Option<u64> {
        self.recipe
            .swa_from
            .map(|f| f.get())
            .filter(|&from| epoch >= from)
            .map(|from| epoch - from)
    }

    /// Whether the schedule depends on the run's length (its epoch cap): then the cap is part
    /// of the run's identity, since a longer run's early steps differ.
    fn length_shapes_schedule(&self) -> bool {
        self.recipe.lr_schedule != LrSchedule::Step || self.recipe.lambda_end.is_some()
    }

    /// What makes a run the run it is: the configuration without how long it trains (the epoch
    /// cap, unless the schedule depends on it, and the stop rule) and which networks it exports.
    /// A checkpoint continues only under the same identity ([`Self::resume_mismatch`]), and the
    /// experiment cache keys a run by it, so asking for more epochs or another patience
    /// continues a run instead of starting it again.
    pub fn identity(&self) -> TrainConfig {
        let mut run = self.clone();
        if !self.length_shapes_schedule() {
            run.recipe.epochs = crate::checked::Count::new(1);
            run.recipe.passes = None;
        }
        run.recipe.patience = None;
        run.recipe.min_delta = UnitReal::new(0.0);
        run.export_every = 0;
        run.export_epochs = Vec::new();
        run
    }

    /// Whether a run that has trained `epochs` epochs with these validation losses is over: its
    /// epoch cap reached, or the stop rule met. The one rule for the training loop and the
    /// experiment cache.
    pub fn finished_after(&self, epochs: u64, val_losses: &[f64]) -> bool {
        epochs >= self.epochs() || self.stop().converged(val_losses)
    }

    /// Whether a network is exported after epoch `epoch` (1-based).
    pub fn exports_at(&self, epoch: u64) -> bool {
        epoch == self.epochs()
            || (self.export_every > 0 && epoch.is_multiple_of(self.export_every))
            || self.export_epochs.contains(&epoch)
    }

    /// Why a checkpoint of `stored` cannot be continued with this configuration, if it cannot:
    /// each setting that differs, by its name (`recipe.lr`, `train`).
    pub fn resume_mismatch(&self, stored: &TrainConfig) -> Option<String> {
        let a = serde_json::to_value(self.identity()).ok()?;
        let b = serde_json::to_value(stored.identity()).ok()?;
        let (a, b) = (leaves(&a), leaves(&b));
        let shown = |v: Option<&serde_json::Value>| v.map_or("-".into(), |v| v.to_string());
        let differ: Vec<String> = a
            .keys()
            .chain(b.keys().filter(|k| !a.contains_key(*k)))
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| {
                format!(
                    "{k} (checkpoint {}, now {})",
                    shown(b.get(k)),
                    shown(a.get(k))
                )
            })
            .collect();
        (!differ.is_empty()).then(|| differ.join("; "))
    }
}

/// The first layer's start of a stored configuration that does not name one.
fn active_fan_in() -> FirstLayerInit {
    FirstLayerInit::ActiveFanIn
}

/// Whether a configuration leaves its first layer's start out (`active-fan-in`).
fn is_active_fan_in(init: &FirstLayerInit) -> bool {
    *init == FirstLayerInit::ActiveFanIn
}

/// A configuration's settings by name: the recipe's as `recipe.NAME`, the rest by their own.
fn leaves(v: &serde_json::Value) -> std::collections::BTreeMap<String, serde_json::Value> {
    let mut out = std::collections::BTreeMap::new();
    if let Some(top) = v.as_object() {
        for (k, v) in top {
            match (k.as_str(), v.as_object()) {
                ("recipe", Some(recipe)) => {
                    for (name, value) in recipe {
                        out.insert(format!("recipe.{name}"), value.clone());
                    }
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}
