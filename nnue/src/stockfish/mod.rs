//! Stockfish's network files, read and written exactly: Stockfish 15.1's (SFNNv5, version
//! `0x7AF32F20`, the format of every network from SFNNv1 to SFNNv9, raw or with LEB128-compressed
//! first-layer tensors as Stockfish 16 writes them) and today's (SFNNv16, version `0x6A448AFA`,
//! threat inputs and pawn pairs beside HalfKAv2_hm).
//!
//! A file is read by what its hash chain and its sizes say ([`Layout::of_header`]): the feature
//! transformer's hash gives the feature set and L1; the layer stacks' hash narrows their widths
//! to a few candidates (the chain is nearly linear: 32·32 and 30·33 hash alike), and the bytes
//! the stacks take pick the one ([`decode`]). Any size the format expresses is read
//! (nnue-pytorch writes SFNNv5 files at other L1 widths). Which files Stockfish's own binary
//! would load (it is compiled for one shape) is said ([`loaded_by`]), not enforced.
//!
//! Followed sources:
//! - 15.1: official-stockfish/Stockfish tag `sf_15.1` (commit 758f9c9),
//!   `src/nnue/evaluate_nnue.cpp:66-137` (header, loading order, the end of the stream),
//!   `src/nnue/nnue_feature_transformer.h:248-270`, `src/nnue/nnue_architecture.h:58-70`,
//!   `src/nnue/layers/affine_transform.h:213-262`, `clipped_relu.h:45-49`; nnue-pytorch
//!   `serialize.py` at 5225117 (the writer, its padding and its description). The layout is in
//!   `shared/reference/stockfish-15.1-network.md`.
//! - Today: official-stockfish/Stockfish commit 762dd1da9 (2026-08-03), `src/nnue/nnue_common.h:64-76`
//!   (version, LEB128), `src/nnue/nnue_feature_transformer.h:121-181` (hash, read order),
//!   `src/nnue/nnue_architecture.h:56-92` (stack, hash chain), `src/nnue/network.cpp:283-345`
//!   (header, the end of the stream); `shared/reference/stockfish-sfnnv16-network.md`.
//!
//! | bytes | SFNNv5 (15.1) | SFNNv16 (today) |
//! | --- | --- | --- |
//! | 4 | version `0x7AF32F20` | version `0x6A448AFA` |
//! | 4 | network hash = feature-transformer hash ^ stack hash | the same |
//! | 4 + n | description length and text | the same |
//! | 4 | FT hash: HalfKAv2_hm's `0x7F234CB8` ^ 2·L1 | rotl-xor of FullThreats `0x2E6B9D04`, PP_3Wide `0x86F2B1DD`, HalfKAv2_hm ^ 2·L1 |
//! | | `i16` biases, `i16` weights (22,528 × L1), `i32` PSQT (22,528 × 8); raw, or each LEB128 | LEB128 `i16` biases; raw `i8` threat weights (59,808 × L1); LEB128 `i32` threat PSQT; raw `i8` pair weights (4,560 × L1); LEB128 pair PSQT; LEB128 `i16` HalfKAv2_hm weights; LEB128 its PSQT |
//! | 8 × | `u32` stack hash; fc_0 L1 → L2+1; fc_1 2·L2 → L3; fc_2 L3 → 1 | `u32` stack hash; fc_0 L1 → L2; fc_1 2·L2 → L3; fc_2 2·L2 + 2·L3 → 1 |
//!
//! Each affine layer: `i32` biases, then `i8` weights row-major `[out][in padded to 32]`
//! (padding dropped on reading, written as zeros). Nothing follows (`stream.peek() == EOF`).

pub mod leb128;
mod seeded;

use super::first_layer::WeightType;
use super::format::{DecodeError, EncodeError, NotStockfish, i16s, i32s};
use super::network::{BlockInfo, LayerParts, MAX_L1, Network, NetworkParts, Quantization};
use super::shape::Arch;
use super::units::ScoreUnits;
use leb128::Leb128Error;
use plugin_api::FeatureSet;
pub use seeded::{seeded_description, seeded_random_parts};

/// The file version of Stockfish's networks from SFNNv2 (2021-05, e8d64af12) to SFNNv15
/// (`nnue_common.h:51` at `sf_15.1`); SFNNv10 to SFNNv15 (threat inputs, 2025-11 to 2026-05)
/// kept it with another feature transformer hash.
pub const VERSION: u32 = 0x7AF3_2F20;
/// The file version of Stockfish 12 and 13's HalfKP networks (84f3e8679): recognised so that
/// they are refused by name.
pub const VERSION_HALFKP: u32 = 0x7AF3_2F16;
/// The file version of Stockfish's networks of today (SFNNv16, `nnue_common.h:65` at
/// 762dd1da9).
pub const VERSION_SFNNV16: u32 = 0x6A44_8AFA;
/// HalfKAv2_hm's hash (`half_ka_v2_hm.h:74`).
pub const HALFKA_V2_HM_HASH: u32 = 0x7F23_4CB8;
/// FullThreats' hash (`full_threats.h:40` at 762dd1da9).
pub const FULL_THREATS_HASH: u32 = 0x2E6B_9D04;
/// PP_3Wide's hash (`pp_3wide.h:34` at 762dd1da9).
pub const PP_3WIDE_HASH: u32 = 0x86F2_B1DD;
/// Stockfish 15.1's L1 (and today's).
pub const L1: usize = 1024;
/// The feature set of Stockfish 15.1's networks, as this project names it.
pub const FEATURE_SET: &str = "halfka_v2_hm";
/// The feature set of Stockfish's networks of today, as this project names it (HalfKAv2_hm's
/// rows first; the file stores the threat and pair rows first).
pub const FEATURE_SET_SFNNV16: &str = "halfka_v2_hm+full_threats+pp_3wide";
/// HalfKAv2_hm's number of features.
pub const FEATURES: usize = 22_528;
/// FullThreats' number of features.
pub const THREAT_FEATURES: usize = 59_808;
/// PP_3Wide's number of features.
pub const PAIR_FEATURES: usize = 4_560;
/// Stockfish's PSQT buckets and layer stacks.
const BUCKETS: usize = 8;
/// One of the feature blocks Stockfish's formats store: its name here (the plugin block that
/// computes it index-exact), its size, the type the format stores its rows in, its hash in
/// Stockfish's code and its name in nnue-pytorch's `--features`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatBlock {
    /// The plugin block's name.
    pub name: &'static str,
    /// Its number of features.
    pub size: usize,
    /// How the format stores its first-layer rows: `i16` (LEB128-compressed in today's format)
    /// or raw `i8` (Stockfish's `threatAndPpWeights`).
    pub weight_type: WeightType,
    /// Its hash (the feature set's class `HashValue`).
    pub hash: u32,
    /// nnue-pytorch's name for it (9f72946, `model/modules/features`).
    pub trainer_name: &'static str,
}

