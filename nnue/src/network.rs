//! The network in memory: sizes, block identities, quantization parameters and the quantized
//! tensors, independent of the file it came from.

use std::fmt;

use plugin_api::{FeatureSet, Spec};

use super::aligned::AlignedVec;
use super::first_layer::{FirstLayer, WeightType};
use super::layers::Plan;
use super::scales::{ACTIVATION_CLIP, HIDDEN_SHIFT, OUTPUT_SHIFT};
use super::shape::{Arch, Shape};
use super::units::ScoreUnits;

/// Largest accepted first-layer width L1 (per perspective).
pub const MAX_L1: usize = 8192;
/// Largest accepted hidden width L2.
pub const MAX_L2: usize = 4096;
/// Largest accepted number of input features N.
pub const MAX_FEATURES: usize = 1 << 24;
/// Largest accepted first-layer weight matrix, in bytes (N · L1 · 2).
pub const MAX_W1_BYTES: usize = 1 << 31;
/// L1 must be a multiple of this (the SIMD kernels work on 32 `i16` lanes at a time).
pub const L1_MULTIPLE: usize = 32;

/// The integer parameters of the quantized forward pass (thesis §4.4.1). Only the thesis's
/// values are supported; a file that stores others is refused rather than evaluated wrongly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantization {
    /// Upper clip of the clipped ReLUs (and the activation scale s_a): 127.
    pub activation_clip: i32,
    /// Arithmetic right shift after the hidden layer (log2 of s_W = 64): 6.
    pub hidden_shift: u32,
    /// Arithmetic right shift after the output layer (log2 of 16): 4.
    pub output_shift: u32,
}

impl Quantization {
    /// The thesis's (and Stockfish's) parameters: clip 127, hidden shift 6, output shift 4.
    pub const THESIS: Quantization = Quantization {
        activation_clip: ACTIVATION_CLIP,
        hidden_shift: HIDDEN_SHIFT,
        output_shift: OUTPUT_SHIFT,
    };
}

impl Default for Quantization {
    fn default() -> Self {
        Self::THESIS
    }
}

/// Identity of one operand block of a network's input, as the network was trained with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Canonical block name (`all`, `h`, `mb`...).
    pub name: String,
    /// Number of indices of the block.
    pub size: u32,
    /// The block's layout version ([`plugin_api::BlockDescriptor::layout_version`]).
    pub layout_version: u32,
    /// The block's layout identity ([`plugin_api::BlockDescriptor::layout_id`]).
    pub layout_id: u64,
    /// How the block's first-layer rows are stored (every operand of a product term has the
    /// term's type).
    pub weight_type: WeightType,
}

impl BlockInfo {
    /// The identities of a feature set's operand blocks (a block in several terms once per
    /// term), in spec order: what a network records.
    pub fn of_set(set: &FeatureSet) -> Vec<BlockInfo> {
        set.operands()
            .map(|b| BlockInfo {
                name: b.descriptor.name.to_string(),
                size: b.descriptor.size,
                layout_version: b.descriptor.layout_version,
                layout_id: b.descriptor.layout_id,
                weight_type: WeightType::I16,
            })
            .collect()
    }

    /// The identities of `set`'s blocks with the blocks named in `i8_blocks` stored as `i8`
    /// (names of blocks `set` does not have are ignored: one list serves every set of an
    /// experiment). Fails on a product term whose operands would get different types.
    pub fn of_set_with_i8(
        set: &FeatureSet,
        i8_blocks: &[String],
    ) -> Result<Vec<BlockInfo>, ShapeError> {
        let blocks = BlockInfo::with_weight_type(BlockInfo::of_set(set), i8_blocks, WeightType::I8);
        term_runs(set.plain_name(), &blocks)?;
        Ok(blocks)
    }

    /// `blocks` with the weight type `ty` for every block named in `names` (canonical names).
    pub fn with_weight_type(
        mut blocks: Vec<BlockInfo>,
        names: &[String],
        ty: WeightType,
    ) -> Vec<BlockInfo> {
        for b in &mut blocks {
            if names.contains(&b.name) {
                b.weight_type = ty;
            }
        }
        blocks
    }
}

