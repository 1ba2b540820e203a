//! Helpers for the unit tests and benchmarks of plugin crates: the start position as a board, a
//! block's active indices, sorted (worked index examples), the fixed move sequence the `delta`
//! benchmarks replay and one pass of `delta` or `active` over it. The conformance kit ([`crate::conformance`]) checks the rules;
//! these make the examples and benchmarks short.

use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use std::hint::black_box;

use crate::block::{FeatureBlock, IndexList, MoveDelta};
use crate::convert::{board_from_position, move_from_shakmaty};
use crate::types::{Board, Color, Move};

/// The openings of [`delta_bench_moves`]: the start position and three middlegames rich in
/// sliders.
const DELTA_BENCH_STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8",
    "2r2rk1/1bqnbppp/p2ppn2/1p6/3NP3/1BN1BP2/PPPQ2PP/2KR3R w - - 0 13",
];

/// Board and move before every ply of seeded random games (three rounds of up to 90 plies from
/// each of four openings, 1,030 moves): the fixed workload of the plugins' `delta` benchmarks,
/// so that their numbers compare across blocks.
pub fn delta_bench_moves() -> Vec<(Board, Move)> {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut out = Vec::new();
    for _round in 0..3 {
        for fen in DELTA_BENCH_STARTS {
            let mut pos: Chess = fen
                .parse::<Fen>()
                .expect("a valid FEN")
                .into_position(CastlingMode::Standard)
                .expect("a legal position");
            for _ in 0..90 {
                let moves = pos.legal_moves();
                let Some(&m) = moves.choose(&mut rng) else {
                    break;
                };
                out.push((
                    board_from_position(&pos),
                    move_from_shakmaty(&m).expect("a legal move converts"),
                ));
                pos = pos.play(m).expect("a legal move plays");
            }
        }
    }
    out
}

/// A block's `delta` over every move of `moves` (from [`delta_bench_moves`]) into `md`, cleared
/// before each move, its inputs behind `black_box`: one iteration of a `delta` benchmark.
/// Returns the indices it added and removed for White and the moves it asked White to refresh
/// (what a benchmark prints of the block, Black's being alike).
pub fn delta_pass(
    moves: &[(Board, Move)],
    md: &mut MoveDelta<'_>,
    delta: &dyn Fn(&Board, &Move, &mut MoveDelta<'_>),
) -> (usize, usize) {
    let (mut indices, mut refreshes) = (0, 0);
    for (board, mv) in moves {
        md.clear();
        delta(black_box(board), black_box(mv), md);
        indices += md.added[0].len() + md.removed[0].len();
        refreshes += usize::from(md.refresh[0]);
    }
    (indices, refreshes)
}

/// A block's `active` for both perspectives of every board of `moves` into `buf`: one iteration
/// of an `active` benchmark (a refresh per position). Returns the indices emitted.
pub fn active_pass(
    moves: &[(Board, Move)],
    buf: &mut [u32],
    active: &dyn Fn(&Board, Color, &mut IndexList<'_>),
) -> usize {
    let mut indices = 0;
    for (board, _) in moves {
        for p in Color::ALL {
            let mut list = IndexList::new(buf);
            active(black_box(board), p, &mut list);
            indices += list.len();
        }
    }
    indices
}

/// The standard start position as an ABI board (White to move, all castling rights).
pub fn start_board() -> Board {
    board_from_position(&Chess::default())
}

/// The indices `B` emits for `board` from `perspective`'s point of view, sorted (repeated
/// indices stay repeated). Panics if the block overflows its own `MAX_ACTIVE`.
pub fn active_sorted<B: FeatureBlock>(board: &Board, perspective: Color) -> Vec<u32> {
    let mut buf = vec![0; B::MAX_ACTIVE as usize];
    let mut list = IndexList::new(&mut buf);
    B::active(board, perspective, &mut list);
    assert!(!list.overflowed(), "{} overflowed MAX_ACTIVE", B::NAME);
    let mut v = list.as_slice().to_vec();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{square, Role};

    #[test]
    fn the_start_board_has_the_start_pieces() {
        let b = start_board();
        assert_eq!(b.by_color[0].count_ones(), 16);
        assert_eq!(b.by_color[1].count_ones(), 16);
        assert_eq!(b.piece_at(square(4, 0)), Some((Color::White, Role::King)));
        assert_eq!(b.piece_at(square(3, 7)), Some((Color::Black, Role::Queen)));
        assert_eq!(b.turn, Color::White);
    }
}
