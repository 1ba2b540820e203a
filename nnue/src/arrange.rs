//! The network rearranged for evaluation: the same function, bit for bit, laid out so that the
//! hidden layer can skip the inputs that are zero.
//!
//! After the clipped ReLU most first-layer activations are zero (59 % with the thesis's
//! `all.nn`, 89 % with `best.nn`, measured over `host bench`). The hidden-layer kernels multiply
//! four 8-bit inputs at a time (`vpdpbusd`, or `vpmaddubsw` + `vpmaddwd`), so they skip a group
//! of four inputs only when all four are zero. The order of the first-layer neurons is
//! arbitrary, so at load time the neurons are reordered to put neurons that are often zero at the
//! same time into the same group (Stockfish permutes its networks offline for the same reason):
//! with `all.nn` the share of all-zero groups goes from 13 % to about 30 %.
//!
//! The order is learned from positions of random games from the start position
//! ([`sample_boards`], a fixed seed: the order, like the evaluation, is deterministic). Reordering
//! the neurons permutes the columns of W1 and b1 and, in both halves, the inputs of W2; integer
//! sums do not depend on their order, so every evaluation is unchanged.
//!
//! The hidden weights are also stored a second time by groups ([`Arranged::groups`]): the
//! weights of one group of four inputs for every hidden output are contiguous, so a nonzero group
//! costs one broadcast and a few multiply-adds over contiguous memory.

use std::cmp::Reverse;

use plugin_api::{Board, Color, FeatureSet, board_from_position};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Position};

use super::aligned::AlignedVec;
use super::first_layer::RowLists;
use super::network::Network;
use super::simd::Kernels;

/// Hidden outputs per tile of the sparse kernels: the grouped weights are padded to a multiple.
pub const HIDDEN_TILE: usize = 32;

/// Positions sampled to learn the neuron order (each gives both perspectives).
const SAMPLE_POSITIONS: usize = 2048;
/// Seed of the random games the positions come from.
const SAMPLE_SEED: u64 = 0x9e37_79b9_7f4a_7c15;
/// Candidates the greedy grouping considers for each place, among the neurons left, most often
/// zero first: bounds the work for wide networks; with L1 = 512 it changes little.
const GROUPING_WINDOW: usize = 128;

/// A network with its first-layer neurons reordered and its hidden weights grouped by four
/// inputs. Evaluates exactly like the network it was made from.
#[derive(Clone, Debug)]
pub struct Arranged {
    net: Network,
    order: Vec<u32>,
    groups: AlignedVec<i8>,
    b2: AlignedVec<i32>,
    l2_pad: usize,
    /// The thesis's L2, W3 and b3 at hand for the forward pass (empty for other shapes).
    l2: usize,
    w3: AlignedVec<i8>,
    b3: i32,
}

impl Arranged {
    /// `net` with its first-layer neurons in `order`: neuron `k` of the result is neuron
    /// `order[k]` of `net`, reordered in place (W1 stays once in memory). Panics unless `order`
    /// is a permutation of `0..L1`. Only the thesis's shape is rearranged (its sparse hidden
    /// layer is what gains); a network of another shape keeps its file order and `order` must
    /// be the identity.
    pub fn new(net: Network, order: &[u32]) -> Arranged {
        let (l1, l2) = (net.l1(), net.l2());
        if !net.arch().is_thesis() {
            assert!(
                order.iter().enumerate().all(|(k, &j)| k as u32 == j) && order.len() == l1,
                "only thesis-shaped networks can be rearranged"
            );
            return Arranged {
                net,
                order: order.to_vec(),
                groups: AlignedVec::zeroed(0),
                b2: AlignedVec::zeroed(0),
                l2_pad: 0,
                l2: 0,
                w3: AlignedVec::zeroed(0),
                b3: 0,
            };
        }
        let mut seen = vec![false; l1];
        assert!(
            order.len() == l1
                && order
                    .iter()
                    .all(|&j| !std::mem::replace(&mut seen[j as usize], true)),
            "a neuron order must be a permutation of the first layer's neurons"
        );
        let mut arranged = net;
        // W1 rows, b1 and both halves of every W2 row are runs of L1 values in neuron order.
        arranged.w1.permute_columns(order);
        permute_runs(&mut arranged.b1, order);
        permute_runs(&mut arranged.stacks[0][0].weights, order);
        arranged.stacks[0][0].repad();
        let l2_pad = l2.div_ceil(HIDDEN_TILE) * HIDDEN_TILE;
        let inputs = 2 * l1;
        let mut groups = AlignedVec::zeroed(inputs / 4 * l2_pad * 4);
        for j in 0..l2 {
            let row = &arranged.w2()[j * inputs..(j + 1) * inputs];
            for (g, four) in row.chunks_exact(4).enumerate() {
                let at = (g * l2_pad + j) * 4;
                groups[at..at + 4].copy_from_slice(four);
            }
        }
        let mut b2 = AlignedVec::zeroed(l2_pad);
        b2[..l2].copy_from_slice(arranged.b2());
        let (w3, b3) = (AlignedVec::from_slice(arranged.w3()), arranged.b3());
        Arranged {
            net: arranged,
            order: order.to_vec(),
            groups,
            b2,
            l2_pad,
            l2,
            w3,
            b3,
        }
    }