/// Why a set of parts does not make a network. `Display` is a clause (no file name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeError {
    /// N is zero or above [`MAX_FEATURES`].
    BadFeatureCount(u64),
    /// L1 is zero, not a multiple of 32, or above [`MAX_L1`].
    BadL1(u64),
    /// L2 is zero or above [`MAX_L2`].
    BadL2(u64),
    /// N · L1 is above what is accepted.
    TooLarge {
        /// N.
        n: u64,
        /// L1.
        l1: u64,
    },
    /// A tensor's length does not match the sizes.
    TensorLength {
        /// Which tensor (`W1`, `b1`...).
        tensor: &'static str,
        /// Its length.
        len: usize,
        /// The length N, L1, L2 require.
        expected: usize,
    },
    /// The feature-set name is not a valid spec.
    BadName {
        /// The name.
        name: String,
        /// Why it is not a spec.
        reason: String,
    },
    /// The block list does not match the blocks named by the feature-set name.
    BlocksDiffer {
        /// The feature-set name.
        name: String,
        /// The block names listed.
        listed: Vec<String>,
    },
    /// The block sizes do not add up to N.
    BlockSum {
        /// N.
        n: u64,
        /// The sum of the block sizes.
        sum: u64,
    },
    /// The operands of a product term have different weight types.
    MixedWeightTypes {
        /// The term (`k*all`).
        term: String,
    },
    /// A first-layer weight does not fit its block's weight type.
    WeightOutOfRange {
        /// The feature index.
        index: u32,
        /// The weight.
        value: i16,
        /// The type of its block.
        ty: WeightType,
    },
    /// Quantization parameters other than the supported ones.
    Quantization {
        /// The parameters found.
        found: Quantization,
    },
    /// The layers after the first do not make a valid shape.
    Arch(crate::shape::ArchError),
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::BadFeatureCount(n) => write!(
                f,
                "its number of features N = {n} is not between 1 and {MAX_FEATURES}"
            ),
            ShapeError::BadL1(l1) => write!(
                f,
                "its first-layer width L1 = {l1} is not a positive multiple of {L1_MULTIPLE} up to {MAX_L1}"
            ),
            ShapeError::BadL2(l2) => write!(
                f,
                "its hidden width L2 = {l2} is not between 1 and {MAX_L2}"
            ),
            ShapeError::TooLarge { n, l1 } => write!(
                f,
                "its first layer N x L1 = {n} x {l1} is larger than the accepted {} MiB",
                MAX_W1_BYTES >> 20
            ),
            ShapeError::TensorLength {
                tensor,
                len,
                expected,
            } => write!(
                f,
                "its tensor {tensor} has {len} values where the layer sizes need {expected}"
            ),
            ShapeError::BadName { name, reason } => {
                write!(f, "its feature-set name '{name}' is invalid: {reason}")
            }
            ShapeError::BlocksDiffer { name, listed } => write!(
                f,
                "its feature-set name '{name}' does not match its block list ({})",
                listed.join(", ")
            ),
            ShapeError::BlockSum { n, sum } => write!(
                f,
                "its block sizes add up to {sum} but it has N = {n} features"
            ),
            ShapeError::MixedWeightTypes { term } => write!(
                f,
                "the operands of its term '{term}' have different weight types (a product term is stored in one)"
            ),
            ShapeError::WeightOutOfRange { index, value, ty } => write!(
                f,
                "its first-layer weight {value} of feature {index} does not fit the block's weight type {ty}"
            ),
            ShapeError::Quantization { found } => write!(
                f,
                "its quantization (activation clip {}, hidden shift {}, output shift {}) is not the supported one (clip {ACTIVATION_CLIP}, hidden shift {HIDDEN_SHIFT}, output shift {OUTPUT_SHIFT})",
                found.activation_clip, found.hidden_shift, found.output_shift
            ),
            ShapeError::Arch(reason) => reason.fmt(f),
        }
    }
}

