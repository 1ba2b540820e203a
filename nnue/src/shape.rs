//! A network's shape as data: what comes after the feature set, declared once and shared by the
//! engine (which evaluates it), the file formats (which record it) and the trainer (which builds
//! its model from it).
//!
//! Stockfish declares its network as a struct of layers whose hash chain is its shape
//! (`src/nnue/nnue_architecture.h` at `sf_15.1`); [`Arch`] is the same idea at run time. A shape
//! is the feature set, the first-layer width L1 and an [`Arch`]:
//!
//! - the first layer's output ([`FtOutput`]): the thesis's clipped ReLU of both perspectives'
//!   accumulators (2·L1 values), or Stockfish's pairwise product of each accumulator's two halves
//!   (15.1: `clamp(a_j, 0, 127) · clamp(a_{j+L1/2}, 0, 127) >> 7`; today:
//!   `clamp(a_j, 0, 255) · clamp(a_{j+L1/2}, 0, 255) >> 9`, L1 values in all);
//! - PSQT buckets (0 = none): a per-feature, per-bucket `i32` term summed beside the accumulator,
//!   `(psqt_stm[b] − psqt_opp[b]) / 2`;
//! - layer stacks: one set of hidden and output layers per bucket, picked by [`BucketRule`]
//!   (PSQT buckets use the same rule with their own count);
//! - the hidden layers: widths, activations ([`Activation`]) and their shifts;
//! - the skip term ([`Skip`]): none, Stockfish 15.1's extra output of the first hidden layer, or
//!   today's difference of its last two outputs;
//! - which activations the output layer reads (`dense_output`): the last hidden layer's, or the
//!   concatenation of every hidden layer's (today's `fc_2`);
//! - the output rule ([`OutputRule`]).
//!
//! Presets: [`Arch::thesis`] (the thesis's N → L1 → L2 → 1), [`Arch::sfnnv5`] (Stockfish 15.1)
//! and [`Arch::sfnnv16`] (Stockfish of today, official-stockfish/Stockfish 762dd1da9,
//! `src/nnue/nnue_architecture.h:44-134`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::scales::HIDDEN_SHIFT;
use crate::wire_code::{SHAPE_VERSION, TODAY_VERSION, WireCode};

/// The largest number of buckets the [`BucketRule::PieceCount`] rule can tell apart.
pub const MAX_BUCKETS: usize = 32;
/// The largest number of hidden layers.
pub const MAX_HIDDEN_LAYERS: usize = 4;
/// The largest hidden width.
pub const MAX_HIDDEN_WIDTH: usize = 4096;

/// What the first layer hands to the hidden layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtOutput {
    /// `clamp(acc, 0, 127)` of both perspectives, side to move first: 2·L1 values (the thesis).
    ClippedRelu,
    /// For each perspective, side to move first, `clamp(a_j, 0, 127) · clamp(a_{j+L1/2}, 0, 127)
    /// >> 7` for `j < L1/2`: L1 values in all (Stockfish 15.1's `FeatureTransformer::transform`).
    Pairwise,
    /// [`Pairwise`](FtOutput::Pairwise) with the accumulators clipped at 255 and the product
    /// divided by 512: `clamp(a_j, 0, 255) · clamp(a_{j+L1/2}, 0, 255) >> 9`, at most 127
    /// (Stockfish's `FtMaxVal = 255` since SFNNv10, `nnue_feature_transformer.h:416-426` at
    /// 762dd1da9).
    #[serde(rename = "pairwise-255")]
    Pairwise255,
}

impl WireCode for FtOutput {
    const FIELD: &'static str = "first-layer output";
    const ALL: &'static [Self] = &[
        FtOutput::ClippedRelu,
        FtOutput::Pairwise,
        FtOutput::Pairwise255,
    ];

    fn wire(self) -> (u8, u32) {
        match self {
            FtOutput::ClippedRelu => (0, SHAPE_VERSION),
            FtOutput::Pairwise => (1, SHAPE_VERSION),
            FtOutput::Pairwise255 => (2, TODAY_VERSION),
        }
    }
}