/// HalfKAv2_hm (nnue-pytorch trains it with its factorizer, `HalfKAv2_hm^`, folded at export).
pub const HALFKA_V2_HM: FormatBlock = FormatBlock {
    name: "halfka_v2_hm",
    size: FEATURES,
    weight_type: WeightType::I16,
    hash: HALFKA_V2_HM_HASH,
    trainer_name: "HalfKAv2_hm^",
};

/// FullThreats.
pub const FULL_THREATS: FormatBlock = FormatBlock {
    name: "full_threats",
    size: THREAT_FEATURES,
    weight_type: WeightType::I8,
    hash: FULL_THREATS_HASH,
    trainer_name: "Full_Threats",
};

/// PP_3Wide.
pub const PP_3WIDE: FormatBlock = FormatBlock {
    name: "pp_3wide",
    size: PAIR_FEATURES,
    weight_type: WeightType::I8,
    hash: PP_3WIDE_HASH,
    trainer_name: "PP_3Wide",
};

/// The blocks in this project's order: its feature sets list HalfKAv2_hm's rows first, then the
/// threats' and the pairs' ([`FEATURE_SET_SFNNV16`]).
const PROJECT_ORDER: [FormatBlock; 3] = [HALFKA_V2_HM, FULL_THREATS, PP_3WIDE];

/// The order today's format stores the blocks in: Stockfish's (threats, pairs, HalfKAv2_hm),
/// which is also nnue-pytorch's default `--features Full_Threats+PP_3Wide+HalfKAv2_hm^`.
const FILE_ORDER: [FormatBlock; 3] = [FULL_THREATS, PP_3WIDE, HALFKA_V2_HM];

/// Which of Stockfish's feature blocks a file holds, in the file's order. 15.1's format holds
/// HalfKAv2_hm alone. Today's holds any of the three, each at most once, in the order of its
/// feature transformer's hash (Stockfish's `combine_hash` of the blocks' hashes): Stockfish's
/// own networks all three as threats, pairs, HalfKAv2_hm; nnue-pytorch writes whatever its
/// `--features` names (HalfKAv2_hm^ alone, say), in that order. The network a file makes holds
/// the same blocks in this project's order ([`BlockSet::feature_set`]); written back, they go
/// in Stockfish's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSet {
    file_order: Vec<FormatBlock>,
}

impl BlockSet {
    /// The feature set of `generation`'s own networks (15.1's HalfKAv2_hm; today's three).
    pub fn own(generation: Generation) -> BlockSet {
        let file_order = match generation {
            Generation::Sfnnv5 => vec![HALFKA_V2_HM],
            Generation::Sfnnv16 => FILE_ORDER.to_vec(),
        };
        BlockSet { file_order }
    }

    /// Every block set a file of `generation` may hold: the own one first, then (today's) every
    /// other order of every non-empty subset.
    fn possible(generation: Generation) -> Vec<BlockSet> {
        /// Every non-empty sequence of distinct blocks of `from`.
        fn sequences(from: &[FormatBlock]) -> Vec<Vec<FormatBlock>> {
            let mut all = Vec::new();
            for (i, &first) in from.iter().enumerate() {
                let rest: Vec<FormatBlock> = [&from[..i], &from[i + 1..]].concat();
                all.push(vec![first]);
                all.extend(
                    sequences(&rest)
                        .into_iter()
                        .map(|t| [vec![first], t].concat()),
                );
            }
            all
        }
        let own = BlockSet::own(generation);
        let others = match generation {
            Generation::Sfnnv5 => Vec::new(),
            Generation::Sfnnv16 => sequences(&FILE_ORDER),
        };
        std::iter::once(own.clone())
            .chain(
                others
                    .into_iter()
                    .map(|file_order| BlockSet { file_order })
                    .filter(|set| *set != own),
            )
            .collect()
    }

    /// The set of today's format whose blocks, in this project's order, are named `names`
    /// (`["halfka_v2_hm", "full_threats"]`, say), in Stockfish's file order; `None` unless the
    /// names are some of its blocks, each once, in this project's order.
    pub fn of_names(names: &[&str]) -> Option<BlockSet> {
        let in_project_order: Vec<&str> = PROJECT_ORDER
            .iter()
            .map(|b| b.name)
            .filter(|n| names.contains(n))
            .collect();
        (!names.is_empty() && names == in_project_order.as_slice()).then(|| BlockSet {
            file_order: FILE_ORDER
                .iter()
                .filter(|b| names.contains(&b.name))
                .copied()
                .collect(),
        })
    }

    /// The set a network of `generation` stores, from its blocks' names, or why none.
    pub fn of_network(generation: Generation, net: &Network) -> Result<BlockSet, NotStockfish> {
        let names: Vec<&str> = net.blocks().iter().map(|b| b.name.as_str()).collect();
        let own = BlockSet::own(generation);
        BlockSet::of_names(&names)
            .filter(|set| set.file_order.iter().all(|b| own.file_order.contains(b)))
            .ok_or_else(|| {
                let blocks: Vec<&str> = own.project_order().iter().map(|b| b.name).collect();
                NotStockfish::from(format!(
                    "Stockfish's {} format holds {}; this network has {}",
                    generation.name(),
                    match generation {
                        Generation::Sfnnv5 => format!("the feature set {}", HALFKA_V2_HM.name),
                        Generation::Sfnnv16 => format!(
                            "a feature set of some of the blocks {}, in this order (its own set all three)",
                            blocks.join(", ")
                        ),
                    },
                    net.feature_set()
                ))
            })
    }

    /// The blocks in the file's order.
    pub fn file_order(&self) -> &[FormatBlock] {
        &self.file_order
    }

    /// The blocks in this project's order (the network's rows).
    pub fn project_order(&self) -> Vec<FormatBlock> {
        PROJECT_ORDER
            .iter()
            .filter(|b| self.file_order.contains(b))
            .copied()
            .collect()
    }

