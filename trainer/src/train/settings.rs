//! The settings of training, declared once: each is one field of [`TrainSettings`], which owns
//! its default (the thesis's values, in one `Default`), its command-line option (`trainer
//! train` flattens the struct) and its manifest key (`[defaults]` and `[[experiment]]` overlay
//! it, see [`crate::experiment::manifest`]). Values are checked on the way in, by the same
//! types on both paths ([`crate::checked`]).
//!
//! [`TrainSettings`] is the recipe: a run's configuration (`TrainConfig`) is the recipe plus
//! its data, and the checkpoint and the stage key hold it as it is. Adding a setting is adding a
//! field here (with its default in [`TrainSettings::default`]) and reading it where the run
//! needs it.

use clap::{Args, ValueEnum};
use nnue::units::ScoreUnits;
use plugin_api::PluginRegistry;
use serde::{Deserialize, Serialize};

use super::loss::{PqrLoss, ScoreLoss, Wdl};
use super::objective::Method;
use super::optim::{AdamConfig, RANGER_EPS};
use super::schedule::LrSchedule;
use super::stop::StopRule;
use crate::checked::{Count, L1Width, Positive, PositiveFraction, PositiveReal, UnitReal};
use crate::data::filter::FilterConfig;
use crate::invalid_setting::InvalidSetting;
use crate::loader::LoaderConfig;
use crate::model::FirstLayerInit;
use nnue::Shape;

/// The most positions (triplets) in one batch.
pub const MAX_BATCH_SIZE: u64 = 1 << 22;
/// The most epochs of a run.
pub const MAX_EPOCHS: u64 = 1 << 20;
/// The most positions of an epoch or of the validation set.
pub const MAX_POSITIONS: u64 = 1 << 40;
/// The widest hidden layer.
pub const MAX_L2: u64 = nnue::MAX_L2 as u64;

/// The training method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum MethodName {
    /// Method 1 (thesis §5.2): the data's scores as targets, loss |W(target) - W(output)|^p in
    /// WDL space.
    Score,
    /// Method 2 (thesis §5.3): PQR triplets (position, next position of the game, random move).
    Pqr,
}

/// The optimizer (the thesis used Adam).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum OptimizerName {
    /// Adam with the thesis's betas.
    Adam,
    /// Adam, but a step updates only the first-layer rows of the batch's indices (PyTorch's
    /// SparseAdam): a step's cost no longer grows with N (king-relative sets, small batches).
    SparseAdam,
    /// Adam with decoupled weight decay (PyTorch's AdamW; bullet's optimizer, decay 0.01 unless
    /// `weight_decay` says otherwise).
    Adamw,
    /// nnue-pytorch's default, RangerLite: positive-negative momentum and a lookahead every 5
    /// steps, validated and exported with its slow weights.
    Ranger,
}

/// The recipe the settings a person leaves out come from: the learning rate, its decay and
/// the first layer's start (`lr`, `gamma` and `first_layer_init` override it). One setting
/// between today's default and the recipe this trainer had before it was measured beside
/// nnue-pytorch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum BaseRecipe {
    /// nnue-pytorch's: 8.75e-4 decaying by 0.992 per epoch (its `--lr`, `--gamma`) and its
    /// first-layer start ([`FirstLayerInit::NnuePytorch`]). Beside nnue-pytorch it trained
    /// lower held-out losses and stronger networks than the thesis's (RESULTS.md, "Does this
    /// trainer train as well as nnue-pytorch?").
    #[default]
    NnuePytorch,
    /// The thesis's rate (§5.2), 5e-4 decaying by 0.99 per epoch, and this trainer's first
    /// start of the first layer ([`FirstLayerInit::ActiveFanIn`]): what RESULTS' earlier runs
    /// were trained with.
    Thesis,
}

impl BaseRecipe {
    /// The learning rate in the first epoch.
    pub fn lr(self) -> f64 {
        match self {
            BaseRecipe::NnuePytorch => 8.75e-4,
            BaseRecipe::Thesis => 5e-4,
        }
    }

    /// The factor per epoch of the step schedule.
    pub fn gamma(self) -> f64 {
        match self {
            BaseRecipe::NnuePytorch => 0.992,
            BaseRecipe::Thesis => 0.99,
        }
    }