    /// `net` as it is (neurons in file order).
    pub fn identity(net: Network) -> Arranged {
        let order: Vec<u32> = (0..net.l1() as u32).collect();
        Self::new(net, &order)
    }

    /// The reordered network (its W2 is the row-major copy of [`groups`](Self::groups)).
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// The network with its neurons back in file order (a copy, made when asked: the engine
    /// keeps only the arranged one).
    pub fn original(&self) -> Network {
        let mut inverse = vec![0u32; self.order.len()];
        for (k, &j) in self.order.iter().enumerate() {
            inverse[j as usize] = k as u32;
        }
        let mut net = self.net.clone();
        net.w1.permute_columns(&inverse);
        permute_runs(&mut net.b1, &inverse);
        if net.arch().is_thesis() {
            permute_runs(&mut net.stacks[0][0].weights, &inverse);
            net.stacks[0][0].repad();
        }
        net
    }

    /// `order()[k]` is the file's neuron that is neuron `k` here.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The hidden weights by groups of four inputs: for group `g` (inputs `4g .. 4g + 4` of the
    /// 2·L1), `l2_pad` runs of four weights, one per hidden output (zero for the padding).
    pub fn groups(&self) -> &[i8] {
        &self.groups
    }

    /// The hidden bias, zero-padded to [`l2_pad`](Self::l2_pad) values.
    pub fn b2_padded(&self) -> &[i32] {
        &self.b2
    }

    /// The thesis's L2 (0 for other shapes).
    pub fn l2(&self) -> usize {
        self.l2
    }

    /// The thesis's output weights W3.
    pub fn w3(&self) -> &[i8] {
        &self.w3
    }

    /// The thesis's output bias b3.
    pub fn b3(&self) -> i32 {
        self.b3
    }

    /// L2 rounded up to a multiple of [`HIDDEN_TILE`].
    pub fn l2_pad(&self) -> usize {
        self.l2_pad
    }
}

/// `dst[r·L1 + k] = src[r·L1 + order[k]]` for every run `r` of L1 = `order.len()` values.
pub(super) fn permute_runs<T: Copy>(values: &mut [T], order: &[u32]) {
    let l1 = order.len();
    let mut run: Vec<T> = Vec::with_capacity(l1);
    for chunk in values.chunks_exact_mut(l1) {
        run.clear();
        run.extend_from_slice(chunk);
        for (d, &j) in chunk.iter_mut().zip(order) {
            *d = run[j as usize];
        }
    }
}

/// `net` with its neurons ordered by [`neuron_order`] over [`sample_boards`], the accumulators
/// computed with `features` (the feature set it is bound to); the network as it is if a plugin
/// fails on a sample (the failure will show when evaluating).
pub(crate) fn arrange(net: Network, features: &FeatureSet) -> Arranged {
    if !net.arch().is_thesis() {
        return Arranged::identity(net);
    }
    match zero_bits(&net, features) {
        Some(zero) => Arranged::new(net, &neuron_order(&zero)),
        None => Arranged::identity(net),
    }
}