    /// The feature set's name here (`halfka_v2_hm+full_threats+pp_3wide`).
    pub fn feature_set(&self) -> String {
        self.project_order()
            .iter()
            .map(|b| b.name)
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The name nnue-pytorch's `--features` gives the same blocks in the file's order.
    pub fn trainer_name(&self) -> String {
        self.file_order
            .iter()
            .map(|b| b.trainer_name)
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The number of features.
    pub fn features(&self) -> usize {
        self.file_order.iter().map(|b| b.size).sum()
    }

    /// The feature transformer's hash at width `l1`: the blocks' hashes combined in the file's
    /// order (one block's is its own), xor 2·L1.
    pub fn hash(&self, l1: usize) -> u32 {
        let hashes: Vec<u32> = self.file_order.iter().map(|b| b.hash).collect();
        combine_hash(&hashes) ^ (2 * l1 as u32)
    }

    /// The identities of the blocks from the loaded plugins' `features` (the set of
    /// [`feature_set`](Self::feature_set)), each with the weight type the format stores its
    /// rows in.
    pub fn block_infos(&self, features: &FeatureSet) -> Vec<BlockInfo> {
        BlockInfo::of_set(features)
            .into_iter()
            .zip(self.project_order())
            .map(|(info, block)| BlockInfo {
                weight_type: block.weight_type,
                ..info
            })
            .collect()
    }

    /// The blocks' identities without plugins (layout identities 0): what checking a file's
    /// structure needs, before it is bound.
    pub fn unbound_block_infos(&self) -> Vec<BlockInfo> {
        self.project_order()
            .iter()
            .map(|b| BlockInfo {
                name: b.name.into(),
                size: b.size as u32,
                layout_version: 0,
                layout_id: 0,
                weight_type: b.weight_type,
            })
            .collect()
    }

    /// Where each block's rows start among the network's (this project's order), in features.
    fn row_offset(&self, block: FormatBlock) -> usize {
        self.project_order()
            .iter()
            .take_while(|&&b| b != block)
            .map(|b| b.size)
            .sum()
    }
}
/// The description nnue-pytorch writes (`serialize.py` at 5225117, `DEFAULT_DESCRIPTION`), which
/// Stockfish 15.1's own network carries.
pub const NNUE_PYTORCH_DESCRIPTION: &str =
    "Network trained with the https://github.com/glinscott/nnue-pytorch trainer.";
/// Longest description accepted (Stockfish reads any; a bound keeps a corrupt length from
/// asking for gigabytes).
pub const MAX_DESCRIPTION: usize = 1 << 20;
/// The widest hidden layer searched for in a stack hash.
const MAX_STACK_WIDTH: usize = 256;

/// The hash step of an affine layer with `outputs` outputs (`affine_transform.h:213-219`).
fn affine_hash(prev: u32, outputs: u32) -> u32 {
    0xCC03_DAE4_u32.wrapping_add(outputs) ^ (prev >> 1) ^ (prev << 31)
}

/// The hash step of a clipped ReLU (`clipped_relu.h:45-49`); the squared one is not hashed.
fn relu_hash(prev: u32) -> u32 {
    0x538D_24C7_u32.wrapping_add(prev)
}

/// Stockfish's `FeatureTransformer::combine_hash`: rotate left by one, xor the next.
fn combine_hash(hashes: &[u32]) -> u32 {
    hashes.iter().fold(0, |h, &c| h.rotate_left(1) ^ c)
}

/// The two generations of Stockfish's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// SFNNv5 (Stockfish 15.1) and its relatives: HalfKAv2_hm, `fc_0` with a skip output.
    Sfnnv5,
    /// SFNNv16 (today): HalfKAv2_hm, FullThreats and PP_3Wide; dual activations, dense `fc_2`.
    Sfnnv16,
}

impl Generation {
    /// The units of a network of this generation's files, which the format implies: Stockfish
    /// evaluates in them.
    pub fn units(self) -> ScoreUnits {
        match self {
            Generation::Sfnnv5 => ScoreUnits::Stockfish,
            Generation::Sfnnv16 => ScoreUnits::StockfishWdl,
        }
    }

    /// The file version.
    pub fn version(self) -> u32 {
        match self {
            Generation::Sfnnv5 => VERSION,
            Generation::Sfnnv16 => VERSION_SFNNV16,
        }
    }

    /// The shape of this generation's layer stacks with first hidden width `l2` (without
    /// 15.1's skip output) and second `l3`.
    pub fn arch(self, l2: usize, l3: usize) -> Arch {
        let mut arch = match self {
            Generation::Sfnnv5 => Arch::sfnnv5(),
            Generation::Sfnnv16 => Arch::sfnnv16(),
        };
        arch.hidden[0].width = l2;
        arch.hidden[1].width = l3;
        arch
    }

    /// The shape of Stockfish's own networks of this generation (15 and 32, or 32 and 32).
    pub fn own_arch(self) -> Arch {
        match self {
            Generation::Sfnnv5 => Arch::sfnnv5(),
            Generation::Sfnnv16 => Arch::sfnnv16(),
        }
    }

    /// The feature set of this generation's own networks, as this project names it.
    pub fn feature_set(self) -> &'static str {
        match self {
            Generation::Sfnnv5 => FEATURE_SET,
            Generation::Sfnnv16 => FEATURE_SET_SFNNV16,
        }
    }

    /// The name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Generation::Sfnnv5 => "SFNNv5 (Stockfish 15.1's)",
            Generation::Sfnnv16 => "SFNNv16 (Stockfish's of today)",
        }
    }

    /// The blocks this generation's format stores as `i8` rows (none for 15.1's).
    pub fn i8_block_names(self) -> Vec<&'static str> {
        BlockSet::own(self)
            .project_order()
            .iter()
            .filter(|b| b.weight_type == WeightType::I8)
            .map(|b| b.name)
            .collect()
    }

    /// The generation whose layer stacks `arch` is (at any widths), if any.
    pub fn of_arch(arch: &Arch) -> Option<Generation> {
        let widths = (arch.hidden.len() == 2).then(|| (arch.hidden[0].width, arch.hidden[1].width));
        [Generation::Sfnnv5, Generation::Sfnnv16]
            .into_iter()
            .find(|g| widths.is_some_and(|(l2, l3)| *arch == g.arch(l2, l3)))
    }

    /// The shape preset of this generation.
    pub fn preset(self) -> crate::shape::Preset {
        match self {
            Generation::Sfnnv5 => crate::shape::Preset::Sfnnv5,
            Generation::Sfnnv16 => crate::shape::Preset::Sfnnv16,
        }
    }
}