    /// How a fresh model's first layer starts.
    pub fn first_layer_init(self) -> FirstLayerInit {
        match self {
            BaseRecipe::NnuePytorch => FirstLayerInit::NnuePytorch,
            BaseRecipe::Thesis => FirstLayerInit::ActiveFanIn,
        }
    }
}

/// bullet's AdamW decay (`AdamWParams::default`, `decay: 0.01`).
pub const ADAMW_DEFAULT_DECAY: f64 = 0.01;

/// A fitted win-rate model σ((e − a) / b) for target and output alike: `A,B` on the command
/// line, `[a, b]` in a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "[f64; 2]", into = "[f64; 2]")]
pub struct WdlModel {
    /// The offset a.
    pub a: f64,
    /// The scale b (above 0).
    pub b: f64,
}

impl TryFrom<[f64; 2]> for WdlModel {
    type Error = String;

    fn try_from([a, b]: [f64; 2]) -> Result<Self, String> {
        if !a.is_finite() {
            return Err(format!("a must be a finite number, not {a}"));
        }
        if !(b.is_finite() && b > 0.0) {
            return Err(format!("b must be above 0, not {b}"));
        }
        Ok(WdlModel { a, b })
    }
}

impl From<WdlModel> for [f64; 2] {
    fn from(w: WdlModel) -> [f64; 2] {
        [w.a, w.b]
    }
}

impl std::str::FromStr for WdlModel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once(',')
            .ok_or_else(|| format!("'{s}' is not two numbers A,B"))?;
        let num = |x: &str| {
            x.trim()
                .parse::<f64>()
                .map_err(|e| format!("'{x}' in '{s}': {e}"))
        };
        WdlModel::try_from([num(a)?, num(b)?])
    }
}

/// The network's shape after the first layer: a preset ([`nnue::Preset`], by name) or, in a
/// manifest, a table of [`nnue::Arch`]'s keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ArchSetting {
    /// A preset by name.
    Preset(nnue::Preset),
    /// Every part spelt out.
    Table(nnue::Arch),
}