impl std::error::Error for ShapeError {}

/// The number of features N of a network named `name` (`k*all+h`) whose operand blocks are
/// `blocks`: for each term of the name, the product of its blocks' sizes, summed. Checks that
/// `blocks` are the operands the name lists, in order.
pub fn feature_count(name: &str, blocks: &[BlockInfo]) -> Result<u64, ShapeError> {
    Ok(term_runs(name, blocks)?
        .iter()
        .map(|&(rows, _)| u64::from(rows))
        .sum())
}

/// Each term of a network named `name` with operand blocks `blocks`, in order: its number of
/// rows (the product of its blocks' sizes) and its weight type (its operands', which must
/// agree). Checks that `blocks` are the operands the name lists, in order.
pub fn term_runs(name: &str, blocks: &[BlockInfo]) -> Result<Vec<(u32, WeightType)>, ShapeError> {
    let spec = Spec::parse(name).map_err(|e| ShapeError::BadName {
        name: name.to_string(),
        reason: e.to_string(),
    })?;
    if !spec.operands().eq(blocks.iter().map(|b| b.name.as_str())) {
        return Err(ShapeError::BlocksDiffer {
            name: name.to_string(),
            listed: blocks.iter().map(|b| b.name.clone()).collect(),
        });
    }
    let too_large = || ShapeError::BadName {
        name: name.to_string(),
        reason: "its number of features does not fit in 32 bits".into(),
    };
    let mut operands = blocks.iter();
    let mut runs = Vec::with_capacity(spec.terms().len());
    let mut total = 0u32;
    for term in spec.terms() {
        let factors: Vec<&BlockInfo> = operands.by_ref().take(term.factors.len()).collect();
        let ty = factors[0].weight_type;
        if factors.iter().any(|b| b.weight_type != ty) {
            return Err(ShapeError::MixedWeightTypes {
                term: term.factors.join("*"),
            });
        }
        let rows = factors
            .iter()
            .try_fold(1u32, |p, b| p.checked_mul(b.size))
            .ok_or_else(too_large)?;
        total = total.checked_add(rows).ok_or_else(too_large)?;
        runs.push((rows, ty));
    }
    Ok(runs)
}

/// Checks N, L1 and L2 against the limits of this implementation.
pub fn check_sizes(n: u64, l1: u64, l2: u64) -> Result<(), ShapeError> {
    if n == 0 || n > MAX_FEATURES as u64 {
        return Err(ShapeError::BadFeatureCount(n));
    }
    if l1 == 0 || !l1.is_multiple_of(L1_MULTIPLE as u64) || l1 > MAX_L1 as u64 {
        return Err(ShapeError::BadL1(l1));
    }
    if l2 == 0 || l2 > MAX_L2 as u64 {
        return Err(ShapeError::BadL2(l2));
    }
    if n * l1 * 2 > MAX_W1_BYTES as u64 {
        return Err(ShapeError::TooLarge { n, l1 });
    }
    Ok(())
}

/// One affine layer's parts: `y = b + W·x`, W row-major (`outputs` rows of `inputs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerParts {
    /// Weights, `outputs × inputs`, row-major.
    pub weights: Vec<i8>,
    /// Biases, `outputs`.
    pub biases: Vec<i32>,
}

/// The parts of a network, as a trainer or a file produces them (row-major, see [`Network`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkParts {
    /// The feature-set name, as written in the file (`hv+h+v` keeps its thesis alias).
    pub feature_set: String,
    /// The blocks the name lists, in order, with the identities the network was trained with.
    pub blocks: Vec<BlockInfo>,
    /// First-layer width per perspective (a multiple of 32).
    pub l1: usize,
    /// Everything after the first layer.
    pub arch: Arch,
    /// Quantization parameters (only [`Quantization::THESIS`] is accepted).
    pub quantization: Quantization,
    /// First-layer weights, N rows of L1 values (row i is added when feature i is active).
    pub w1: Vec<i16>,
    /// First-layer bias, L1 values.
    pub b1: Vec<i16>,
    /// PSQT weights, N rows of `arch.psqt_buckets` values (empty without PSQT).
    pub psqt: Vec<i32>,
    /// Per layer stack, its layers in the order and sizes of [`Arch::layers`].
    pub stacks: Vec<Vec<LayerParts>>,
    /// The units of the output (centipawns unless it was read from, or made as, one of
    /// Stockfish's networks).
    pub units: ScoreUnits,
}

