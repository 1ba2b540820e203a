//! The seeded random networks of today's format on which Stockfish's own code computed host's
//! reference vectors (`host/tests/data/stockfish-sfnnv16/`): every parameter a SplitMix64
//! draw (Steele, Lea and Flood's generator, as Vigna's `splitmix64.c` gives it), in the order
//! and ranges below. Stockfish's writer wrote them; [`encode`](super::encode) writes the same
//! bytes from [`seeded_random_parts`], so the vectors' networks need not be committed (90 MB
//! each) and the speed comparison's networks can be made from the repository alone
//! (`host net reference`).

use super::{BlockSet, FEATURES, Generation, L1, PAIR_FEATURES, THREAT_FEATURES};
use crate::network::{LayerParts, NetworkParts, Quantization};
use crate::shape::Arch;
use plugin_api::FeatureSet;

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment, each output the state
/// mixed by two xor-shift-multiply rounds.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in `lo..=hi` (`lo + next() mod (hi − lo + 1)`), times `scale / 4`, truncating
    /// toward zero.
    fn range(&mut self, lo: i32, hi: i32, scale: i32) -> i32 {
        let v = lo + (self.next() % (hi - lo + 1) as u64) as i32;
        v * scale / 4
    }
}

/// The parameters of the random SFNNv16 network of `seed`, its first layer's weights and biases
/// scaled by `scale / 4` (the vectors use seeds 1, 2, 3 at scales 4, 8, 2), for the feature set
/// `blocks` (today's own, or any of its blocks: `halfka_v2_hm` alone, say), `set` their feature
/// set from the plugins. A network of some of the blocks keeps their rows of the whole set's
/// draws: it evaluates as the whole network with the other blocks' rows zeroed. Drawn in this
/// order: the first layer's
/// biases in −20..=180; HalfKAv2_hm's weights in −40..=40, the threat and pair weights in
/// −12..=12; HalfKAv2_hm's PSQT in −3000..=3000, the threats' and pairs' in −600..=600; then per
/// stack each layer's biases and weights, in ±3000 and ±24 (`fc_0`), ±2000 and ±60 (`fc_1`),
/// ±2000 and ±100 (`fc_2`).
pub fn seeded_random_parts(
    seed: u64,
    scale: i32,
    blocks: &BlockSet,
    set: &FeatureSet,
) -> NetworkParts {
    let buckets = 8;
    let mut rng = SplitMix64(seed);
    let b1: Vec<i16> = (0..L1).map(|_| rng.range(-20, 180, scale) as i16).collect();
    let mut w1: Vec<i16> = (0..FEATURES * L1)
        .map(|_| rng.range(-40, 40, scale) as i16)
        .collect();
    w1.extend(
        (0..(THREAT_FEATURES + PAIR_FEATURES) * L1).map(|_| rng.range(-12, 12, scale) as i16),
    );
    let mut psqt: Vec<i32> = (0..FEATURES * buckets)
        .map(|_| rng.range(-3000, 3000, 4))
        .collect();
    psqt.extend((0..(THREAT_FEATURES + PAIR_FEATURES) * buckets).map(|_| rng.range(-600, 600, 4)));
    // Keep the rows of `blocks` (this project's order: HalfKAv2_hm, threats, pairs).
    let kept = blocks.project_order();
    let (mut rows, mut columns, mut first) = (Vec::new(), Vec::new(), 0);
    for block in BlockSet::own(Generation::Sfnnv16).project_order() {
        if kept.contains(&block) {
            rows.extend_from_slice(&w1[first * L1..(first + block.size) * L1]);
            columns.extend_from_slice(&psqt[first * buckets..(first + block.size) * buckets]);
        }
        first += block.size;
    }
    let arch = Arch::sfnnv16();
    let ranges = [(3000, 24), (2000, 60), (2000, 100)];
    let stacks = (0..arch.stacks)
        .map(|_| {
            arch.layers(L1)
                .iter()
                .zip(ranges)
                .map(|(&(inputs, outputs), (b, w))| {
                    let biases = (0..outputs).map(|_| rng.range(-b, b, 4)).collect();
                    let weights = (0..inputs * outputs)
                        .map(|_| rng.range(-w, w, 4) as i8)
                        .collect();
                    LayerParts { weights, biases }
                })
                .collect()
        })
        .collect();
    NetworkParts {
        feature_set: blocks.feature_set(),
        blocks: blocks.block_infos(set),
        l1: L1,
        arch,
        quantization: Quantization::THESIS,
        w1: rows,
        b1,
        psqt: columns,
        stacks,
        units: Generation::Sfnnv16.units(),
    }
}

/// The description Stockfish's writer put in the vectors' networks.
pub fn seeded_description(seed: u64, scale: i32) -> String {
    format!(
        "Random SFNNv16 network, seed {seed}, scale {scale}, written by Stockfish 762dd1da9's Network::save."
    )
}