impl FtOutput {
    /// Whether the first layer multiplies each accumulator's halves.
    pub fn is_pairwise(self) -> bool {
        matches!(self, FtOutput::Pairwise | FtOutput::Pairwise255)
    }

    /// The accumulators' clip: each value is clamped to `0..=clip` first (127, or 255 for
    /// [`Pairwise255`](FtOutput::Pairwise255)). The one home of the rule for the engine's
    /// kernels, the reference forward pass and the trainer's scales.
    pub const fn clip(self) -> i16 {
        match self {
            FtOutput::ClippedRelu | FtOutput::Pairwise => 127,
            FtOutput::Pairwise255 => 255,
        }
    }

    /// The right shift of a pairwise product of two clipped values (7, or 9 for
    /// [`Pairwise255`](FtOutput::Pairwise255)), so that it stays at most 127; 0 where there is
    /// no product.
    pub const fn product_shift(self) -> u32 {
        match self {
            FtOutput::ClippedRelu => 0,
            FtOutput::Pairwise => 7,
            FtOutput::Pairwise255 => 9,
        }
    }
}

pub use crate::layers::Activation;
use crate::layers::{HiddenStep, OutputStep, Plan, SkipRead};

/// One hidden layer: its width (outputs, not counting an extra skip output), its activation and
/// the activation's shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hidden {
    /// Outputs that go through the activation to the next layer.
    pub width: usize,
    /// The activation.
    pub activation: Activation,
    /// The activation's right shift s: the log2 of the layer's weight scale (6: 1.0 is 64), or
    /// one more where the inputs are twice as large (Stockfish's first hidden layer since
    /// SFNNv10, `WeightScaleBits + 1`). Left out of a table, 6.
    #[serde(
        default = "Hidden::default_shift",
        skip_serializing_if = "Hidden::is_default_shift"
    )]
    pub shift: u32,
}

impl Hidden {
    /// A layer of `width` outputs with `activation` and the usual shift 6.
    pub fn new(width: usize, activation: Activation) -> Hidden {
        Hidden {
            width,
            activation,
            shift: HIDDEN_SHIFT,
        }
    }

    fn default_shift() -> u32 {
        HIDDEN_SHIFT
    }

    fn is_default_shift(shift: &u32) -> bool {
        *shift == HIDDEN_SHIFT
    }
}

/// The skip term: a value of the first hidden layer added to the output without activation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Skip {
    /// No skip term.
    #[default]
    None,
    /// The first hidden layer has one more output, added to the output layer's sum scaled by
    /// 9600 / 8128 (Stockfish 15.1's `fc_0[15]`, `nnue_architecture.h:127-130` at `sf_15.1`).
    /// In a table: `skip = true`.
    ExtraOutput,
    /// The difference of the first hidden layer's last two outputs (which are activated as
    /// the others), added to the output layer's sum before the output rule's scaling
    /// (Stockfish's `fc_0_out[30] − fc_0_out[31]`, `nnue_architecture.h:118-121` at
    /// 762dd1da9). In a table: `skip = "difference"`.
    Difference,
}

impl WireCode for Skip {
    const FIELD: &'static str = "skip";
    const ALL: &'static [Self] = &[Skip::None, Skip::ExtraOutput, Skip::Difference];

    fn wire(self) -> (u8, u32) {
        match self {
            Skip::None => (0, SHAPE_VERSION),
            Skip::ExtraOutput => (1, SHAPE_VERSION),
            Skip::Difference => (2, TODAY_VERSION),
        }
    }
}

