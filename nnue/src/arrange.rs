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
//! the neurons permutes the columns of W1 and b1 and, in both halves, the inputs of every
//! stack's first hidden layer; integer sums do not depend on their order, so every evaluation is
//! unchanged. The rule is the shape's, not a preset's: every network whose first layer is a
//! clipped ReLU is reordered ([`reorderable`]), the thesis's among them.

use std::cmp::Reverse;

use plugin_api::{Board, Color, FeatureSet, board_from_position};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Position};

use super::aligned::AlignedVec;
use super::first_layer::{RowLists, permute_runs};
use super::network::Network;
use super::shape::FtOutput;
use super::simd::Kernels;

/// Positions sampled to learn the neuron order (each gives both perspectives).
const SAMPLE_POSITIONS: usize = 2048;
/// Seed of the random games the positions come from.
const SAMPLE_SEED: u64 = 0x9e37_79b9_7f4a_7c15;
/// Candidates the greedy grouping considers for each place, among the neurons left, most often
/// zero first: bounds the work for wide networks; with L1 = 512 it changes little.
const GROUPING_WINDOW: usize = 128;

/// A network with its first-layer neurons reordered. Evaluates exactly like the network it was
/// made from.
#[derive(Clone, Debug)]
pub struct Arranged {
    net: Network,
    order: Vec<u32>,
}

/// Whether a network's first-layer neurons may be put in any order: its first layer's output is
/// each neuron's own clipped ReLU. A pairwise product multiplies neuron `j` by `j + L1/2`, so
/// such a network keeps its file order.
pub fn reorderable(net: &Network) -> bool {
    net.arch().ft_output == FtOutput::ClippedRelu
}

impl Arranged {
    /// `net` with its first-layer neurons in `order`: neuron `k` of the result is neuron
    /// `order[k]` of `net`, reordered in place (W1 stays once in memory): the columns of W1 and
    /// b1 and, in every stack, both halves of the first hidden layer's inputs. Panics unless
    /// `order` is a permutation of `0..L1`, and unless it is the identity for a network that is
    /// not [`reorderable`].
    pub fn new(net: Network, order: &[u32]) -> Arranged {
        let l1 = net.l1();
        let mut seen = vec![false; l1];
        assert!(
            order.len() == l1
                && order
                    .iter()
                    .all(|&j| !std::mem::replace(&mut seen[j as usize], true)),
            "a neuron order must be a permutation of the first layer's neurons"
        );
        let identity = order.iter().enumerate().all(|(k, &j)| k as u32 == j);
        assert!(
            identity || reorderable(&net),
            "only a network whose first layer is a clipped ReLU can be rearranged"
        );
        let mut net = net;
        if !identity {
            permute_neurons(&mut net, order);
        }
        Arranged {
            net,
            order: order.to_vec(),
        }
    }

    /// `net` as it is (neurons in file order).
    pub fn identity(net: Network) -> Arranged {
        let order: Vec<u32> = (0..net.l1() as u32).collect();
        Self::new(net, &order)
    }

    /// The reordered network.
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
        permute_neurons(&mut net, &inverse);
        net
    }

    /// `order()[k]` is the file's neuron that is neuron `k` here.
    pub fn order(&self) -> &[u32] {
        &self.order
    }
}

/// Puts `net`'s first-layer neurons in `order`: W1's and b1's columns, and every stack's first
/// hidden layer's inputs (runs of L1: each perspective's half of each row).
fn permute_neurons(net: &mut Network, order: &[u32]) {
    net.w1.permute_columns(order);
    permute_runs(&mut net.b1, order);
    for stack in &mut net.stacks {
        permute_runs(&mut stack[0].weights, order);
        stack[0].repad();
    }
}

/// `net` with its neurons ordered by [`neuron_order`] over [`sample_boards`], the accumulators
/// computed with `features` (the feature set it is bound to); the network as it is if a plugin
/// fails on a sample (the failure will show when evaluating).
pub(crate) fn arrange(net: Network, features: &FeatureSet) -> Arranged {
    if !reorderable(&net) {
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