impl ArchSetting {
    /// The shape it names, the thesis's hidden width being `l2`.
    pub fn resolve(&self, l2: usize) -> nnue::Arch {
        match self {
            ArchSetting::Preset(p) => p.arch(l2),
            ArchSetting::Table(a) => a.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for ArchSetting {
    /// A string is a preset's name, a table an [`nnue::Arch`]; each says what is wrong with it
    /// (serde's untagged enums only say that nothing matched).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ArchSetting;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a shape preset's name or a table of its parts")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ArchSetting, E> {
                v.parse().map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ArchSetting, A::Error> {
                nnue::Arch::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ArchSetting::Table)
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl std::str::FromStr for ArchSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        s.parse::<nnue::Preset>()
            .map(ArchSetting::Preset)
            .map_err(|e| format!("{e}; a manifest may also give a table"))
    }
}

/// Every setting of a training run that a person chooses (the data files, the output folder
/// and the machine's resources aside). On the command line of `trainer train` the filters and
/// the seed come from the options every data command shares, and `runs` and `optimizer` are
/// the manifest's alone.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainSettings {
    /// First-layer width per perspective (a multiple of 32).
    #[arg(long, default_value_t = TrainSettings::default().l1)]
    pub l1: L1Width,
    /// Hidden width (of the thesis's shape).
    #[arg(long, default_value_t = TrainSettings::default().l2)]
    pub l2: Count<MAX_L2>,
    /// The shape after the first layer: `thesis` (N -> L1 -> L2 -> 1, the default) or `sfnnv5`
    /// (Stockfish 15.1's: pairwise product, 8 PSQT buckets, 8 layer stacks of 15+1 -> 32 -> 1,
    /// squared clipped ReLU); a manifest may give a table of the parts.
    #[arg(long, value_name = "PRESET")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arch: Option<ArchSetting>,
    /// Training method.
    #[arg(long, value_enum, default_value_t = TrainSettings::default().method)]
    pub method: MethodName,
    /// Optimizer.
    #[arg(long, value_enum, default_value_t = TrainSettings::default().optimizer)]
    pub optimizer: OptimizerName,
    /// Where `lr`, `gamma` and `first_layer_init` are not given: nnue-pytorch's recipe
    /// (`nnue-pytorch`: 8.75e-4 × 0.992 per epoch, its first-layer start) or the thesis's
    /// (`thesis`: 5e-4 × 0.99, this trainer's first start).
    #[arg(long, value_enum, default_value_t = TrainSettings::default().base_recipe)]
    #[serde(skip_serializing_if = "crate::checked::is_zero")]
    pub base_recipe: BaseRecipe,
    /// How the first layer's weights and bias start (default: the base recipe's):
    /// `nnue-pytorch` (each term's rows in ±1/√rows, the bias in ±1/√N) or `active-fan-in`
    /// (every row in ±1/(2√32), the bias near 0.5).
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_layer_init: Option<FirstLayerInit>,
    /// The learning rate in the first epoch (default: the base recipe's).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lr: Option<PositiveFraction>,
    /// The hidden weights W2 learn at lr * min(1, W / L1), so that a step moves a hidden unit as
    /// far as at L1 = W whatever the width (wider layers otherwise overshoot and die).
    #[arg(long, value_name = "W", default_value_t = TrainSettings::default().hidden_lr_width)]
    pub hidden_lr_width: Positive,
    /// Learning-rate factor per epoch, the step schedule's (default: the base recipe's).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gamma: Option<PositiveFraction>,
    /// How the learning rate moves: step (lr * gamma^epoch), cosine (down to lr_floor * lr at
    /// the epoch cap, bullet's) or one-cycle (nnue-pytorch's: up from lr/25, down to lr/1250).
    #[arg(long, value_enum, default_value_t = TrainSettings::default().lr_schedule)]
    #[serde(skip_serializing_if = "crate::checked::is_zero")]
    pub lr_schedule: LrSchedule,
    /// The cosine schedule's last learning rate, as a fraction of lr.
    #[arg(long, default_value_t = TrainSettings::default().lr_floor)]
    #[serde(skip_serializing_if = "crate::checked::is_zero")]
    pub lr_floor: UnitReal,
    /// Steps of linear warm-up at the start (for one-cycle: its rising phase, 20% of the steps
    /// when 0).
    #[arg(long, value_name = "STEPS", default_value_t = TrainSettings::default().warmup_steps)]
    #[serde(skip_serializing_if = "crate::checked::is_zero")]
    pub warmup_steps: u64,
    /// AdamW's decoupled weight decay per step (optimizer adamw only; 0.01 by default, bullet's).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight_decay: Option<UnitReal>,
    /// Scale each step's gradient down to this norm when it is larger (nnue-pytorch clips at 2).
    #[arg(long, value_name = "NORM")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_grad_norm: Option<PositiveReal>,
    /// Train to convergence: stop once the validation loss has not improved for this many
    /// epochs (epochs is then the cap); the best epoch's network is handed over either way.
    #[arg(long, value_name = "EPOCHS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patience: Option<Positive>,
    /// The least fall of the validation loss that counts as an improvement (for patience and
    /// for the best epoch).
    #[arg(long, default_value_t = TrainSettings::default().min_delta)]
    #[serde(skip_serializing_if = "crate::checked::is_zero")]
    pub min_delta: UnitReal,
    /// Stochastic weight averaging from this epoch on: each epoch from it hands over (and
    /// validates) the equal average of its weights and those of the averaged epochs before it
    /// (nnue-pytorch's --swa-start-epoch is this minus 1).
    #[arg(long, value_name = "EPOCH")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swa_from: Option<Positive>,
    /// Positions (triplets) per optimizer step.
    #[arg(long, default_value_t = TrainSettings::default().batch_size)]
    pub batch_size: Count<MAX_BATCH_SIZE>,
    /// The units of the data's scores, where the data's record or format does not tell them
    /// right (default: the data's own, `data::score_units`): centipawns (this project's data),
    /// `stockfish` (Stockfish 15.1's internal units, 361 to a pawn: Stockfish's binpacks) or
    /// `stockfish-wdl` (those of Stockfish's networks of today). The network learns and records
    /// them, the loss's win-rate scales (in centipawns) and the WDL skip read the scores in them.
    #[arg(long, value_name = "UNITS")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_units: Option<ScoreUnits>,
    /// Epochs to train.
    #[arg(long, default_value_t = TrainSettings::default().epochs)]
    pub epochs: Count<MAX_EPOCHS>,
    /// Train this many passes over the training positions instead of `epochs` (manifest only:
    /// a ladder's rung, or a generated dataset, knows its count): the epoch cap becomes
    /// ceil(passes × positions / epoch_positions), so that a schedule ending at the cap
    /// (cosine) spends a budget proportional to the data.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<PositiveReal>,
    /// Positions (triplets) per epoch, rounded up to whole batches.
    #[arg(long = "epoch-size", default_value_t = TrainSettings::default().epoch_positions)]
    pub epoch_positions: Count<MAX_POSITIONS>,
    /// Seed of the weights, the data order and the filters' random skips (in a manifest the
    /// base seed: run k uses seed + k - 1).
    #[arg(skip = TrainSettings::default().seed)]
    pub seed: u64,
    /// Validation positions (triplets for PQR) taken from the start of the validation files.
    #[arg(long = "val-size", default_value_t = TrainSettings::default().val_positions)]
    pub val_positions: Count<MAX_POSITIONS>,
    /// Shuffle buffer of the loader, in positions (triplets).
    #[arg(long, default_value_t = TrainSettings::default().shuffle)]
    pub shuffle: usize,
    /// Skip positions whose side to move is in check.
    #[arg(skip = TrainSettings::default().skip_in_check)]
    pub skip_in_check: bool,
    /// Skip positions whose best move is a capture (the thesis's rule, with the one above).
    #[arg(skip = TrainSettings::default().skip_capture)]
    pub skip_capture: bool,
    /// Skip positions before this ply.
    #[arg(skip)]
    pub min_ply: Option<u16>,
    /// Skip positions after this ply.
    #[arg(skip)]
    pub max_ply: Option<u16>,
    /// Skip positions with |score| above this.
    #[arg(skip)]
    pub max_score: Option<Positive>,
    /// Probability of skipping any other position (nnue-pytorch's random skip N: N/(N+1)).
    #[arg(skip = TrainSettings::default().skip_rate)]
    pub skip_rate: UnitReal,
    /// nnue-pytorch's WDL skip (keep with the probability that the score gives the result).
    #[arg(skip)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wdl_skip: bool,
    /// nnue-pytorch's soft early-ply skip, up to this ply (its default: 20).
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_skip_ply: Option<u16>,
    /// nnue-pytorch's piece-count ("smart") skip.
    #[arg(skip)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub piece_count_skip: bool,
    /// Exponent of the score loss.
    #[arg(long, default_value_t = TrainSettings::default().power)]
    pub power: PositiveReal,
    /// Weight of the score in the target lambda*W(score) + (1 - lambda)*result (1: scores only);
    /// with lambda_end, its value at the first step.
    #[arg(long, default_value_t = TrainSettings::default().lambda)]
    pub lambda: UnitReal,
    /// Lambda at the last step of the epoch cap, reached linearly from lambda (nnue-pytorch's
    /// start_lambda/end_lambda); validation uses it throughout.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda_end: Option<UnitReal>,
    /// Scale of the target's win rate sigma(score / S), in centipawns (the reference code's 410;
    /// data in other units scale it by their pawn).
    #[arg(long, default_value_t = TrainSettings::default().target_scale, conflicts_with = "wdl")]
    pub target_scale: PositiveReal,
    /// Scale of the output's win rate sigma(output / S), in centipawns (the reference code's 361;
    /// also PQR's).
    #[arg(long, default_value_t = TrainSettings::default().output_scale, conflicts_with = "wdl")]
    pub output_scale: PositiveReal,
    /// A fitted win-rate model sigma((e - A) / B) for target and output alike, in centipawns (the
    /// thesis text: 1.28,297.21; `trainer wdl-fit` fits one).
    #[arg(long, value_name = "A,B")]
    pub wdl: Option<WdlModel>,
    /// Blocks whose first-layer weights are stored as `i8` (trained within ±1, as nnue-pytorch
    /// does for Stockfish's threat weights): half the engine's memory traffic per row. With
    /// `--arch sfnnv16` Stockfish's (full_threats,pp_3wide) unless given; `none` for none.
    #[arg(long = "i8-blocks", value_name = "BLOCK,...", value_delimiter = ',')]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub i8_blocks: Vec<String>,
}

impl Default for TrainSettings {
    /// The thesis's recipe (§5.2: L1 512, L2 32, Adam, batches of 16384, 256 epochs of 100M
    /// positions, quiet positions only, loss exponent 2.6, the reference code's win-rate scales
    /// 410 and 361) at nnue-pytorch's learning rate and decay, 8.75e-4 × 0.992 per epoch:
    /// measured beside nnue-pytorch, it trains lower held-out losses and stronger networks than
    /// the thesis's 5e-4 × 0.99, and nnue-pytorch's first-layer start ([`BaseRecipe`];
    /// `--base-recipe thesis` for the recipe before either).
    fn default() -> Self {
        let target = Wdl::default();
        let loss = ScoreLoss::default();
        TrainSettings {
            l1: L1Width::new(512),
            l2: Count::new(32),
            arch: None,
            method: MethodName::Score,
            optimizer: OptimizerName::Adam,
            base_recipe: BaseRecipe::NnuePytorch,
            first_layer_init: None,
            lr: None,
            hidden_lr_width: Positive::new(128),
            gamma: None,
            lr_schedule: LrSchedule::Step,
            lr_floor: UnitReal::new(0.0),
            warmup_steps: 0,
            weight_decay: None,
            max_grad_norm: None,
            patience: None,
            min_delta: UnitReal::new(0.0),
            swa_from: None,
            batch_size: Count::new(LoaderConfig::default().batch_size as u64),
            score_units: None,
            epochs: Count::new(256),
            passes: None,
            epoch_positions: Count::new(100_000_000),
            seed: 1,
            val_positions: Count::new(1_000_000),
            shuffle: LoaderConfig::default().shuffle_buffer,
            skip_in_check: true,
            skip_capture: true,
            min_ply: None,
            max_ply: None,
            max_score: None,
            skip_rate: UnitReal::new(0.0),
            wdl_skip: false,
            early_skip_ply: None,
            piece_count_skip: false,
            power: PositiveReal::new(loss.power),
            lambda: UnitReal::new(loss.lambda),
            lambda_end: None,
            target_scale: PositiveReal::new(target.target_b),
            output_scale: PositiveReal::new(target.output_b),
            wdl: None,
            i8_blocks: Vec::new(),
        }
    }
}

impl TrainSettings {
    /// What the types alone cannot check: a shape that cannot be built at this L1, a setting
    /// of another optimizer or method, a loss or a ply window that cannot work. The one check
    /// of a recipe, wherever it comes from; the error starts with the key.
    pub fn check(&self) -> Result<(), InvalidSetting> {
        self.arch()
            .check(self.l1.get() as usize)
            .map_err(|e| format!("arch: {e}"))?;
        if let Method::Score(loss) = self.method() {
            loss.check().map_err(|e| format!("power: {e}"))?;
        }
        if self.lambda_end.is_some() && self.method != MethodName::Score {
            return Err("lambda_end: only the score method mixes scores and results (λ)".into());
        }
        if self.weight_decay.is_some() && self.optimizer != OptimizerName::Adamw {
            return Err(
                "weight_decay: only the adamw optimizer decays weights (optimizer = \"adamw\")"
                    .into(),
            );
        }
        if let Some(from) = self.swa_from
            && self.passes.is_none()
            && from.get() > self.epochs.get()
        {
            return Err(format!(
                "swa_from: epoch {from} is after the last epoch ({}): nothing would be averaged",
                self.epochs
            )
            .into());
        }
        self.filter()
            .check()
            .map_err(|e| format!("min_ply: {e}: no position would be used"))?;
        Ok(())
    }