impl Serialize for Skip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Skip::None => s.serialize_bool(false),
            Skip::ExtraOutput => s.serialize_bool(true),
            Skip::Difference => s.serialize_str("difference"),
        }
    }
}

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Name(String),
        }
        match Raw::deserialize(d)? {
            Raw::Flag(false) => Ok(Skip::None),
            Raw::Flag(true) => Ok(Skip::ExtraOutput),
            Raw::Name(name) => match name.as_str() {
                "none" => Ok(Skip::None),
                "extra-output" => Ok(Skip::ExtraOutput),
                "difference" => Ok(Skip::Difference),
                other => Err(serde::de::Error::custom(format!(
                    "skip '{other}' is none of false, true, \"none\", \"extra-output\", \"difference\""
                ))),
            },
        }
    }
}

/// How a position's bucket is chosen, for the layer stacks and the PSQT term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BucketRule {
    /// `(pieces − 1) · k / 32` for k buckets, pieces counting kings and pawns: Stockfish's
    /// `(pos.count<ALL_PIECES>() − 1) / 4` at k = 8 (`evaluate_nnue.cpp:160` at `sf_15.1`).
    PieceCount,
}

impl WireCode for BucketRule {
    const FIELD: &'static str = "bucket rule";
    const ALL: &'static [Self] = &[BucketRule::PieceCount];

    fn wire(self) -> (u8, u32) {
        match self {
            BucketRule::PieceCount => (0, SHAPE_VERSION),
        }
    }
}

impl BucketRule {
    /// The bucket of a position with `pieces` pieces among `k` buckets (0 for k ≤ 1).
    #[inline]
    pub fn bucket(self, pieces: u32, k: usize) -> usize {
        match self {
            BucketRule::PieceCount => {
                if k <= 1 {
                    0
                } else {
                    ((pieces.saturating_sub(1) as usize * k) / 32).min(k - 1)
                }
            }
        }
    }
}

/// How the last layer's sum becomes the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputRule {
    /// The thesis's `out >> 4` (an arithmetic shift: rounds toward −∞). No PSQT, no skip.
    Thesis,
    /// Stockfish 15.1's `(psqt + positional) / 16`, positional = `out + skip · 9600 / 8128`,
    /// both divisions truncating toward zero as in C++ (`evaluate_nnue.cpp:140-172`,
    /// `nnue_architecture.h:127-130` at `sf_15.1`).
    Stockfish,
    /// Stockfish's of today: positional = `(out + skip) · 9600 / 16384` in 64 bits (the output
    /// layer's 1.0 is 128 · 64 · 2, its inputs being twice as large), and the evaluation
    /// `psqt / 16 + positional / 16`, each division truncating on its own
    /// (`nnue_architecture.h:118-131`, `network.cpp` `Network::evaluate` at 762dd1da9).
    #[serde(rename = "stockfish-scaled")]
    StockfishScaled,
}

impl WireCode for OutputRule {
    const FIELD: &'static str = "output rule";
    const ALL: &'static [Self] = &[
        OutputRule::Thesis,
        OutputRule::Stockfish,
        OutputRule::StockfishScaled,
    ];

    fn wire(self) -> (u8, u32) {
        match self {
            OutputRule::Thesis => (0, SHAPE_VERSION),
            OutputRule::Stockfish => (1, SHAPE_VERSION),
            OutputRule::StockfishScaled => (2, TODAY_VERSION),
        }
    }
}

/// Everything of a network's shape after the feature set and L1.
///
/// As a table (a manifest's `arch`, serde), every key but `hidden` may be left out and takes
/// the thesis's value:
///
/// ```toml
/// arch = { ft_output = "pairwise", psqt_buckets = 8, stacks = 8, skip = true, output = "stockfish",
///          hidden = [{ width = 15, activation = "sqr-crelu" }, { width = 32, activation = "crelu" }] }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arch {
    /// The first layer's output.
    #[serde(default = "Arch::default_ft_output")]
    pub ft_output: FtOutput,
    /// PSQT buckets (0: no PSQT term).
    #[serde(default)]
    pub psqt_buckets: usize,
    /// Layer stacks (1: one set of layers for every position).
    #[serde(default = "Arch::default_stacks")]
    pub stacks: usize,
    /// How a position's bucket is chosen (for stacks and PSQT buckets alike).
    #[serde(default = "Arch::default_bucket_rule")]
    pub bucket_rule: BucketRule,
    /// The hidden layers, in order (at least one).
    pub hidden: Vec<Hidden>,
    /// The skip term.
    #[serde(default)]
    pub skip: Skip,
    /// Whether the output layer reads the activations of every hidden layer, first to last,
    /// concatenated (Stockfish's `fc_2` of today), instead of the last one's only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dense_output: bool,
    /// How the output layer's sum becomes the evaluation.
    #[serde(default = "Arch::default_output")]
    pub output: OutputRule,
}