impl NetworkParts {
    /// The parts of a thesis-shaped network: W2 is L2 rows of 2·L1 inputs (side to move's half
    /// first), W3 L2 values.
    pub fn thesis(
        feature_set: String,
        blocks: Vec<BlockInfo>,
        l1: usize,
        (w1, b1): (Vec<i16>, Vec<i16>),
        (w2, b2): (Vec<i8>, Vec<i32>),
        (w3, b3): (Vec<i8>, i32),
    ) -> NetworkParts {
        NetworkParts {
            feature_set,
            blocks,
            l1,
            arch: Arch::thesis(b2.len()),
            quantization: Quantization::THESIS,
            w1,
            b1,
            psqt: Vec::new(),
            stacks: vec![vec![
                LayerParts {
                    weights: w2,
                    biases: b2,
                },
                LayerParts {
                    weights: w3,
                    biases: vec![b3],
                },
            ]],
            units: ScoreUnits::Centipawns,
        }
    }

    /// A network of seeded random weights for `set` of the thesis's shape, in the ranges trained
    /// networks use: what benchmarks measure the cost of a feature set with before any network
    /// of it is trained (the work per move and per evaluation does not depend on the values).
    pub fn synthetic(set: &FeatureSet, l1: usize, l2: usize, seed: u64) -> NetworkParts {
        Self::synthetic_arch(set, l1, &Arch::thesis(l2), seed)
    }

    /// [`synthetic`](Self::synthetic) for any shape.
    pub fn synthetic_arch(set: &FeatureSet, l1: usize, arch: &Arch, seed: u64) -> NetworkParts {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let n = set.size() as usize;
        let w1 = (0..n * l1).map(|_| rng.random_range(-40..=40)).collect();
        let b1 = (0..l1).map(|_| rng.random_range(-60..=120)).collect();
        let psqt = (0..n * arch.psqt_buckets)
            .map(|_| rng.random_range(-3000..=3000))
            .collect();
        let layers = arch.layers(l1);
        let last = layers.len() - 1;
        let stacks = (0..arch.stacks)
            .map(|_| {
                layers
                    .iter()
                    .enumerate()
                    .map(|(i, &(inputs, outputs))| LayerParts {
                        weights: (0..inputs * outputs)
                            .map(|_| rng.random_range(-60..=60))
                            .collect(),
                        biases: (0..outputs)
                            .map(|_| {
                                if i == last {
                                    0
                                } else {
                                    rng.random_range(-9000..=9000)
                                }
                            })
                            .collect(),
                    })
                    .collect()
            })
            .collect();
        NetworkParts {
            feature_set: set.name().to_string(),
            blocks: BlockInfo::of_set(set),
            l1,
            arch: arch.clone(),
            quantization: Quantization::THESIS,
            w1,
            b1,
            psqt,
            stacks,
            units: ScoreUnits::Centipawns,
        }
    }
}

/// Inputs (padded) from which a layer reads only its non-zero blocks of four: the first hidden
/// layer of every shape (2·L1 clipped activations, or L1 pairwise products, most of them zero),
/// not the small ones after it.
pub const SPARSE_FROM: usize = 256;