    /// Checks that a loaded plugin provides every block of `i8_blocks` (a feature set without
    /// one of them ignores it, so a misspelt name would otherwise go unnoticed).
    pub fn check_i8_blocks(&self, registry: &PluginRegistry) -> Result<(), InvalidSetting> {
        for name in &self.i8_blocks() {
            registry
                .block(name)
                .map_err(|e| format!("i8_blocks: {e}"))?;
        }
        Ok(())
    }

    /// The blocks trained as `i8` rows: those of `i8_blocks`, or for Stockfish's shape of
    /// today (`arch = "sfnnv16"`) its threat and pair blocks when none are named, so that the
    /// network converts to Stockfish's format (`none` names none;
    /// [`nnue::stockfish::i8_blocks_for`]).
    pub fn i8_blocks(&self) -> Vec<String> {
        nnue::stockfish::i8_blocks_for(&self.arch(), &self.i8_blocks)
    }

    /// The training method and its loss.
    pub fn method(&self) -> Method {
        let wdl = match self.wdl {
            Some(WdlModel { a, b }) => Wdl::fitted(a, b),
            None => Wdl {
                target_a: 0.0,
                target_b: self.target_scale.get(),
                output_a: 0.0,
                output_b: self.output_scale.get(),
            },
        };
        match self.method {
            MethodName::Pqr => Method::Pqr(PqrLoss {
                a: wdl.output_a,
                b: wdl.output_b,
            }),
            MethodName::Score => Method::Score(ScoreLoss {
                wdl,
                power: self.power.get(),
                lambda: self.lambda.get(),
            }),
        }
    }