/// The layer stack's hash of `arch` at width `l1` (`nnue_architecture.h`'s
/// `get_hash_value`): from `0xEC42E90D ^ 2·L1`, each hidden layer's affine step and one clipped
/// ReLU, then the output layer's.
pub fn stack_hash_of(arch: &Arch, l1: usize) -> u32 {
    let layers = arch.layers(l1);
    let mut h = 0xEC42_E90D_u32 ^ (2 * l1 as u32);
    for &(_, outputs) in &layers[..layers.len() - 1] {
        h = relu_hash(affine_hash(h, outputs as u32));
    }
    affine_hash(h, 1)
}

/// Stockfish 15.1's feature transformer's hash at width `l1`.
pub fn feature_transformer_hash(l1: usize) -> u32 {
    BlockSet::own(Generation::Sfnnv5).hash(l1)
}

/// Stockfish 15.1's layer stack's hash at width `l1`.
pub fn stack_hash(l1: usize) -> u32 {
    stack_hash_of(&Arch::sfnnv5(), l1)
}

/// Stockfish 15.1's network hash at width `l1`.
pub fn network_hash(l1: usize) -> u32 {
    feature_transformer_hash(l1) ^ stack_hash(l1)
}

/// What a Stockfish file holds, from its header and its feature transformer's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The format generation (from the version).
    pub generation: Generation,
    /// The feature blocks, in the file's order (from the feature transformer's hash).
    pub blocks: BlockSet,
    /// The first layer's width.
    pub l1: usize,
    /// The layer stacks' shapes whose hash the header's is, Stockfish's own widths first:
    /// which one the file holds, the stacks' bytes tell.
    pub candidates: Vec<Arch>,
    /// Whether the first layer's `i16`/`i32` tensors are LEB128-compressed (always today;
    /// Stockfish 16 to 17.1 for SFNNv5's format).
    pub compressed: bool,
    /// The description.
    pub description: String,
    /// Where the feature transformer's tensors start (after its hash).
    pub tensors_at: usize,
}

impl Layout {
    /// The layout `bytes` declare (they may be only the file's first bytes: the header, the
    /// feature transformer's hash and the LEB128 magic after it are enough).
    pub fn of_header(bytes: &[u8]) -> Result<Layout, DecodeError> {
        let truncated = || DecodeError::TruncatedHeader { len: bytes.len() };
        if bytes.len() < 12 {
            return Err(truncated());
        }
        let version = le_u32(bytes, 0);
        let generation = match version {
            VERSION => Generation::Sfnnv5,
            VERSION_SFNNV16 => Generation::Sfnnv16,
            VERSION_HALFKP => {
                return Err(DecodeError::Stockfish(format!(
                    "it is a Stockfish 12 or 13 network (HalfKP, version 0x{VERSION_HALFKP:08X}), which this build does not read: it reads SFNNv5's format (0x{VERSION:08X}) and SFNNv16's (0x{VERSION_SFNNV16:08X})"
                )));
            }
            v => {
                return Err(DecodeError::Stockfish(format!(
                    "its version 0x{v:08X} is neither SFNNv5's 0x{VERSION:08X} nor SFNNv16's 0x{VERSION_SFNNV16:08X}"
                )));
            }
        };
        let hash = le_u32(bytes, 4);
        let len = le_u32(bytes, 8) as usize;
        if len > MAX_DESCRIPTION {
            return Err(DecodeError::Stockfish(format!(
                "its description is said to be {len} bytes long, more than the {MAX_DESCRIPTION} accepted: the file is corrupt"
            )));
        }
        let ft_at = 12 + len;
        if bytes.len() < ft_at + 4 + leb128::MAGIC.len() {
            return Err(truncated());
        }
        let description = String::from_utf8_lossy(&bytes[12..ft_at]).into_owned();
        let ft_hash = le_u32(bytes, ft_at);
        // The blocks and the width whose hash it is (2·L1 changes only bits the blocks' hashes
        // combined leave to it).
        let found = BlockSet::possible(generation).into_iter().find_map(|set| {
            let width = (ft_hash ^ set.hash(0)) as usize / 2;
            (width > 0 && width.is_multiple_of(64) && width <= MAX_L1 && set.hash(width) == ft_hash)
                .then_some((set, width))
        });
        let (blocks, l1) = found.ok_or_else(|| {
                let threats = (ft_hash ^ FULL_THREATS_HASH) / 2;
                let other = match generation {
                    Generation::Sfnnv5 if threats > 0 && threats as usize <= MAX_L1 => format!(
                        "FullThreats beside HalfKAv2_hm at L1 = {threats} (SFNNv10 to SFNNv15, Stockfish's networks of 2025-11 to 2026-05, whose format this build does not read)"
                    ),
                    Generation::Sfnnv5 => "another feature set".to_string(),
                    Generation::Sfnnv16 => "another combination of feature sets".to_string(),
                };
                let sets = match generation {
                    Generation::Sfnnv5 => HALFKA_V2_HM.trainer_name.to_string(),
                    Generation::Sfnnv16 => format!(
                        "any sequence of {}",
                        FILE_ORDER.map(|b| b.trainer_name).join(", ")
                    ),
                };
                DecodeError::Stockfish(format!(
                    "its feature transformer's hash 0x{ft_hash:08X} is not that of {} ({sets}) at any L1 (a multiple of 64 up to {MAX_L1}): it holds {other}",
                    generation.name()
                ))
            })?;
        let stack = hash ^ ft_hash;
        let own = generation.own_arch();
        // The chain of two hidden layers of `o0` and `o1` outputs, computed without building
        // each shape (65,536 pairs).
        let chain = |o0: usize, o1: usize| {
            let h = 0xEC42_E90D_u32 ^ (2 * l1 as u32);
            let h = relu_hash(affine_hash(h, o0 as u32));
            affine_hash(relu_hash(affine_hash(h, o1 as u32)), 1)
        };
        let skip = usize::from(generation == Generation::Sfnnv5);
        let candidates: Vec<Arch> = std::iter::once(own.clone())
            .chain(
                (1..=MAX_STACK_WIDTH)
                    .flat_map(|l2| (1..=MAX_STACK_WIDTH).map(move |l3| (l2, l3)))
                    .filter(|&(l2, l3)| chain(l2 + skip, l3) == stack)
                    .map(|(l2, l3)| generation.arch(l2, l3))
                    .filter(|arch| *arch != own),
            )
            .filter(|arch| arch.check(l1).is_ok() && stack_hash_of(arch, l1) == stack)
            .collect();
        if candidates.is_empty() {
            return Err(DecodeError::Stockfish(format!(
                "its architecture hash 0x{hash:08X} gives the layer-stack hash 0x{stack:08X}, which is not {}'s layer stack at L1 = {l1} with any hidden widths up to {MAX_STACK_WIDTH}",
                generation.name()
            )));
        }
        let magic_at = ft_at + 4;
        let compressed = &bytes[magic_at..magic_at + leb128::MAGIC.len()] == leb128::MAGIC;
        if generation == Generation::Sfnnv16 && !compressed {
            return Err(DecodeError::Stockfish(
                "its feature transformer's biases lack the COMPRESSED_LEB128 magic that SFNNv16 files have".into(),
            ));
        }
        Ok(Layout {
            generation,
            blocks,
            l1,
            candidates,
            compressed,
            description,
            tensors_at: ft_at + 4,
        })
    }

