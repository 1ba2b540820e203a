//! # NNUE networks: shapes, file formats, quantized inference
//!
//! The one home of the network that the engine (`host`) and the trainer both use. A network's
//! shape is data ([`Shape`]: the feature set, L1 and an [`Arch`]), so one crate holds:
//!
//! - the thesis's network (§4.3), bit-exact with its reference implementation
//!   (`shared/reference/thesis-layouts.md`): a first layer N → L1 shared by both perspectives
//!   and kept incrementally as one `i16` accumulator per perspective, a clipped ReLU, the two
//!   halves concatenated side to move first, a hidden layer 2·L1 → L2 and an output neuron;
//! - Stockfish's shapes ([`Arch::sfnnv5`]): a PSQT term summed beside the accumulator, layer
//!   stacks chosen by piece count, the pairwise product of each accumulator's halves, squared
//!   and plain clipped ReLUs with a skip output ([`forward`]), and today's ([`Arch::sfnnv16`]:
//!   the product clipped at 255, per-layer activation shifts, a skip difference, a dense output
//!   layer); Stockfish's own `.nnue` files of 15.1 and of today read and written exactly
//!   ([`stockfish`]), any feature set in any of these shapes.
//!
//! Crate layout, no module importing one that imports it back: `shape` ← `network` (with
//! `first_layer`, `aligned`) ← `format`, `stockfish` ← `load`; `simd`, `stacks` and `arrange`
//! read `network`; `accumulator` and `refresh_cache` evaluate a loaded [`Nnue`].
//!
//! - [`Network`]: sizes, block identities, shape, quantization parameters and tensors in memory.
//! - [`Nnue`]: a network file loaded (any format) and bound to the feature plugins.
//! - [`AccumulatorStack`]: incremental evaluation for a search (push a move, pop it, evaluate).
//! - [`Kernels`] / [`SimdLevel`]: scalar, AVX2, AVX-512 and AVX-512 VNNI kernels chosen at run
//!   time, all giving the same integers; `NNUE_SIMD=scalar|avx2|avx512|avx512vnni` forces one.
//! - [`reference`](mod@reference): a naive evaluation written from the specification, for tests.
//!
//! ## The quantized forward pass (the thesis's shape; other shapes: [`forward`])
//!
//! For each perspective p, `acc_p = b1 + Σ W1[i]` over the distinct active indices i of p, in
//! 16-bit wrapping arithmetic. With stm the side to move and opp the other side:
//!
//! 1. `x = clamp(acc_stm, 0, 127) ‖ clamp(acc_opp, 0, 127)` (2·L1 values, u8);
//! 2. `h_j = clamp((b2_j + Σ_k W2[j][k]·x_k) >> 6, 0, 127)` (32-bit wrapping sums, arithmetic shift);
//! 3. `out = (b3 + Σ_j W3[j]·h_j) >> 4` (32-bit wrapping sum, arithmetic shift).
//!
//! `out` is the evaluation for the side to move in the units of the training targets (the thesis
//! engine uses it directly as centipawns). The constants come from the quantization scales of
//! §4.4.1: activations ×127 (the clip), hidden weights ×64 (shift 6), output ×16 (shift 4).
//! L1 must be a multiple of 32 (the SIMD kernels' width); L2 may be any value from 1.
//!
//! ## File formats
//!
//! All integers are little-endian. [`Nnue::load`] tells the formats apart by the magic:
//! `NNUEFSET` for this project's, Stockfish's version words `0x7AF32F20` (15.1) and
//! `0x6A448AFA` (today) for Stockfish's (layouts in [`stockfish`]), and a feature-set name for
//! the thesis's.
//!
//! ### The thesis's `.nn` files (read and written as they are)
//!
//! | offset | bytes | field |
//! | --- | --- | --- |
//! | 0 | F | feature-set name, ASCII letters, digits, `_`, `+` (e.g. `hv+h+v`; `hv` = `all`) |
//! | F | 1 | NUL |
//! | F+1 | 4 | `u32` N, number of features (must equal the feature set's size) |
//! | F+5 | 4 | `u32` L1 |
//! | F+9 | 4 | `u32` L2 |
//! | F+13 | 2·N·L1 | W1, `i16`, N rows of L1 |
//! | | 2·L1 | b1, `i16` |
//! | | 2·L1·L2 | W2, `i8`, L2 rows of 2·L1 (side to move's L1 inputs first) |
//! | | 4·L2 | b2, `i32` |
//! | | L2 | W3, `i8` |
//! | | 4 | b3, `i32` |
//!
//! Nothing follows. The file stores no block identities: they are taken from the loaded plugins,
//! which must provide every block named, with sizes adding up to N.
//!
//! ### This project's format, versions 2 and 3
//!
//! | offset | bytes | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `NNUEFSET` (ASCII) |
//! | 8 | 4 | `u32` format version = 2 |
//! | 12 | 2 | `u16` F, length of the feature-set name |
//! | 14 | F | feature-set name, UTF-8, as given (a thesis name keeps its `hv`) |
//! | 14+F | 2 | `u16` B, number of blocks (1..=64), in the order of the name |
//! | | B × (19+K) | per block: `u16` K, the canonical block name (K bytes), `u32` size, `u32` layout version, `u64` layout identity ([`plugin_api::BlockDescriptor::layout_id`]), `u8` weight type of its first-layer rows (0 = `i16`, 1 = `i8`; the operands of a product term agree) |
//! | | 4 | `u32` N (must equal the sum of the block sizes) |
//! | | 4 | `u32` L1 (a multiple of 32, at most 8192) |
//! | | 4 | `u32` L2 (1 to 4096) |
//! | | 4 | `i32` activation clip = 127 (s_a) |
//! | | 4 | `u32` hidden shift = 6 (s_W = 2⁶ = 64) |
//! | | 4 | `u32` output shift = 4 (output scale 2⁴ = 16) |
//! | | … | W1: for each term of the name in order, its rows (the product of its blocks' sizes) of L1 values in the term's weight type (`i16`: 2 bytes each, `i8`: 1 byte); then b1, W2, b2, W3, b3 exactly as in the thesis format |
//! | end−4 | 4 | `u32` CRC-32 (IEEE 802.3, the one of zlib and `crc32fast`) of every byte before it |
//!
//! Version 3 holds any shape: after the output shift comes the [`Arch`] (`u8` first-layer
//! output: 0 clipped ReLU, 1 pairwise; `u32` PSQT buckets; `u32` layer stacks; `u8` bucket rule,
//! 0 = piece count; `u8` H hidden layers, then H × (`u32` width, `u8` activation: 0 clipped ReLU,
//! 1 squared and plain clipped ReLU); `u8` skip; `u8` output rule: 0 thesis, 1 Stockfish), the
//! L2 field being the first hidden width; the tensors are W1, b1, the PSQT weights (`i32`, N rows
//! of the buckets), then for each stack its layers in order, each `i8` weights (outputs rows of
//! inputs) then `i32` biases. For the thesis's shape that tensor order is version 2's, and a
//! thesis-shaped network is still written as version 2, byte for byte as before.
//!
//! Version 4 adds the layer kinds of Stockfish's shape of today: first-layer output 2 (pairwise
//! clipped at 255), a `u8` shift after each hidden layer's activation byte, skip 2 (the
//! difference of the first hidden layer's last two outputs), output rule 2 (today's scaled
//! output) and a final `u8` dense output (0, 1). A shape version 3 expresses is still written as
//! version 3.
//!
//! Version 5 records the network's score units ([`units::ScoreUnits`]): a `u8` after the shape
//! (0 centipawns, 1 Stockfish 15.1's internal units, 2 those of Stockfish's networks of
//! today), which the engine converts to centipawns. A network in centipawns is still written in
//! the version its shape needs, and a file of an older version is in centipawns; a thesis-shaped
//! network in other units is written as version 5 with its shape. So a Stockfish network
//! converted to this format and back keeps its units, where before the own file read its
//! output as centipawns.
//!
//! Version 1 is version 2 without the weight-type byte, every block `i16`; it is still read.
//! `i8` rows are widened to `i16` while accumulating ([`FirstLayer`]), so the evaluation is the
//! one of the same values stored as `i16`; a thesis file written from a network with `i8` blocks
//! stores them widened.
//!
//! Loading checks, in this order: magic, version, the header fields, the sizes (N ≥ 1, L1 a
//! multiple of 32, L2 ≥ 1, and upper limits), the file length (truncated or trailing bytes), the
//! checksum, the block sizes against N, the block names against the feature-set name, the
//! quantization parameters (only 127 / 6 / 4 are supported), and finally each block against the
//! loaded plugin of that name: same size and same layout identity. A thesis file round-trips
//! through this format byte for byte (`host net convert`).