/// How many outputs one pass of the column kernels computes over a layer's input blocks (its
/// outputs are zero-padded to a multiple of it): chosen when the layer is built, from its sizes
/// alone, so that every shape with the same layer gets the same kernel.
///
/// A layer of more than 16 outputs takes 32 outputs per pass when it is wide and sparse (the
/// thesis's 2·L1 → 32, today's L1 → 32) or when 32 pad it no more than 16 do (the dense 32 → 32
/// and 64 → 32 of Stockfish's shapes): one pass over its blocks instead of two, each broadcast
/// block feeding four AVX2 or two AVX-512 registers. Every other layer (15.1's L1 → 16, a dense
/// layer of 33 to 48 outputs) takes 16: a wider pass would only multiply padding.
pub fn outputs_per_pass(inputs: usize, outputs: usize) -> usize {
    let sparse = inputs.next_multiple_of(32) >= SPARSE_FROM;
    let no_more_padding = outputs.next_multiple_of(32) == outputs.next_multiple_of(16);
    if outputs > 16 && (sparse || no_more_padding) {
        32
    } else {
        16
    }
}

/// How the layers of every stack are evaluated: chosen when the network is built, from its
/// shape's layers ([`StackPath::of`]), so that every shape with the same layers takes the same
/// path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackPath {
    /// Layer by layer: every shape.
    Layers,
    /// One hidden layer of clipped ReLUs read sparsely in one pass of 17 to 32 outputs, then
    /// the output layer: the hidden sums are clipped and dotted with the output weights at
    /// once, never stored as activations (the thesis's networks' layers, 2·L1 → 32 → 1).
    SparseCreluToOutput,
}

impl StackPath {
    /// The fastest path for stacks of the layers `stack` (every stack of a network has the
    /// same sizes) of shape `arch`.
    pub fn of(arch: &Arch, stack: &[Affine]) -> StackPath {
        let fits = match stack {
            [hidden, output] => {
                hidden.per_pass == 32
                    && hidden.outputs <= 32
                    && hidden.stride() >= SPARSE_FROM
                    && output.outputs == 1
            }
            _ => false,
        };
        let crelu = arch.hidden.len() == 1
            && arch.hidden[0].activation == crate::shape::Activation::ClippedRelu
            && arch.hidden[0].shift == HIDDEN_SHIFT
            && arch.skip == crate::shape::Skip::None;
        if fits && crelu {
            StackPath::SparseCreluToOutput
        } else {
            StackPath::Layers
        }
    }
}

/// One affine layer as the kernels read it: `y = b + W·x`, W row-major (`outputs` rows of
/// `inputs` `i8`), `i32` biases, 64-byte aligned, with the copies the SIMD kernels read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Affine {
    inputs: usize,
    outputs: usize,
    pub(crate) weights: AlignedVec<i8>,
    pub(crate) biases: AlignedVec<i32>,
    /// Outputs per pass of the column kernels ([`outputs_per_pass`], or another multiple of 16
    /// that a test forces).
    per_pass: usize,
    /// A one-output layer's row zero-padded to a multiple of 32 inputs (what the SIMD kernel
    /// reads, with inputs zero-padded alike); empty when `inputs` is one already.
    pub(crate) padded: AlignedVec<i8>,
    /// The weights by blocks of four inputs, for layers of more than one output, pass by pass:
    /// block `c` of a pass holds its `per_pass` outputs' weights of inputs `4c .. 4c + 4`
    /// (`[padded outputs / per_pass][stride / 4][per_pass][4]`, outputs zero-padded to a
    /// multiple of `per_pass`), so that one broadcast block of inputs multiplies a register of
    /// outputs at once, and a pass reads its blocks at a stride its kernel knows at compile
    /// time. With one pass (every hot layer) this is Stockfish 15.1's order for its layer
    /// kernels (`layers/affine_transform.h`, `get_weight_index`). Empty for one output.
    pub(crate) columns: AlignedVec<i8>,
    /// The biases zero-padded like `columns`' outputs (what the kernels add in the registers of
    /// whole passes); empty where `columns` is.
    padded_biases: AlignedVec<i32>,
    /// The outputs of `columns`' order (0 for one output).
    padded_outputs: usize,
}