/// The shapes after the first layer that have a name: the thesis's (at any L2), Stockfish
/// 15.1's (`sfnnv5`) and Stockfish's of today (`sfnnv16`). Parsed from and shown as its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// The thesis's: one hidden layer of width L2, one stack, no PSQT.
    Thesis,
    /// Stockfish 15.1's (SFNNv5).
    Sfnnv5,
    /// Stockfish's of today (SFNNv16).
    Sfnnv16,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 3] = [Preset::Thesis, Preset::Sfnnv5, Preset::Sfnnv16];

    /// Its name on command lines, in manifests and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Thesis => "thesis",
            Preset::Sfnnv5 => "sfnnv5",
            Preset::Sfnnv16 => "sfnnv16",
        }
    }

    /// Its shape (the thesis's with hidden width `l2`; the others have their own widths).
    pub fn arch(self, l2: usize) -> Arch {
        match self {
            Preset::Thesis => Arch::thesis(l2),
            Preset::Sfnnv5 => Arch::sfnnv5(),
            Preset::Sfnnv16 => Arch::sfnnv16(),
        }
    }

    /// `thesis, sfnnv5, sfnnv16`: the names, for messages.
    pub fn names() -> String {
        Self::ALL.map(Preset::name).join(", ")
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Preset`]. `Display`: one line listing the names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown shape '{0}' (expected {names})", names = Preset::names())]
pub struct UnknownPreset(pub String);

impl std::str::FromStr for Preset {
    type Err = UnknownPreset;
    fn from_str(s: &str) -> Result<Preset, UnknownPreset> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPreset(s.to_string()))
    }
}

impl Arch {
    fn default_ft_output() -> FtOutput {
        FtOutput::ClippedRelu
    }

    fn default_stacks() -> usize {
        1
    }

    fn default_bucket_rule() -> BucketRule {
        BucketRule::PieceCount
    }

    fn default_output() -> OutputRule {
        OutputRule::Thesis
    }

    /// The thesis's shape with hidden width `l2`: clipped ReLU, one hidden layer, `>> 4`.
    pub fn thesis(l2: usize) -> Arch {
        Arch {
            ft_output: FtOutput::ClippedRelu,
            psqt_buckets: 0,
            stacks: 1,
            bucket_rule: BucketRule::PieceCount,
            hidden: vec![Hidden::new(l2, Activation::ClippedRelu)],
            skip: Skip::None,
            dense_output: false,
            output: OutputRule::Thesis,
        }
    }

    /// Stockfish 15.1's shape after the feature transformer (SFNNv5, `nnue_architecture.h` at
    /// `sf_15.1`): pairwise product, 8 PSQT buckets, 8 stacks of L1 → 15 (+1 skip) →
    /// [SqrCReLU ‖ CReLU] 30 → 32 → 1.
    pub fn sfnnv5() -> Arch {
        Arch {
            ft_output: FtOutput::Pairwise,
            psqt_buckets: 8,
            stacks: 8,
            bucket_rule: BucketRule::PieceCount,
            hidden: vec![
                Hidden::new(15, Activation::SqrClippedRelu),
                Hidden::new(32, Activation::ClippedRelu),
            ],
            skip: Skip::ExtraOutput,
            dense_output: false,
            output: OutputRule::Stockfish,
        }
    }

    /// Stockfish's shape of today after the feature transformer (SFNNv16, f4bcd4040, unchanged
    /// up to 762dd1da9, `nnue_architecture.h:44-134`): pairwise product clipped at 255, 8 PSQT
    /// buckets, 8 stacks of `fc_0` L1 → 32, [SqrCReLU ‖ CReLU] with shift 7 → `fc_1` 64 → 32,
    /// [SqrCReLU ‖ CReLU] with shift 6 → `fc_2` over both activation pairs (128 → 1), plus the
    /// skip `fc_0[30] − fc_0[31]`, scaled by 9600 / 16384.
    pub fn sfnnv16() -> Arch {
        Arch {
            ft_output: FtOutput::Pairwise255,
            psqt_buckets: 8,
            stacks: 8,
            bucket_rule: BucketRule::PieceCount,
            hidden: vec![
                Hidden {
                    shift: HIDDEN_SHIFT + 1,
                    ..Hidden::new(32, Activation::SqrClippedRelu)
                },
                Hidden::new(32, Activation::SqrClippedRelu),
            ],
            skip: Skip::Difference,
            dense_output: true,
            output: OutputRule::StockfishScaled,
        }
    }

    /// The preset this shape is (the thesis's at any L2), if it is one: for names in messages
    /// and for the file formats' choice of version, never for what a network computes.
    pub fn preset(&self) -> Option<Preset> {
        let l2 = self.hidden.first().map_or(0, |h| h.width);
        Preset::ALL.into_iter().find(|p| p.arch(l2) == *self)
    }

    /// The width of the first hidden layer's input for first-layer width `l1`.
    pub fn ft_outputs(&self, l1: usize) -> usize {
        match self.ft_output {
            FtOutput::ClippedRelu => 2 * l1,
            FtOutput::Pairwise | FtOutput::Pairwise255 => l1,
        }
    }

    /// The walk over the layers after the first at first-layer width `l1`: each hidden
    /// layer's sizes and where its activations go, where the skip value comes from, and what
    /// the output layer reads ([`Plan`]).
    pub fn plan(&self, l1: usize) -> Plan {
        let mut hidden = Vec::with_capacity(self.hidden.len());
        let mut inputs = self.ft_outputs(l1);
        let mut end = 0;
        for (i, h) in self.hidden.iter().enumerate() {
            let extra = usize::from(self.skip == Skip::ExtraOutput && i == 0);
            let acts = h.width * h.activation.fan_out();
            // A dense output reads every layer's activations side by side; otherwise each
            // layer overwrites the one before, which it has read.
            let start = if self.dense_output { end } else { 0 };
            hidden.push(HiddenStep {
                inputs,
                outputs: h.width + extra,
                width: h.width,
                activation: h.activation,
                shift: h.shift,
                acts: start..start + acts,
            });
            end = start + acts;
            inputs = acts;
        }
        let n = hidden.len();
        let layers = if self.dense_output {
            0..n
        } else {
            n.saturating_sub(1)..n
        };
        let reads = match (self.dense_output, hidden.last()) {
            (true, _) => 0..end,
            (false, Some(last)) => last.acts.clone(),
            (false, None) => 0..0,
        };
        let width = self.hidden.first().map_or(0, |h| h.width);
        let skip = match self.skip {
            Skip::None => SkipRead::None,
            Skip::ExtraOutput => SkipRead::Sum(width),
            Skip::Difference => {
                SkipRead::Difference(width.saturating_sub(2), width.saturating_sub(1))
            }
        };
        Plan {
            hidden,
            skip,
            output: OutputStep { layers, reads },
        }
    }

    /// The affine layers of one stack as (inputs, outputs), the output layer last (from the
    /// [`plan`](Self::plan)).
    pub fn layers(&self, l1: usize) -> Vec<(usize, usize)> {
        self.plan(l1).layers()
    }

    /// The number of activations of all hidden layers together (what a dense output reads).
    pub fn activations(&self) -> usize {
        self.hidden
            .iter()
            .map(|h| h.width * h.activation.fan_out())
            .sum()
    }

    /// The stack a position with `pieces` pieces is evaluated with.
    #[inline]
    pub fn stack_of(&self, pieces: u32) -> usize {
        self.bucket_rule.bucket(pieces, self.stacks)
    }

    /// The PSQT bucket of a position with `pieces` pieces.
    #[inline]
    pub fn psqt_bucket_of(&self, pieces: u32) -> usize {
        self.bucket_rule.bucket(pieces, self.psqt_buckets)
    }

    /// Checks the shape for first-layer width `l1`.
    pub fn check(&self, l1: usize) -> Result<(), ArchError> {
        if self.stacks == 0 || self.stacks > MAX_BUCKETS {
            return Err(ArchError::Stacks(self.stacks));
        }
        if self.psqt_buckets > MAX_BUCKETS {
            return Err(ArchError::PsqtBuckets(self.psqt_buckets));
        }
        if self.hidden.is_empty() || self.hidden.len() > MAX_HIDDEN_LAYERS {
            return Err(ArchError::HiddenLayers(self.hidden.len()));
        }
        if let Some(h) = self
            .hidden
            .iter()
            .find(|h| h.width == 0 || h.width > MAX_HIDDEN_WIDTH)
        {
            return Err(ArchError::HiddenWidth(h.width));
        }
        if self.ft_output.is_pairwise() && !l1.is_multiple_of(64) {
            return Err(ArchError::PairwiseL1(l1));
        }
        if self.output == OutputRule::Thesis && (self.psqt_buckets > 0 || self.skip != Skip::None) {
            return Err(ArchError::ThesisOutput);
        }
        if self.skip == Skip::Difference && self.hidden[0].width < 2 {
            return Err(ArchError::SkipDifference(self.hidden[0].width));
        }
        if let Some(h) = self.hidden.iter().find(|h| h.shift > MAX_SHIFT) {
            return Err(ArchError::Shift(h.shift));
        }
        Ok(())
    }
}

/// Why an [`Arch`] cannot be built at some L1. `Display`: a clause (`its 0 layer stacks are not
/// between 1 and 32`), meant to follow the network's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArchError {
    /// Layer stacks outside 1..=[`MAX_BUCKETS`].
    #[error("its {0} layer stacks are not between 1 and {MAX_BUCKETS}")]
    Stacks(usize),
    /// More PSQT buckets than [`MAX_BUCKETS`].
    #[error("its {0} PSQT buckets are more than {MAX_BUCKETS}")]
    PsqtBuckets(usize),
    /// Hidden layers outside 1..=[`MAX_HIDDEN_LAYERS`].
    #[error("its {0} hidden layers are not between 1 and {MAX_HIDDEN_LAYERS}")]
    HiddenLayers(usize),
    /// A hidden width outside 1..=[`MAX_HIDDEN_WIDTH`].
    #[error("its hidden width {0} is not between 1 and {MAX_HIDDEN_WIDTH}")]
    HiddenWidth(usize),
    /// A pairwise first layer whose L1 is not a multiple of 64.
    #[error("its pairwise first layer needs L1 to be a multiple of 64, not {0}")]
    PairwiseL1(usize),
    /// The thesis's output rule with PSQT buckets or a skip output.
    #[error("the thesis's output rule (>> 4) has neither PSQT buckets nor a skip output")]
    ThesisOutput,
    /// A skip difference of a first hidden layer of fewer than two outputs.
    #[error("its skip difference needs two outputs of the first hidden layer, which has {0}")]
    SkipDifference(usize),
    /// An activation shift above [`MAX_SHIFT`].
    #[error("its activation shift {0} is more than {MAX_SHIFT}")]
    Shift(u32),
}