    /// N, L1 and the first hidden width of the first candidate (for messages).
    pub fn sizes(&self) -> [u64; 3] {
        self.sizes_of(&self.candidates[0])
    }

    /// N, L1 and the first hidden width of `arch`.
    fn sizes_of(&self, arch: &Arch) -> [u64; 3] {
        let n = self.blocks.features();
        [n as u64, self.l1 as u64, arch.hidden[0].width as u64]
    }

    /// Bytes of one layer stack of `arch`.
    fn stack_bytes(&self, arch: &Arch) -> usize {
        4 + arch
            .layers(self.l1)
            .iter()
            .map(|&(i, o)| 4 * o + o * i.next_multiple_of(32))
            .sum::<usize>()
    }

    /// The length of a file of this layout with stacks of `arch`: exact for raw tensors, at most
    /// this with compressed ones.
    fn length_with(&self, arch: &Arch) -> u64 {
        self.ft_length() + (BUCKETS * self.stack_bytes(arch)) as u64
    }

    /// The most bytes a file of this layout may take.
    fn max_length(&self) -> u64 {
        self.candidates
            .iter()
            .map(|a| self.length_with(a))
            .max()
            .expect("at least one candidate")
    }

    /// Where the layer stacks start: exact for raw tensors, at most this with compressed ones.
    fn ft_length(&self) -> u64 {
        let l1 = self.l1;
        let ft = match (self.generation, self.compressed) {
            (Generation::Sfnnv5, false) => (2 * l1 + 2 * FEATURES * l1 + 4 * FEATURES * 8) as u64,
            (Generation::Sfnnv5, true) => {
                leb128::max_bytes::<i16>(l1)
                    + leb128::max_bytes::<i16>(FEATURES * l1)
                    + leb128::max_bytes::<i32>(FEATURES * 8)
            }
            (Generation::Sfnnv16, _) => {
                let block = |b: &FormatBlock| {
                    let rows = match b.weight_type {
                        WeightType::I8 => (b.size * l1) as u64,
                        WeightType::I16 => leb128::max_bytes::<i16>(b.size * l1),
                    };
                    rows + leb128::max_bytes::<i32>(b.size * BUCKETS)
                };
                leb128::max_bytes::<i16>(l1)
                    + self.blocks.file_order().iter().map(block).sum::<u64>()
            }
        };
        self.tensors_at as u64 + ft
    }
}

/// Which Stockfish loads a file of `generation` holding `blocks` at width `l1` with stacks of
/// `arch` (`compressed`: LEB128 tensors in SFNNv5's format), as a clause: its binary is
/// compiled for one feature set and one shape and reads no other.
pub fn loaded_by(
    generation: Generation,
    blocks: &BlockSet,
    l1: usize,
    arch: &Arch,
    compressed: bool,
) -> String {
    match generation {
        _ if *blocks != BlockSet::own(generation) => format!(
            "no Stockfish binary loads it (Stockfish reads its own feature set alone in this format, {}; this network holds {}: nnue-pytorch reads it with --features {})",
            BlockSet::own(generation).trainer_name(),
            blocks.feature_set(),
            blocks.trainer_name()
        ),
        _ if l1 != L1 || *arch != generation.own_arch() => format!(
            "no Stockfish binary loads it as released (Stockfish is compiled for L1 1024 and {}'s hidden widths; this network has L1 {l1} and hidden widths {}, {})",
            generation.name(),
            arch.hidden[0].width,
            arch.hidden[1].width
        ),
        Generation::Sfnnv5 if compressed => {
            "Stockfish 16 to 17.1 load it (LEB128-compressed); Stockfish 15.1 does not".into()
        }
        Generation::Sfnnv5 => "Stockfish 15.1 loads it".into(),
        Generation::Sfnnv16 => {
            "Stockfish from f4bcd4040 (SFNNv16) to at least 762dd1da9 loads it".into()
        }
    }
}

fn le_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// Whether `bytes` start like a Stockfish network file (a known version).
pub fn is_stockfish(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && matches!(le_u32(bytes, 0), VERSION | VERSION_SFNNV16 | VERSION_HALFKP)
}

/// How long a Stockfish file must be, from its first bytes, and its sizes N, L1, L2: the exact
/// length (`true`) for raw tensors and one candidate shape, else the most it may be (`false`).
pub fn declared_length(prefix: &[u8]) -> Result<(u64, [u64; 3], bool), DecodeError> {
    let layout = Layout::of_header(prefix)?;
    let exact = !layout.compressed && layout.candidates.len() == 1;
    Ok((layout.max_length(), layout.sizes(), exact))
}

/// Reads the tensors of a file in order, naming the tensor a failure is in.
struct TensorReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    sizes: [u64; 3],
}