    /// The position filters (their random skips seeded by the run).
    pub fn filter(&self) -> FilterConfig {
        FilterConfig {
            skip_in_check: self.skip_in_check,
            skip_capture: self.skip_capture,
            min_ply: self.min_ply,
            max_ply: self.max_ply,
            max_score: self.max_score.map(|m| m.get().min(i32::MAX as u64) as i32),
            skip_rate: self.skip_rate.get(),
            wdl_skip: self.wdl_skip,
            early_skip_ply: self.early_skip_ply,
            piece_count_skip: self.piece_count_skip,
            score_units: ScoreUnits::Centipawns,
            seed: 0,
        }
    }

    /// The shape after the first layer: the `arch` setting, the thesis's by default, whose
    /// hidden width is `l2`. The one place the two keys become a shape.
    pub fn arch(&self) -> nnue::Arch {
        let l2 = self.l2.get() as usize;
        match &self.arch {
            None => nnue::Arch::thesis(l2),
            Some(a) => a.resolve(l2),
        }
    }

    /// The layers after the input, for messages: `512 -> 32 -> 1`, or L1 and the shape.
    pub fn layers_label(&self) -> String {
        let arch = self.arch();
        match arch.preset() {
            Some(nnue::Preset::Thesis) => format!("{} -> {} -> 1", self.l1.get(), self.l2.get()),
            _ => format!("{}, {arch}", self.l1.get()),
        }
    }