/// The largest activation shift (a squared activation shifts by 2s + 7 ≤ 31).
pub const MAX_SHIFT: u32 = 12;

impl fmt::Display for Arch {
    /// One line: `pairwise, 8 PSQT buckets, 8 stacks by piece count: 15+1 sqr-crelu, 32 crelu,
    /// 1 (Stockfish output)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ft = match self.ft_output {
            FtOutput::ClippedRelu => "clipped ReLU",
            FtOutput::Pairwise => "pairwise product",
            FtOutput::Pairwise255 => "pairwise product (clip 255, >> 9)",
        };
        write!(f, "first layer {ft}, ")?;
        match self.psqt_buckets {
            0 => write!(f, "no PSQT, ")?,
            k => write!(f, "{k} PSQT buckets, ")?,
        }
        match self.stacks {
            1 => write!(f, "1 layer stack: ")?,
            k => write!(f, "{k} layer stacks by piece count: ")?,
        }
        for (i, h) in self.hidden.iter().enumerate() {
            let act = match h.activation {
                Activation::ClippedRelu => "crelu",
                Activation::SqrClippedRelu => "sqr-crelu+crelu",
            };
            let skip = match (self.skip, i) {
                (Skip::ExtraOutput, 0) => "+1 skip",
                _ => "",
            };
            let shift = match h.shift {
                HIDDEN_SHIFT => String::new(),
                s => format!(" (>> {s})"),
            };
            write!(f, "{}{skip} {act}{shift} -> ", h.width)?;
        }
        if self.dense_output {
            write!(f, "all activations -> ")?;
        }
        if self.skip == Skip::Difference {
            write!(f, "1 + skip (difference of the first layer's last two), ")?;
        } else {
            write!(f, "1, ")?;
        }
        let out = match self.output {
            OutputRule::Thesis => "thesis output (>> 4)",
            OutputRule::Stockfish => "Stockfish output ((psqt + positional) / 16)",
            OutputRule::StockfishScaled => {
                "Stockfish output of today (psqt / 16 + positional / 16, positional scaled by 9600 / 16384)"
            }
        };
        write!(f, "{out}")
    }
}