impl TensorReader<'_> {
    fn truncated(&self, at_least: usize) -> DecodeError {
        DecodeError::Truncated {
            len: self.bytes.len(),
            expected: at_least as u64,
            sizes: self.sizes,
        }
    }

    fn raw(&mut self, len: usize) -> Result<&[u8], DecodeError> {
        if self.bytes.len() - self.pos < len {
            return Err(self.truncated(self.pos + len));
        }
        let s = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(s)
    }

    fn compressed<T: leb128::Leb128Value>(
        &mut self,
        count: usize,
        what: &str,
    ) -> Result<Vec<T>, DecodeError> {
        let (values, used) =
            leb128::read::<T>(&self.bytes[self.pos..], count).map_err(|e| match e {
                Leb128Error::Truncated => self.truncated(self.pos + leb128::MAGIC.len() + 4),
                e => DecodeError::Stockfish(format!(
                    "its LEB128-compressed {what} at byte {} is corrupt: {e}",
                    self.pos
                )),
            })?;
        self.pos += used;
        Ok(values)
    }

    fn i16s(
        &mut self,
        count: usize,
        compressed: bool,
        what: &str,
    ) -> Result<Vec<i16>, DecodeError> {
        match compressed {
            true => self.compressed(count, what),
            false => self.raw(2 * count).map(i16s),
        }
    }

    fn i32s(
        &mut self,
        count: usize,
        compressed: bool,
        what: &str,
    ) -> Result<Vec<i32>, DecodeError> {
        match compressed {
            true => self.compressed(count, what),
            false => self.raw(4 * count).map(i32s),
        }
    }
}

/// Decodes the Stockfish network `bytes` of `layout` (theirs, [`Layout::of_header`]), `blocks`
/// the identities of its feature set's blocks ([`BlockSet::block_infos`]; the file stores
/// none): checks lengths, every compressed tensor and the stacks' hashes, then reads the tensors.
pub fn decode(
    bytes: &[u8],
    layout: &Layout,
    blocks: Vec<BlockInfo>,
) -> Result<Network, DecodeError> {
    let (l1, sizes) = (layout.l1, layout.sizes());
    let max = layout.max_length();
    if bytes.len() as u64 > max {
        return Err(DecodeError::TrailingBytes {
            len: bytes.len(),
            expected: max,
            sizes,
        });
    }
    let mut r = TensorReader {
        bytes,
        pos: layout.tensors_at,
        sizes,
    };
    let c = layout.compressed;
    let (b1, w1, psqt) = match layout.generation {
        Generation::Sfnnv5 => (
            r.i16s(l1, c, "biases")?,
            r.i16s(FEATURES * l1, c, "weights")?,
            r.i32s(FEATURES * BUCKETS, c, "PSQT weights")?,
        ),
        Generation::Sfnnv16 => {
            let b1 = r.i16s(l1, true, "biases")?;
            // Each block's rows and PSQT columns as the file stores them, then in this
            // project's order.
            let mut read = Vec::new();
            for block in layout.blocks.file_order() {
                let rows = match block.weight_type {
                    WeightType::I8 => r
                        .raw(block.size * l1)?
                        .iter()
                        .map(|&b| i16::from(b as i8))
                        .collect(),
                    WeightType::I16 => {
                        r.i16s(block.size * l1, true, &format!("{} weights", block.name))?
                    }
                };
                let psqt = r.i32s(
                    block.size * BUCKETS,
                    true,
                    &format!("{} PSQT weights", block.name),
                )?;
                read.push((*block, rows, psqt));
            }
            let (mut w1, mut psqt) = (Vec::new(), Vec::new());
            for block in layout.blocks.project_order() {
                let (_, rows, columns) = read
                    .iter_mut()
                    .find(|(b, _, _)| *b == block)
                    .expect("every block read");
                w1.append(rows);
                psqt.append(columns);
            }
            (b1, w1, psqt)
        }
    };
    // The candidate whose eight stacks take exactly the bytes left.
    let left = (bytes.len() - r.pos) as u64;
    let arch = layout
        .candidates
        .iter()
        .find(|a| (BUCKETS * layout.stack_bytes(a)) as u64 == left)
        .cloned()
        .ok_or_else(|| {
            let own = &layout.candidates[0];
            let expected = r.pos as u64 + (BUCKETS * layout.stack_bytes(own)) as u64;
            let sizes = layout.sizes_of(own);
            match (bytes.len() as u64) < expected {
                true => DecodeError::Truncated {
                    len: bytes.len(),
                    expected,
                    sizes,
                },
                false => DecodeError::TrailingBytes {
                    len: bytes.len(),
                    expected,
                    sizes,
                },
            }
        })?;
    let layers = arch.layers(l1);
    let mut stacks = Vec::with_capacity(BUCKETS);
    let expected_hash = stack_hash_of(&arch, l1);
    for k in 0..BUCKETS {
        let hash = le_u32(r.raw(4)?, 0);
        if hash != expected_hash {
            return Err(DecodeError::Stockfish(format!(
                "the hash 0x{hash:08X} of its layer stack {k} is not {}'s 0x{expected_hash:08X}",
                layout.generation.name()
            )));
        }
        let mut stack = Vec::with_capacity(layers.len());
        for &(inputs, outputs) in &layers {
            let padded = inputs.next_multiple_of(32);
            let biases = i32s(r.raw(4 * outputs)?);
            let raw = r.raw(padded * outputs)?;
            let weights = raw
                .chunks_exact(padded)
                .flat_map(|row| row[..inputs].iter().map(|&b| b as i8))
                .collect();
            stack.push(LayerParts { weights, biases });
        }
        stacks.push(stack);
    }
    if r.pos != bytes.len() {
        return Err(DecodeError::TrailingBytes {
            len: bytes.len(),
            expected: r.pos as u64,
            sizes,
        });
    }
    Ok(Network::from_parts(NetworkParts {
        feature_set: layout.blocks.feature_set(),
        blocks,
        l1,
        arch,
        quantization: Quantization::THESIS,
        w1,
        b1,
        psqt,
        stacks,
        units: layout.generation.units(),
    })?)
}

/// The value of an `--i8-blocks` list that asks for no `i8` block (an empty list asks for the
/// shape's own: [`i8_blocks_for`]).
pub const NO_I8_BLOCKS: &str = "none";

/// The blocks whose first-layer rows a network of shape `arch` stores as `i8`: those `named`;
/// when none are named, those Stockfish's format stores as `i8` (FullThreats, PP_3Wide) where
/// `arch` is today's shape (SFNNv16 at any widths), so that such a network converts to
/// Stockfish's format; `[none]` for none. One rule for `trainer train` and `host net random`.
pub fn i8_blocks_for(arch: &Arch, named: &[String]) -> Vec<String> {
    if named.len() == 1 && named[0] == NO_I8_BLOCKS {
        return Vec::new();
    }
    if !named.is_empty() {
        return named.to_vec();
    }
    Generation::of_arch(arch).map_or_else(Vec::new, |g| {
        g.i8_block_names().into_iter().map(String::from).collect()
    })
}