    /// The epochs a run on `train_positions` training positions (when known) trains at most:
    /// `epochs`, or with `passes` as many as make that many passes over them (at least one).
    pub fn epoch_cap(&self, train_positions: Option<u64>) -> u64 {
        match (self.passes, train_positions) {
            (Some(p), Some(n)) => {
                let epochs = (p.get() * n as f64 / self.epoch_positions.get() as f64).ceil();
                (epochs as u64).clamp(1, MAX_EPOCHS)
            }
            _ => self.epochs.get(),
        }
    }

    /// How long a run trains, for messages and reports: `256 epochs of 100000000 positions`,
    /// `8 passes over the data in epochs of 400000 positions`, or with a patience `up to 256
    /// epochs of 100000000 positions, until 4 without improvement`.
    pub fn length_label(&self) -> String {
        let epochs = match self.passes {
            None => format!(
                "{} epochs of {} positions",
                self.epochs, self.epoch_positions
            ),
            Some(p) => format!(
                "{p} passes over the data in epochs of {} positions",
                self.epoch_positions
            ),
        };
        match self.patience {
            None => epochs,
            Some(p) => format!("up to {epochs}, until {p} without improvement"),
        }
    }

    /// The parts of the training recipe that differ from the thesis's (Adam, `step` schedule,
    /// a constant λ, no clipping of the gradient, none of nnue-pytorch's skips), for messages
    /// and reports: `adamw (decay 0.01)`, `cosine to 0.1·lr`, `warm-up 100 steps`, `λ 1 →
    /// 0.75`, `gradient norm ≤ 2`, `WDL skip`, `early-ply skip to 20`, `piece-count skip`.
    pub fn recipe_extras(&self) -> Vec<String> {
        let mut parts = Vec::new();
        match self.optimizer {
            OptimizerName::Adam => {}
            OptimizerName::SparseAdam => parts.push("sparse-adam".to_string()),
            OptimizerName::Adamw => parts.push(format!(
                "adamw (decay {})",
                self.weight_decay.map_or(ADAMW_DEFAULT_DECAY, |d| d.get())
            )),
            OptimizerName::Ranger => parts.push("ranger".to_string()),
        }
        match self.lr_schedule {
            LrSchedule::Step => {}
            LrSchedule::Cosine => parts.push(format!("cosine to {}·lr", self.lr_floor)),
            LrSchedule::OneCycle => parts.push("one-cycle".to_string()),
        }
        if self.warmup_steps > 0 {
            parts.push(format!("warm-up {} steps", self.warmup_steps));
        }
        if let Some(end) = self.lambda_end {
            parts.push(format!("λ {} → {end}", self.lambda));
        }
        if let Some(norm) = self.max_grad_norm {
            parts.push(format!("gradient norm ≤ {norm}"));
        }
        if self.wdl_skip {
            parts.push("WDL skip".to_string());
        }
        if let Some(ply) = self.early_skip_ply {
            parts.push(format!("early-ply skip to {ply}"));
        }
        if self.piece_count_skip {
            parts.push("piece-count skip".to_string());
        }
        if let Some(from) = self.swa_from {
            parts.push(format!("weights averaged from epoch {from}"));
        }
        parts
    }