impl Affine {
    /// The layer of `weights` (`outputs × inputs`) and `biases` (lengths checked by the caller),
    /// with its kernels' copies laid out for [`outputs_per_pass`].
    pub(crate) fn new(inputs: usize, outputs: usize, weights: &[i8], biases: &[i32]) -> Affine {
        Self::with_per_pass(
            inputs,
            outputs,
            weights,
            biases,
            outputs_per_pass(inputs, outputs),
        )
    }

    /// [`new`](Self::new) with `per_pass` (a multiple of 16, at most 32) outputs per pass.
    pub(crate) fn with_per_pass(
        inputs: usize,
        outputs: usize,
        weights: &[i8],
        biases: &[i32],
        per_pass: usize,
    ) -> Affine {
        assert!(
            per_pass == 16 || per_pass == 32,
            "16 or 32 outputs per pass"
        );
        let stride = inputs.next_multiple_of(32);
        let rows = usize::from(outputs == 1 && stride != inputs);
        let mut padded = AlignedVec::zeroed(rows * stride);
        padded
            .chunks_exact_mut(stride)
            .zip(weights.chunks_exact(inputs.max(1)))
            .for_each(|(dst, row)| dst[..inputs].copy_from_slice(row));
        let wide = if outputs > 1 {
            outputs.next_multiple_of(per_pass)
        } else {
            0
        };
        let mut columns = AlignedVec::zeroed(stride * wide);
        let blocks = stride / 4;
        for (o, row) in weights.chunks_exact(inputs.max(1)).enumerate().take(wide) {
            let (pass, lane) = (o / per_pass, o % per_pass);
            for (i, &w) in row.iter().enumerate() {
                columns[((pass * blocks + i / 4) * per_pass + lane) * 4 + i % 4] = w;
            }
        }
        let mut padded_biases = AlignedVec::zeroed(wide);
        if wide > 0 {
            padded_biases[..outputs].copy_from_slice(biases);
        }
        Affine {
            inputs,
            outputs,
            weights: AlignedVec::from_slice(weights),
            biases: AlignedVec::from_slice(biases),
            per_pass,
            padded,
            columns,
            padded_biases,
            padded_outputs: wide,
        }
    }

    /// Rebuilds the kernels' copies after `weights` changed (a neuron reordering).
    pub(crate) fn repad(&mut self) {
        *self = Affine::with_per_pass(
            self.inputs,
            self.outputs,
            &self.weights,
            &self.biases,
            self.per_pass,
        );
    }

    /// The inputs of a row as the SIMD kernels read it: `inputs` rounded up to 32.
    pub fn stride(&self) -> usize {
        self.inputs.next_multiple_of(32)
    }

    /// Outputs per pass of the column kernels (16 or 32).
    pub fn per_pass(&self) -> usize {
        self.per_pass
    }

    /// A one-output layer's row zero-padded to [`stride`](Self::stride) inputs.
    pub fn padded(&self) -> &[i8] {
        if self.padded.is_empty() {
            &self.weights
        } else {
            &self.padded
        }
    }

    /// The weights by blocks of four inputs (see the field), the biases zero-padded alike, and
    /// the padded output count of that order (0: a one-output layer, which has no such order).
    pub fn columns(&self) -> (&[i8], &[i32], usize) {
        (&self.columns, &self.padded_biases, self.padded_outputs)
    }

    /// Inputs per output.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Outputs.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Weights, `outputs × inputs`, row-major.
    pub fn weights(&self) -> &[i8] {
        &self.weights
    }

    /// Biases.
    pub fn biases(&self) -> &[i32] {
        &self.biases
    }
}