/// The format generation that holds `net`, or why none does.
pub fn generation_of(net: &Network) -> Result<Generation, NotStockfish> {
    stored_as(net).map(|(generation, _)| generation)
}

/// The format generation and the blocks, in the file's order, that a Stockfish file of `net`
/// holds, or why none can.
pub fn stored_as(net: &Network) -> Result<(Generation, BlockSet), NotStockfish> {
    let arch = net.arch();
    let generation = Generation::of_arch(arch).ok_or_else(|| {
            NotStockfish::from(format!(
                "Stockfish's formats hold the sfnnv5 and sfnnv16 shapes (at any widths); this network's shape is '{arch}'"
            ))
        })?;
    let blocks = BlockSet::of_network(generation, net)?;
    let types: Vec<WeightType> = net.blocks().iter().map(|b| b.weight_type).collect();
    let wanted: Vec<WeightType> = blocks
        .project_order()
        .iter()
        .map(|b| b.weight_type)
        .collect();
    if types != wanted {
        let i8_names: Vec<&str> = blocks
            .project_order()
            .iter()
            .filter(|b| b.weight_type == WeightType::I8)
            .map(|b| b.name)
            .collect();
        let hint = match i8_names.is_empty() {
            true => format!("train it with `--i8-blocks {NO_I8_BLOCKS}`"),
            false => format!(
                "train it with `--i8-blocks {}`, the default of `trainer train --arch {}`",
                i8_names.join(","),
                generation.preset()
            ),
        };
        return Err(format!(
            "Stockfish's {} format stores the first layer's rows as {}; this network's are {} ({hint})",
            generation.name(),
            join(&wanted),
            join(&types),
        )
        .into());
    }
    if !net.l1().is_multiple_of(64) || net.l1() > MAX_L1 {
        return Err(format!("L1 {} is not a multiple of 64", net.l1()).into());
    }
    Ok((generation, blocks))
}