/// For each first-layer neuron, a bit set over the samples (position × perspective): set where
/// its activation is zero (the accumulator, `b1 + Σ` W1 rows of the distinct active indices as
/// the kernels sum them, is at most 0).
fn zero_bits(net: &Network, features: &FeatureSet) -> Option<Vec<Vec<u64>>> {
    let l1 = net.l1();
    let boards = sample_boards();
    let words = (2 * boards.len()).div_ceil(64);
    let mut zero = vec![vec![0u64; words]; l1];
    let kernels = Kernels::best();
    let mut acc = AlignedVec::<i16>::zeroed(l1);
    let mut rows = RowLists::default();
    for (i, board) in boards.iter().enumerate() {
        for p in Color::ALL {
            rows.clear();
            for index in features.active_set(board, p).ok()? {
                rows.add(net.w1(), index);
            }
            kernels.update(&mut acc, net.b1(), net.w1(), &rows);
            let sample = 2 * i + p.index();
            for (bits, &a) in zero.iter_mut().zip(acc.iter()) {
                if a <= 0 {
                    bits[sample / 64] |= 1 << (sample % 64);
                }
            }
        }
    }
    Some(zero)
}

/// Positions from random games (uniform legal moves, a fixed seed) from the start position,
/// every position after the first two plies; a game ends after 80 plies or at mate or stalemate.
pub fn sample_boards() -> Vec<Board> {
    let mut rng = ChaCha8Rng::seed_from_u64(SAMPLE_SEED);
    let mut boards = Vec::with_capacity(SAMPLE_POSITIONS);
    'games: loop {
        let mut pos = Chess::default();
        for ply in 0..80 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.random_range(0..moves.len())];
            pos.play_unchecked(m);
            if ply >= 2 {
                boards.push(board_from_position(&pos));
                if boards.len() == SAMPLE_POSITIONS {
                    break 'games;
                }
            }
        }
    }
    boards
}

/// An order of the neurons that puts neurons often zero together into the same group of four:
/// greedily, the neuron most often zero among those left starts a group, and each of the three
/// places is given to the candidate most often zero together with the group so far. `zero[j]`
/// is neuron `j`'s bit set of `zero_bits`; ties go to the lower index, so the order is
/// deterministic.
pub fn neuron_order(zero: &[Vec<u64>]) -> Vec<u32> {
    let count = |bits: &[u64]| bits.iter().map(|w| w.count_ones()).sum::<u32>();
    let mut left: Vec<u32> = (0..zero.len() as u32).collect();
    left.sort_by_key(|&j| (Reverse(count(&zero[j as usize])), j));
    let mut order = Vec::with_capacity(zero.len());
    let mut group = Vec::new();
    while !left.is_empty() {
        let seed = left.remove(0);
        order.push(seed);
        group.clear();
        group.extend_from_slice(&zero[seed as usize]);
        for _ in 1..4 {
            let Some(best) = (0..left.len().min(GROUPING_WINDOW)).max_by_key(|&k| {
                let joint: u32 = group
                    .iter()
                    .zip(&zero[left[k] as usize])
                    .map(|(a, b)| (a & b).count_ones())
                    .sum();
                (joint, Reverse(k))
            }) else {
                break;
            };
            let j = left.remove(best);
            order.push(j);
            for (a, b) in group.iter_mut().zip(&zero[j as usize]) {
                *a &= b;
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neurons_zero_together_share_a_group() {
        // Eight neurons over 64 samples: 0, 2, 5, 7 are zero on the even samples, the others on
        // the odd ones (and neuron 3 also on sample 0, so it is the most often zero).
        let even = 0x5555_5555_5555_5555u64;
        let zero: Vec<Vec<u64>> = (0..8)
            .map(|j| match j {
                0 | 2 | 5 | 7 => vec![even],
                3 => vec![!even | 1],
                _ => vec![!even],
            })
            .collect();
        let order = neuron_order(&zero);
        let mut first: Vec<u32> = order[..4].to_vec();
        let mut second: Vec<u32> = order[4..].to_vec();
        first.sort_unstable();
        second.sort_unstable();
        assert_eq!(order[0], 3);
        assert_eq!(first, [1, 3, 4, 6]);
        assert_eq!(second, [0, 2, 5, 7]);
    }

    #[test]
    fn samples_are_legal_and_deterministic() {
        let a = sample_boards();
        assert_eq!(a.len(), SAMPLE_POSITIONS);
        assert_eq!(a, sample_boards());
        assert!(a.windows(2).any(|w| w[0] != w[1]));
    }
}