mod accumulator;
mod aligned;
pub mod arrange;
mod delta_rows;
pub mod detect;
mod first_layer;
pub mod format;
pub mod forward;
mod grouping;
mod layers;
mod load;
pub mod names;
mod network;
mod prefetch;
pub mod reference;
mod refresh_cache;
pub mod scales;
pub mod shape;
mod simd;
pub mod stockfish;
pub mod units;
pub mod wire_code;

pub use accumulator::{
    AccumulatorStack, DEFAULT_MAX_PLY, EvalError, MIN_PIECES_FOR_HYBRID, StackStats,
};
pub use aligned::{ALIGN, AlignedVec, Element};
pub use arrange::Arranged;
pub use first_layer::{FirstLayer, OutOfRange, RowLists, StoredRun, WeightType};
pub use format::{
    DecodeError, EncodeError, FORMAT_VERSION, MAGIC, NetFormat, OwnHeader, THESIS_SHAPE_VERSION,
};
pub use forward::{ForwardScratch, StackOutput};
pub use layers::{HiddenStep, OutputStep, Plan, SkipRead};
pub use load::{
    NetError, NetErrorKind, Nnue, check_network_file, encode, read_own, units_read_back,
    write_network,
};
pub use network::{
    Affine, BlockInfo, L1_MULTIPLE, LayerParts, MAX_FEATURES, MAX_L1, MAX_L2, MAX_W1_BYTES,
    Network, NetworkParts, Quantization, SPARSE_FROM, ShapeError, StackPath, check_sizes,
    feature_count, outputs_per_pass, term_runs,
};
pub use refresh_cache::{CacheStats, CachedTerms, RefreshCache};
pub use scales::{ACTIVATION_CLIP, HIDDEN_ONE, HIDDEN_SHIFT, OUTPUT_ONE, OUTPUT_SHIFT, SCORE_ONE};
pub use shape::{
    Activation, Arch, ArchError, BucketRule, FtOutput, Hidden, OutputRule, Preset, Shape, Skip,
    UnknownPreset,
};
pub use simd::{Kernels, SIMD_ENV, SimdError, SimdLevel, TEST_SIMD_ENV, missing_build_feature};