/// A network's whole shape: N input features, the first-layer width L1 and the rest. The one
/// shape type of the engine, the file formats and the trainer (whose N counts a factorized set's
/// virtual features too); any value is a network, the thesis's being the preset
/// [`Shape::thesis`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    /// Number of input features (rows of W1).
    pub n: usize,
    /// First-layer width per perspective.
    pub l1: usize,
    /// Everything after the first layer.
    pub arch: Arch,
}

impl Shape {
    /// The shape N → L1 → `arch`.
    pub fn new(n: usize, l1: usize, arch: Arch) -> Shape {
        Shape { n, l1, arch }
    }

    /// The thesis's shape N → L1 → L2 → 1 ([`Arch::thesis`]).
    pub fn thesis(n: usize, l1: usize, l2: usize) -> Shape {
        Shape::new(n, l1, Arch::thesis(l2))
    }

    /// The first hidden layer's width (the thesis's L2).
    pub fn l2(&self) -> usize {
        self.arch.hidden.first().map_or(0, |h| h.width)
    }

    /// This shape with `n` input features.
    pub fn with_n(&self, n: usize) -> Shape {
        Shape { n, ..self.clone() }
    }
}

impl fmt::Display for Shape {
    /// `768 -> 512, ` and the [`Arch`] (for the thesis's shape `768 -> 512 -> 32 -> 1`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.n, self.l1)?;
        match self.arch.preset() {
            Some(Preset::Thesis) => write!(f, " -> {} -> 1", self.l2()),
            _ => write!(f, ", {}", self.arch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

    #[test]
    fn stockfish_bucket_rule_is_pieces_minus_one_over_four_at_eight_buckets() {
        for pieces in 2..=32u32 {
            assert_eq!(
                BucketRule::PieceCount.bucket(pieces, 8),
                (pieces as usize - 1) / 4
            );
        }
        assert_eq!(BucketRule::PieceCount.bucket(32, 1), 0);
        assert_eq!(BucketRule::PieceCount.bucket(32, 4), 3);
        assert_eq!(BucketRule::PieceCount.bucket(2, 4), 0);
    }

    #[test]
    fn sfnnv5_layers_are_stockfish_15_1s() {
        let arch = Arch::sfnnv5();
        assert_eq!(arch.layers(1024), vec![(1024, 16), (30, 32), (32, 1)]);
        assert!(arch.check(1024).is_ok());
        assert_eq!(arch.preset(), Some(Preset::Sfnnv5));
        assert_eq!(Arch::thesis(32).layers(256), vec![(512, 32), (32, 1)]);
        assert_eq!(Arch::thesis(32).preset(), Some(Preset::Thesis));
        let mut stacked = Arch::thesis(32);
        stacked.stacks = 8;
        assert_eq!(stacked.preset(), None);
    }

    #[test]
    fn the_plans_wire_the_layers_as_stockfish_and_the_thesis_do() {
        let acts = |p: &Plan| p.hidden.iter().map(|h| h.acts.clone()).collect::<Vec<_>>();
        // The thesis: one hidden layer, read by the output; no skip.
        let thesis = Arch::thesis(32).plan(256);
        assert_eq!(acts(&thesis), vec![Range { start: 0, end: 32 }]);
        assert_eq!(thesis.skip, SkipRead::None);
        assert_eq!(
            (thesis.output.layers.clone(), thesis.output.reads.clone()),
            (0..1, 0..32)
        );
        // 15.1: fc_0's 16th output is the skip, its 15 others give 30 activations that fc_1
        // reads; fc_1's 32 overwrite them and are fc_2's input.
        let v5 = Arch::sfnnv5().plan(1024);
        assert_eq!((v5.hidden[0].outputs, v5.hidden[0].width), (16, 15));
        assert_eq!(acts(&v5), [0..30, 0..32]);
        assert_eq!(v5.skip, SkipRead::Sum(15));
        assert_eq!(v5.input_of(1), Some(0..30));
        assert_eq!(
            (v5.output.layers.clone(), v5.output.reads.clone()),
            (1..2, 0..32)
        );
        // Today: the skip is fc_0_out[30] - fc_0_out[31]; fc_2 reads both layers' 64
        // activations side by side.
        let v16 = Arch::sfnnv16().plan(1024);
        assert_eq!(acts(&v16), [0..64, 64..128]);
        assert_eq!(v16.skip, SkipRead::Difference(30, 31));
        assert_eq!(
            (v16.output.layers.clone(), v16.output.reads.clone()),
            (0..2, 0..128)
        );
        assert_eq!(v16.acts_len(), 128);
        assert_eq!(v16.layers(), Arch::sfnnv16().layers(1024));
    }

    #[test]
    fn sfnnv16_layers_are_stockfish_762dd1da9s() {
        let arch = Arch::sfnnv16();
        assert_eq!(arch.layers(1024), vec![(1024, 32), (64, 32), (128, 1)]);
        assert!(arch.check(1024).is_ok());
        assert_eq!(arch.preset(), Some(Preset::Sfnnv16));
        // The table form reads back, and the older shapes keep their exact serialization.
        let json = serde_json::to_string(&arch).unwrap();
        assert!(json.contains(r#""skip":"difference""#), "{json}");
        assert_eq!(serde_json::from_str::<Arch>(&json).unwrap(), arch);
        let v5 = serde_json::to_string(&Arch::sfnnv5()).unwrap();
        assert!(v5.contains(r#""skip":true"#) && !v5.contains("shift") && !v5.contains("dense"));
        assert_eq!(serde_json::from_str::<Arch>(&v5).unwrap(), Arch::sfnnv5());
    }

    #[test]
    fn inconsistent_shapes_are_refused_with_a_reason() {
        let mut a = Arch::thesis(32);
        a.psqt_buckets = 8;
        assert!(
            a.check(256)
                .unwrap_err()
                .to_string()
                .contains("thesis's output rule")
        );
        let mut b = Arch::sfnnv5();
        b.stacks = 0;
        assert!(
            b.check(1024)
                .unwrap_err()
                .to_string()
                .contains("layer stacks")
        );
        assert!(
            Arch::sfnnv5()
                .check(96)
                .unwrap_err()
                .to_string()
                .contains("multiple of 64")
        );
    }
}
