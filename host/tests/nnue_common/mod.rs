//! Helpers of the NNUE tests: the plugin registry, synthetic networks and seeded random games.

#![allow(dead_code)]

use plugin_api::conformance::START_FENS;
use plugin_api::{Board, Move, PluginRegistry, board_from_position, move_from_shakmaty};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use host::nnue::{AccumulatorStack, BlockInfo, Network, NetworkParts};

/// The plugins built for these tests (found next to the test executable).
pub fn registry() -> PluginRegistry {
    PluginRegistry::discover(None).unwrap_or_else(|e| panic!("{e}"))
}

/// The block identities of `spec` as the loaded plugins define them.
pub fn block_infos(registry: &PluginRegistry, spec: &str) -> Vec<BlockInfo> {
    BlockInfo::of_set(&registry.feature_set(spec).unwrap_or_else(|e| panic!("{e}")))
}

/// How extreme the random weights of a synthetic network are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weights {
    /// Small first-layer weights: accumulators spread over the clipped ReLU's range.
    Moderate,
    /// Full-range first layer and output bias: accumulators and the output sum wrap around.
    Extreme,
}

/// A random network over `blocks` with the given widths.
pub fn random_parts(
    feature_set: &str,
    blocks: Vec<BlockInfo>,
    l1: usize,
    l2: usize,
    weights: Weights,
    seed: u64,
) -> NetworkParts {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n =
        host::nnue::feature_count(feature_set, &blocks).unwrap_or_else(|e| panic!("{e}")) as usize;
    let (w1, b1, b2) = match weights {
        Weights::Moderate => (
            (0..n * l1).map(|_| rng.random_range(-40..=40)).collect(),
            (0..l1).map(|_| rng.random_range(-60..=120)).collect(),
            (0..l2)
                .map(|_| rng.random_range(-200_000..=200_000))
                .collect(),
        ),
        Weights::Extreme => (
            (0..n * l1).map(|_| rng.random()).collect(),
            (0..l1).map(|_| rng.random()).collect(),
            // Full-range hidden biases would pin every hidden neuron at 0 or 127.
            (0..l2)
                .map(|_| rng.random_range(-(1 << 20)..=1 << 20))
                .collect(),
        ),
    };
    let w2 = (0..2 * l1 * l2).map(|_| rng.random()).collect();
    let w3 = (0..l2).map(|_| rng.random()).collect();
    let b3 = match weights {
        Weights::Moderate => rng.random_range(-10_000..=10_000),
        Weights::Extreme => rng.random(),
    };
    NetworkParts::thesis(
        feature_set.to_string(),
        blocks,
        l1,
        (w1, b1),
        (w2, b2),
        (w3, b3),
    )
}

/// A random network over `spec` (blocks from the loaded plugins).
pub fn random_network(
    registry: &PluginRegistry,
    spec: &str,
    l1: usize,
    l2: usize,
    weights: Weights,
    seed: u64,
) -> Network {
    Network::from_parts(random_parts(
        spec,
        block_infos(registry, spec),
        l1,
        l2,
        weights,
        seed,
    ))
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A legal move, biased towards the moves that stress incremental updates: a rare kind (castling,
/// en passant, promotion) most of the time when one is available, else often a capture or a king
/// move, else any move.
pub fn pick_move(pos: &Chess, rng: &mut ChaCha8Rng) -> Option<shakmaty::Move> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let rare: Vec<&shakmaty::Move> = moves
        .iter()
        .filter(|m| m.is_castle() || m.is_en_passant() || m.is_promotion())
        .collect();
    let common: Vec<&shakmaty::Move> = moves
        .iter()
        .filter(|m| m.is_capture() || m.role() == shakmaty::Role::King)
        .collect();
    if !rare.is_empty() && rng.random_bool(0.6) {
        rare.choose(rng).map(|m| **m)
    } else if !common.is_empty() && rng.random_bool(0.4) {
        common.choose(rng).map(|m| **m)
    } else {
        moves.choose(rng).copied()
    }
}

/// The positions of `START_FENS` (castling, en passant, promotions, sparse boards).
pub fn start_positions() -> Vec<Chess> {
    START_FENS
        .iter()
        .map(|f| {
            f.parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap()
        })
        .collect()
}

/// What happened in a random walk, for the check callback.
pub enum Step<'a> {
    /// A new game started at this board (the stack must be reset).
    Start(&'a Board),
    /// `mv` was played; the board after it.
    Push(&'a Move, &'a Board),
    /// The last move was taken back; the board now.
    Pop(&'a Board),
}

impl Step<'_> {
    /// Makes `stack` follow the walk: reset at a new game, push the move, pop it.
    pub fn follow(&self, stack: &mut AccumulatorStack<'_>) {
        match self {
            Step::Start(board) => stack.reset(board).unwrap(),
            Step::Push(mv, _) => stack.push(mv).unwrap_or_else(|e| panic!("{e}")),
            Step::Pop(_) => stack.pop(),
        }
    }
}

/// What a random walk did.
#[derive(Debug, Default, Clone, Copy)]
pub struct WalkReport {
    /// Moves played.
    pub pushes: usize,
    /// Moves taken back.
    pub pops: usize,
    /// Games started.
    pub games: usize,
    /// Special moves played: captures, castles, en passant, promotions, king moves.
    pub captures: usize,
    pub castles: usize,
    pub en_passants: usize,
    pub promotions: usize,
    pub king_moves: usize,
}

/// Plays seeded random games from the start positions: `pushes` moves in all, games of up to
/// `max_game` plies; after some moves it takes one to three back (and goes on from there). Calls
/// `step` for every event.
pub fn random_walk(
    seed: u64,
    pushes: usize,
    max_game: usize,
    mut step: impl FnMut(Step<'_>),
) -> WalkReport {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let starts = start_positions();
    let mut report = WalkReport::default();
    let mut game = 0usize;
    while report.pushes < pushes {
        let mut line: Vec<Chess> = vec![starts[game % starts.len()].clone()];
        game += 1;
        report.games += 1;
        step(Step::Start(&board_from_position(&line[0])));
        for _ in 0..max_game {
            if report.pushes >= pushes {
                break;
            }
            let pos = line.last().unwrap().clone();
            let Some(m) = pick_move(&pos, &mut rng) else {
                break;
            };
            report.captures += usize::from(m.is_capture());
            report.castles += usize::from(m.is_castle());
            report.en_passants += usize::from(m.is_en_passant());
            report.promotions += usize::from(m.is_promotion());
            report.king_moves += usize::from(m.role() == shakmaty::Role::King);
            let mv = move_from_shakmaty(&m).unwrap();
            let next = pos.play(m).unwrap();
            step(Step::Push(&mv, &board_from_position(&next)));
            report.pushes += 1;
            line.push(next);
            if rng.random_bool(0.1) {
                let back = rng.random_range(1..=3).min(line.len() - 1);
                for _ in 0..back {
                    line.pop();
                    step(Step::Pop(&board_from_position(line.last().unwrap())));
                    report.pops += 1;
                }
            }
        }
    }
    report
}