    /// The optimizer's part of the recipe, for messages and reports: `lr 0.000875, γ 0.992` (the
    /// step schedule's factor, only there), then [`recipe_extras`](Self::recipe_extras).
    pub fn recipe_label(&self) -> String {
        let mut parts = vec![format!("lr {}", self.lr())];
        if self.lr_schedule == LrSchedule::Step {
            parts.push(format!("γ {}", self.gamma()));
        }
        parts.extend(self.recipe_extras());
        parts.join(", ")
    }

    /// The network's shape for a feature set of `n` features.
    pub fn shape(&self, n: usize) -> Shape {
        Shape::new(n, self.l1.get() as usize, self.arch())
    }

    /// The units a run on data whose scores are in `data_units` reads them in: the declared
    /// ones, else the data's.
    pub fn units(&self, data_units: ScoreUnits) -> ScoreUnits {
        self.score_units.unwrap_or(data_units)
    }

    /// The one-line warning for a run whose declared units differ from its data's (`None` when
    /// they agree or none are declared): the data are read as declared, not rescaled.
    pub fn units_warning(&self, data_units: ScoreUnits) -> Option<String> {
        self.score_units.filter(|&u| u != data_units).map(|u| {
            format!(
                "warning: the training data's scores are in {}, but score_units says {}: they are read as {u}",
                data_units.describe(),
                u.describe()
            )
        })
    }

    /// The optimizer's settings: the one mapping of `optimizer` (and `weight_decay`,
    /// `max_grad_norm`) to Adam's, for training and `trainer bench` alike.
    pub fn adam(&self) -> AdamConfig {
        AdamConfig {
            sparse_first_layer: self.optimizer == OptimizerName::SparseAdam,
            weight_decay: match self.optimizer {
                OptimizerName::Adamw => self.weight_decay.map_or(ADAMW_DEFAULT_DECAY, |d| d.get()),
                _ => 0.0,
            },
            max_grad_norm: self.max_grad_norm.map(|n| n.get()),
            ranger: self.optimizer == OptimizerName::Ranger,
            eps: match self.optimizer {
                OptimizerName::Ranger => RANGER_EPS,
                _ => AdamConfig::default().eps,
            },
            ..AdamConfig::default()
        }
    }

    /// The learning rate in the first epoch: `lr`, else the base recipe's.
    pub fn lr(&self) -> f64 {
        self.lr.map_or(self.base_recipe.lr(), PositiveFraction::get)
    }

    /// The step schedule's factor per epoch: `gamma`, else the base recipe's.
    pub fn gamma(&self) -> f64 {
        self.gamma
            .map_or(self.base_recipe.gamma(), PositiveFraction::get)
    }

    /// How a fresh model's first layer starts: `first_layer_init`, else the base recipe's.
    pub fn first_layer_init(&self) -> FirstLayerInit {
        self.first_layer_init
            .unwrap_or(self.base_recipe.first_layer_init())
    }

    /// The same recipe with what the base recipe gave written out: `lr` and `gamma` as
    /// numbers, the base recipe at its default, and the first layer's start left to the run's
    /// configuration (`TrainConfig::first_layer_init`, which keeps it beside the recipe as it
    /// keeps the score units). What a run's identity holds, so that `base_recipe = "thesis"`
    /// and the thesis's numbers given one by one are one run.
    pub fn written_out(&self) -> TrainSettings {
        TrainSettings {
            lr: Some(PositiveFraction::new(self.lr())),
            gamma: Some(PositiveFraction::new(self.gamma())),
            base_recipe: BaseRecipe::default(),
            first_layer_init: None,
            ..self.clone()
        }
    }