/// A quantized NNUE network: a first layer N → L1 shared by both perspectives, optionally a PSQT
/// term, and one or more layer stacks of the shape's [`Arch`]. The thesis's networks are N →
/// L1 → L2 → 1: one stack of two layers.
///
/// The tensors are row-major: `w1[i * L1 .. (i + 1) * L1]` is the row added to a perspective's
/// accumulator while feature `i` is active, `psqt[i * B .. (i + 1) * B]` its PSQT weights per
/// bucket; each affine layer is `outputs` rows of `inputs` (for the thesis's hidden layer, the
/// side to move's L1 activations first). Every buffer is 64-byte aligned. A `Network` always
/// satisfies [`check_sizes`], its block sizes add up to N, its shape passes [`Arch::check`] and
/// its quantization is [`Quantization::THESIS`]: the constructors check it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    feature_set: String,
    blocks: Vec<BlockInfo>,
    n: usize,
    l1: usize,
    arch: Arch,
    quantization: Quantization,
    pub(crate) w1: FirstLayer,
    pub(crate) b1: AlignedVec<i16>,
    pub(crate) psqt: AlignedVec<i32>,
    /// `psqt` in the storage order of W1's `i16` and `i8` rows.
    pub(crate) psqt_rows: [AlignedVec<i32>; 2],
    pub(crate) stacks: Vec<Vec<Affine>>,
    /// How the stacks are evaluated ([`StackPath::of`]).
    stack_path: StackPath,
    /// The walk over the layers after the first ([`Arch::plan`]).
    plan: Plan,
    units: ScoreUnits,
}