fn join(types: &[WeightType]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Stockfish file of `net` with `description`, in the generation its shape is: SFNNv5's
/// with raw tensors (what Stockfish 15.1 reads), or SFNNv16's with LEB128 (what Stockfish of
/// today reads); an error (a clause) for another shape ([`generation_of`]).
pub fn encode(net: &Network, description: &str) -> Result<Vec<u8>, EncodeError> {
    let (generation, blocks) = stored_as(net)?;
    Ok(encode_in_order(net, description, generation, &blocks))
}

/// The file of `net` (some of `blocks`' blocks in this project's order, checked by the caller)
/// with its blocks stored in `blocks`' order.
fn encode_in_order(
    net: &Network,
    description: &str,
    generation: Generation,
    blocks: &BlockSet,
) -> Vec<u8> {
    let (l1, arch) = (net.l1(), net.arch());
    let mut out = Vec::new();
    let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let ft_hash = blocks.hash(l1);
    let stack_hash = stack_hash_of(arch, l1);
    u32s(&mut out, generation.version());
    u32s(&mut out, ft_hash ^ stack_hash);
    u32s(&mut out, description.len() as u32);
    out.extend_from_slice(description.as_bytes());
    u32s(&mut out, ft_hash);
    let w1 = net.w1().to_values();
    let psqt = net.psqt();
    match generation {
        Generation::Sfnnv5 => {
            out.reserve(2 * w1.len() + 4 * psqt.len());
            net.b1()
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            w1.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            psqt.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        Generation::Sfnnv16 => {
            leb128::write(net.b1(), &mut out);
            for block in blocks.file_order() {
                let first = blocks.row_offset(*block);
                let rows = &w1[first * l1..(first + block.size) * l1];
                match block.weight_type {
                    WeightType::I8 => out.extend(rows.iter().map(|&w| w as i8 as u8)),
                    WeightType::I16 => leb128::write(rows, &mut out),
                }
                leb128::write(
                    &psqt[first * BUCKETS..(first + block.size) * BUCKETS],
                    &mut out,
                );
            }
        }
    }
    for stack in net.stacks() {
        u32s(&mut out, stack_hash);
        for layer in stack {
            layer
                .biases()
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            let padded = layer.inputs().next_multiple_of(32);
            for row in layer.weights().chunks_exact(layer.inputs()) {
                out.extend(row.iter().map(|&w| w as u8));
                out.resize(out.len() + padded - layer.inputs(), 0);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn todays_shape_keeps_stockfishs_i8_blocks_unless_told_otherwise() {
        let named = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let today = Arch::sfnnv16();
        assert_eq!(
            i8_blocks_for(&today, &[]),
            named(&["full_threats", "pp_3wide"])
        );
        let mut wider = Generation::Sfnnv16.arch(64, 32);
        assert_eq!(i8_blocks_for(&wider, &[]).len(), 2);
        assert!(i8_blocks_for(&today, &named(&[NO_I8_BLOCKS])).is_empty());
        assert_eq!(
            i8_blocks_for(&today, &named(&["full_threats"])),
            named(&["full_threats"])
        );
        assert!(i8_blocks_for(&Arch::sfnnv5(), &[]).is_empty());
        assert!(i8_blocks_for(&Arch::thesis(32), &[]).is_empty());
        wider.stacks = 1;
        assert!(i8_blocks_for(&wider, &[]).is_empty(), "not today's shape");
        assert_eq!(Generation::Sfnnv16.preset().name(), "sfnnv16");
        for g in [Generation::Sfnnv5, Generation::Sfnnv16] {
            assert_eq!(Generation::of_arch(&g.preset().arch(32)), Some(g));
        }
    }

    #[test]
    fn hashes_are_stockfish_15_1s() {
        assert_eq!(feature_transformer_hash(1024), 0x7F23_44B8);
        assert_eq!(stack_hash(1024), 0x6333_6A4A);
        assert_eq!(network_hash(1024), 0x1C10_2EF2);
        let layout = Layout {
            generation: Generation::Sfnnv5,
            blocks: BlockSet::own(Generation::Sfnnv5),
            l1: 1024,
            candidates: vec![Arch::sfnnv5()],
            compressed: false,
            description: String::new(),
            tensors_at: 12 + 75 + 4,
        };
        assert_eq!(layout.stack_bytes(&Arch::sfnnv5()), 17_640);
        assert_eq!(layout.max_length(), 47_001_499);
    }

    #[test]
    fn hashes_are_sfnnv16s() {
        let own = BlockSet::own(Generation::Sfnnv16);
        assert_eq!(own.hash(1024), 0xCB68_5313);
        assert_eq!(stack_hash_of(&Arch::sfnnv16(), 1024), 0x6333_7116);
        assert_eq!(
            own.hash(1024) ^ stack_hash_of(&Arch::sfnnv16(), 1024),
            0xA85B_2205
        );
        assert_eq!(own.trainer_name(), "Full_Threats+PP_3Wide+HalfKAv2_hm^");
        assert_eq!(own.feature_set(), FEATURE_SET_SFNNV16);
    }

    #[test]
    fn todays_format_holds_any_sequence_of_its_blocks_each_with_its_own_hash() {
        let sets = BlockSet::possible(Generation::Sfnnv16);
        assert_eq!(
            sets.len(),
            3 + 6 + 6,
            "every non-empty sequence of distinct blocks"
        );
        assert_eq!(sets[0], BlockSet::own(Generation::Sfnnv16));
        let mut hashes: Vec<u32> = sets.iter().map(|s| s.hash(0)).collect();
        hashes.sort();
        hashes.dedup();
        assert_eq!(hashes.len(), sets.len(), "no two sequences hash alike");
        assert_eq!(
            BlockSet::possible(Generation::Sfnnv5),
            [BlockSet::own(Generation::Sfnnv5)]
        );
        // One block's hash is its own; nnue-pytorch's names follow the file's order.
        let alone = BlockSet::of_names(&["halfka_v2_hm"]).unwrap();
        assert_eq!(alone.hash(1024), HALFKA_V2_HM_HASH ^ 2048);
        assert_eq!(alone.trainer_name(), "HalfKAv2_hm^");
        let two = BlockSet::of_names(&["halfka_v2_hm", "pp_3wide"]).unwrap();
        assert_eq!(two.trainer_name(), "PP_3Wide+HalfKAv2_hm^");
        assert_eq!(two.feature_set(), "halfka_v2_hm+pp_3wide");
        assert_eq!(two.features(), FEATURES + PAIR_FEATURES);
        // Only some of the blocks, each once, in this project's order.
        assert!(BlockSet::of_names(&["pp_3wide", "halfka_v2_hm"]).is_none());
        assert!(BlockSet::of_names(&["halfka_v2_hm", "halfka_v2_hm"]).is_none());
        assert!(BlockSet::of_names(&["all"]).is_none());
        assert!(BlockSet::of_names(&[]).is_none());
    }

    #[test]
    fn a_file_in_any_order_of_its_blocks_reads_as_the_same_network() {
        use crate::network::{LayerParts, NetworkParts};
        let blocks = BlockSet::of_names(&["halfka_v2_hm", "full_threats"]).unwrap();
        let (l1, arch) = (64, Arch::sfnnv16());
        let n = blocks.features();
        let parts = NetworkParts {
            feature_set: blocks.feature_set(),
            blocks: blocks.unbound_block_infos(),
            l1,
            arch: arch.clone(),
            quantization: Quantization::THESIS,
            w1: (0..n * l1).map(|i| (i % 251) as i16 - 125).collect(),
            b1: (0..l1).map(|i| i as i16).collect(),
            psqt: (0..n * BUCKETS).map(|i| (i % 1009) as i32 - 500).collect(),
            stacks: (0..arch.stacks)
                .map(|s| {
                    arch.layers(l1)
                        .iter()
                        .map(|&(inputs, outputs)| LayerParts {
                            weights: (0..inputs * outputs)
                                .map(|i| (((i + s) % 200) as i32 - 100) as i8)
                                .collect(),
                            biases: (0..outputs).map(|i| i as i32 - 7).collect(),
                        })
                        .collect()
                })
                .collect(),
            units: Generation::Sfnnv16.units(),
        };
        let net = Network::from_parts(parts).unwrap();
        let canonical = encode(&net, "x").unwrap();
        let reversed = BlockSet {
            file_order: vec![HALFKA_V2_HM, FULL_THREATS],
        };
        let other = encode_in_order(&net, "x", Generation::Sfnnv16, &reversed);
        assert_ne!(canonical, other);
        let read = |bytes: &[u8]| {
            let layout = Layout::of_header(bytes).unwrap();
            let infos = layout.blocks.unbound_block_infos();
            (
                layout.blocks.clone(),
                decode(bytes, &layout, infos).unwrap(),
            )
        };
        let (set_a, a) = read(&canonical);
        let (set_b, b) = read(&other);
        assert_eq!(set_a, blocks);
        assert_eq!(set_b, reversed);
        assert_eq!(set_b.feature_set(), "halfka_v2_hm+full_threats");
        assert_eq!(a.w1().to_values(), b.w1().to_values());
        assert_eq!(a.psqt(), b.psqt());
        assert_eq!(
            encode(&b, "x").unwrap(),
            canonical,
            "written back in Stockfish's order"
        );
    }

    #[test]
    fn other_widths_and_unknown_architectures_are_told_apart() {
        let header = |version: u32, hash: u32, ft: u32| {
            let mut b = Vec::new();
            for v in [version, hash, 0, ft] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(leb128::MAGIC);
            b
        };
        // nnue-pytorch's SFNNv5 at L1 256: read by its hash chain.
        let ft = feature_transformer_hash(256);
        let l = Layout::of_header(&header(VERSION, ft ^ stack_hash(256), ft)).unwrap();
        assert_eq!((l.l1, l.compressed), (256, true));
        assert_eq!(l.candidates[0], Arch::sfnnv5());
        assert!(
            loaded_by(l.generation, &l.blocks, l.l1, &l.candidates[0], true)
                .contains("no Stockfish binary")
        );
        let e = Layout::of_header(&header(VERSION, 0x1234, ft))
            .unwrap_err()
            .to_string();
        assert!(e.contains("layer-stack hash"), "{e}");
        let e = Layout::of_header(&header(VERSION, 0, 0x1234_5678))
            .unwrap_err()
            .to_string();
        assert!(e.contains("feature transformer's hash"), "{e}");
        let e = Layout::of_header(&header(0x7AF3_2F21, 0, 0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("version 0x7AF32F21"), "{e}");
    }
}