    /// When a run stops before its epoch cap (`patience`, `min_delta`).
    pub fn stop_rule(&self) -> StopRule {
        StopRule {
            patience: self.patience,
            min_delta: self.min_delta,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<TrainSettings, String> {
        toml::from_str(toml_text).map_err(|e| e.message().to_string())
    }

    #[test]
    fn the_base_recipe_is_one_setting_and_lr_gamma_or_first_layer_init_override_it() {
        let default = TrainSettings::default();
        assert_eq!((default.lr(), default.gamma()), (8.75e-4, 0.992));
        assert_eq!(default.first_layer_init(), FirstLayerInit::NnuePytorch);
        let thesis = parse("base_recipe = \"thesis\"").unwrap();
        assert_eq!((thesis.lr(), thesis.gamma()), (5e-4, 0.99));
        assert_eq!(thesis.first_layer_init(), FirstLayerInit::ActiveFanIn);
        assert_eq!(thesis.recipe_label(), "lr 0.0005, γ 0.99");
        // One run however the thesis's rate is asked for.
        let by_numbers = parse("lr = 5e-4\ngamma = 0.99").unwrap();
        assert_eq!(thesis.written_out(), by_numbers.written_out());
        let faster = parse("base_recipe = \"thesis\"\nlr = 1e-3").unwrap();
        assert_eq!((faster.lr(), faster.gamma()), (1e-3, 0.99));
        let started =
            parse("base_recipe = \"thesis\"\nfirst_layer_init = \"nnue-pytorch\"").unwrap();
        assert_eq!(started.first_layer_init(), FirstLayerInit::NnuePytorch);
        assert_eq!(started.lr(), 5e-4);
        for (key, value) in [("base_recipe", "fast"), ("first_layer_init", "zero")] {
            let err = parse(&format!("{key} = \"{value}\"")).unwrap_err();
            assert!(err.contains("nnue-pytorch"), "{err}");
        }
    }

    #[test]
    fn arch_is_a_preset_or_a_table_and_the_thesis_leaves_no_trace() {
        let default = serde_json::to_string(&TrainSettings::default()).unwrap();
        assert!(
            !default.contains("arch"),
            "stage keys of thesis runs unchanged"
        );
        assert_eq!(
            TrainSettings::default().shape(768),
            Shape::thesis(768, 512, 32)
        );
        let sf = parse("l1 = 1024\narch = \"sfnnv5\"").unwrap();
        assert_eq!(sf.shape(22528).arch, nnue::Arch::sfnnv5());
        assert_eq!(
            sf.shape(22528)
                .to_string()
                .matches("8 PSQT buckets")
                .count(),
            1
        );
        // The thesis preset is the default shape, with --l2.
        let thesis = parse("l2 = 8\narch = \"thesis\"").unwrap();
        assert_eq!(thesis.shape(768), Shape::thesis(768, 512, 8));
        let table = parse(
            "arch = { psqt_buckets = 4, stacks = 2, output = \"stockfish\", hidden = [{ width = 8, activation = \"sqr-crelu\" }] }",
        )
        .unwrap();
        let arch = table.shape(768).arch;
        assert_eq!(
            (arch.psqt_buckets, arch.stacks, arch.skip),
            (4, 2, nnue::Skip::None)
        );
        assert_eq!(arch.ft_output, nnue::FtOutput::ClippedRelu);
        // Stored and read back (checkpoints, stage keys) as it was given.
        let json = serde_json::to_string(&table).unwrap();
        assert_eq!(serde_json::from_str::<TrainSettings>(&json).unwrap(), table);
        let json = serde_json::to_string(&sf).unwrap();
        assert!(json.contains("\"arch\":\"sfnnv5\""), "{json}");
        assert!(
            parse("arch = \"sfnnv6\"")
                .unwrap_err()
                .contains("unknown shape 'sfnnv6' (expected thesis, sfnnv5, sfnnv16)")
        );
        assert!(
            parse("arch = { stacks = 2 }")
                .unwrap_err()
                .contains("hidden")
        );
        assert!(
            parse("l1 = 96\narch = \"sfnnv5\"")
                .unwrap()
                .check()
                .unwrap_err()
                .0
                .starts_with("arch: ")
        );
    }
}