impl Network {
    /// Builds a network from its parts, checking every size, the block list against the name,
    /// the shape and the quantization.
    pub fn from_parts(parts: NetworkParts) -> Result<Network, ShapeError> {
        let runs = term_runs(&parts.feature_set, &parts.blocks)?;
        let n: u64 = runs.iter().map(|&(rows, _)| u64::from(rows)).sum();
        let arch = parts.arch;
        let first_hidden = arch.hidden.first().map_or(0, |h| h.width);
        check_sizes(n, parts.l1 as u64, first_hidden as u64)?;
        arch.check(parts.l1).map_err(ShapeError::Arch)?;
        if parts.quantization != Quantization::THESIS {
            return Err(ShapeError::Quantization {
                found: parts.quantization,
            });
        }
        let n = n as usize;
        let l1 = parts.l1;
        let check = |tensor: &'static str, len: usize, expected: usize| {
            if len == expected {
                Ok(())
            } else {
                Err(ShapeError::TensorLength {
                    tensor,
                    len,
                    expected,
                })
            }
        };
        check("W1", parts.w1.len(), n * l1)?;
        check("b1", parts.b1.len(), l1)?;
        check("PSQT", parts.psqt.len(), n * arch.psqt_buckets)?;
        check("layer stacks", parts.stacks.len(), arch.stacks)?;
        let plan = arch.plan(l1);
        let layers = plan.layers();
        let mut stacks = Vec::with_capacity(arch.stacks);
        for stack in parts.stacks {
            check("layers of a stack", stack.len(), layers.len())?;
            let mut affines = Vec::with_capacity(layers.len());
            for (layer, &(inputs, outputs)) in stack.into_iter().zip(&layers) {
                check("layer weights", layer.weights.len(), inputs * outputs)?;
                check("layer biases", layer.biases.len(), outputs)?;
                affines.push(Affine::new(inputs, outputs, &layer.weights, &layer.biases));
            }
            stacks.push(affines);
        }
        let w1 =
            FirstLayer::new(l1, &runs, &parts.w1).map_err(|e| ShapeError::WeightOutOfRange {
                index: e.index,
                value: e.value,
                ty: e.ty,
            })?;
        let psqt_rows = w1.by_storage(&parts.psqt, arch.psqt_buckets);
        let stack_path = StackPath::of(&arch, &stacks[0]);
        Ok(Network {
            feature_set: parts.feature_set,
            blocks: parts.blocks,
            n,
            l1,
            arch,
            quantization: parts.quantization,
            w1,
            b1: AlignedVec::from_slice(&parts.b1),
            psqt: AlignedVec::from_slice(&parts.psqt),
            psqt_rows,
            stacks,
            stack_path,
            plan,
            units: parts.units,
        })
    }

    /// A copy of the parts (for a trainer that continues from a network).
    pub fn to_parts(&self) -> NetworkParts {
        NetworkParts {
            feature_set: self.feature_set.clone(),
            blocks: self.blocks.clone(),
            l1: self.l1,
            arch: self.arch.clone(),
            quantization: self.quantization,
            w1: self.w1.to_values(),
            b1: self.b1.to_vec(),
            psqt: self.psqt.to_vec(),
            stacks: self
                .stacks
                .iter()
                .map(|stack| {
                    stack
                        .iter()
                        .map(|a| LayerParts {
                            weights: a.weights.to_vec(),
                            biases: a.biases.to_vec(),
                        })
                        .collect()
                })
                .collect(),
            units: self.units,
        }
    }

    /// The walk over the layers after the first ([`Arch::plan`] at this network's L1).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The units of the output, which the evaluators convert to centipawns.
    pub fn units(&self) -> ScoreUnits {
        self.units
    }

    /// The same network with its output in `units` (a trainer's network learns its data's).
    pub fn with_units(mut self, units: ScoreUnits) -> Network {
        self.units = units;
        self
    }

    /// The feature-set name as stored (the thesis files say `hv` for `all`).
    pub fn feature_set(&self) -> &str {
        &self.feature_set
    }

    /// The input blocks with the identities the network was trained with.
    pub fn blocks(&self) -> &[BlockInfo] {
        &self.blocks
    }

    /// Number of input features N (the sum of the block sizes).
    pub fn n(&self) -> usize {
        self.n
    }

    /// First-layer width per perspective.
    pub fn l1(&self) -> usize {
        self.l1
    }

    /// Everything after the first layer.
    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// The whole shape: N, L1 and [`Arch`].
    pub fn shape(&self) -> Shape {
        Shape::new(self.n, self.l1, self.arch.clone())
    }

    /// The first hidden layer's width (the thesis's L2).
    pub fn l2(&self) -> usize {
        self.arch.hidden[0].width
    }

    /// The quantization parameters.
    pub fn quantization(&self) -> Quantization {
        self.quantization
    }

    /// First-layer weights (N rows of L1, each term in its weight type).
    pub fn w1(&self) -> &FirstLayer {
        &self.w1
    }

    /// First-layer bias (L1).
    pub fn b1(&self) -> &[i16] {
        &self.b1
    }

    /// PSQT weights (N rows of the PSQT buckets; empty without PSQT).
    pub fn psqt(&self) -> &[i32] {
        &self.psqt
    }

    /// The PSQT rows in W1's storage order (for [`RowLists::apply_psqt`](super::RowLists::apply_psqt)).
    pub fn psqt_rows(&self) -> &[AlignedVec<i32>; 2] {
        &self.psqt_rows
    }

    /// The layer stacks, each its affine layers in the order of [`Arch::layers`].
    pub fn stacks(&self) -> &[Vec<Affine>] {
        &self.stacks
    }

    /// How the stacks are evaluated.
    pub fn stack_path(&self) -> StackPath {
        self.stack_path
    }

    /// The same network with every layer's column kernels laid out for `per_pass` outputs per
    /// pass (16 or 32) instead of [`outputs_per_pass`]'s choice, and its stack path chosen for
    /// that layout: it evaluates exactly the same, which tests check for every shape.
    pub fn with_outputs_per_pass(&self, per_pass: usize) -> Network {
        let mut net = self.clone();
        for layer in net.stacks.iter_mut().flatten() {
            *layer = Affine::with_per_pass(
                layer.inputs,
                layer.outputs,
                &layer.weights,
                &layer.biases,
                per_pass,
            );
        }
        net.stack_path = StackPath::of(&net.arch, &net.stacks[0]);
        net
    }

    /// The same network evaluated layer by layer ([`StackPath::Layers`]), whatever its layers:
    /// what the faster paths are tested against.
    pub fn layer_by_layer(&self) -> Network {
        Network {
            stack_path: StackPath::Layers,
            ..self.clone()
        }
    }
}
