//! The evaluation interface of the search and the built-in evaluation.
//!
//! The search talks to an [`Evaluator`]: it announces every move it makes and undoes (so an
//! NNUE can update its accumulators incrementally) and asks for the score of the current
//! position from the side to move's point of view. [`Builtin`] is a material and piece-square
//! evaluation that needs no network, so the engine (and data generation) can start from nothing.

use shakmaty::{Chess, Color, Move, Position, Role};

/// Largest magnitude an evaluation may have: far below the mate scores.
pub const EVAL_LIMIT: i32 = 20_000;

/// What the search needs from an evaluation.
///
/// Calls come in stack order: [`set_root`](Self::set_root) once per search, then for every
/// [`push`](Self::push) or [`push_null`](Self::push_null) a matching [`pop`](Self::pop).
pub trait Evaluator {
    /// Makes `pos` the root position, dropping any pushed move.
    fn set_root(&mut self, pos: &Chess);

    /// Follows the legal move `m` played in `before`.
    fn push(&mut self, before: &Chess, m: &Move);

    /// Follows a null move (the turn passed) that led to `after`.
    fn push_null(&mut self, after: &Chess);

    /// Undoes the last push.
    fn pop(&mut self);

    /// The score of the current position `pos` for its side to move, in centipawns (a
    /// network's own units converted), within ±[`EVAL_LIMIT`].
    fn evaluate(&mut self, pos: &Chess) -> i32;

    /// The first error met since the last call (a failing feature plugin, say), after which the
    /// evaluator fell back to something that still works. `None` when all went well.
    fn take_error(&mut self) -> Option<String> {
        None
    }
}

/// Material values by role index (pawn .. king) for the middlegame and the endgame.
/// An evaluator lent to a search: the borrower drives the owner's state, which outlives the
/// search (so its buffers are allocated once for many searches).
impl<E: Evaluator + ?Sized> Evaluator for &mut E {
    fn set_root(&mut self, pos: &Chess) {
        (**self).set_root(pos)
    }

    #[inline(always)]
    fn push(&mut self, before: &Chess, m: &Move) {
        (**self).push(before, m)
    }

    fn push_null(&mut self, after: &Chess) {
        (**self).push_null(after)
    }

    #[inline(always)]
    fn pop(&mut self) {
        (**self).pop()
    }

    #[inline(always)]
    fn evaluate(&mut self, pos: &Chess) -> i32 {
        (**self).evaluate(pos)
    }

    fn take_error(&mut self) -> Option<String> {
        (**self).take_error()
    }
}

const MATERIAL_MG: [i32; 6] = [82, 337, 365, 477, 1025, 0];
const MATERIAL_EG: [i32; 6] = [94, 281, 297, 512, 936, 0];
/// Game phase weight of each role (24 in the initial position).
const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
const PHASE_TOTAL: i32 = 24;
const BISHOP_PAIR: (i32, i32) = (30, 50);
const TEMPO: i32 = 10;

/// Twice a square's centrality: 2 on a corner, 14 on a centre square.
const fn centrality2(sq: usize) -> i32 {
    let f = (sq % 8) as i32;
    let r = (sq / 8) as i32;
    (7 - (2 * f - 7).abs()) + (7 - (2 * r - 7).abs())
}

/// Piece-square bonus (middlegame, endgame) of `role` on `sq`, White's view (rank 0 = own back rank).
const fn piece_square(role: usize, sq: usize) -> (i32, i32) {
    let f = sq % 8;
    let r = sq / 8;
    let c = centrality2(sq) - 8; // -6 ..= 6
    match role {
        0 => {
            const ADV_MG: [i32; 8] = [0, 0, 4, 8, 16, 30, 55, 0];
            const ADV_EG: [i32; 8] = [0, 5, 10, 20, 35, 60, 100, 0];
            let centre = if (f == 3 || f == 4) && (r == 3 || r == 4) {
                15
            } else if (f == 3 || f == 4) && r == 1 {
                -10
            } else {
                0
            };
            (ADV_MG[r] + centre, ADV_EG[r])
        }
        1 => (c * 5, c * 4),
        2 => (c * 3, c * 3),
        3 => {
            let seventh = if r == 6 { 20 } else { 0 };
            let centre = if f == 3 || f == 4 { 5 } else { 0 };
            (seventh + centre, if r == 6 { 10 } else { 0 })
        }
        4 => (c * 2, c * 4),
        _ => {
            const BACK: [i32; 8] = [20, 30, 10, 0, 0, 10, 30, 20];
            const SECOND: [i32; 8] = [10, 10, -5, -10, -10, -5, 10, 10];
            let mg = match r {
                0 => BACK[f],
                1 => SECOND[f],
                _ => -15 * r as i32,
            };
            (mg, c * 6)
        }
    }
}

/// Per role and square (White's view): packed middlegame and endgame values, material included.
const fn make_tables() -> [[(i32, i32); 64]; 6] {
    let mut t = [[(0, 0); 64]; 6];
    let mut role = 0;
    while role < 6 {
        let mut sq = 0;
        while sq < 64 {
            let (mg, eg) = piece_square(role, sq);
            t[role][sq] = (MATERIAL_MG[role] + mg, MATERIAL_EG[role] + eg);
            sq += 1;
        }
        role += 1;
    }
    t
}

static TABLES: [[(i32, i32); 64]; 6] = make_tables();

/// Material plus piece-square tables, tapered between middlegame and endgame by the remaining
/// material, with a bishop-pair bonus and a small bonus for the side to move. Stateless.
#[derive(Clone, Copy, Debug, Default)]
pub struct Builtin;

impl Builtin {
    /// The score of `pos` for the side to move.
    pub fn score(pos: &Chess) -> i32 {
        let board = pos.board();
        let mut mg = [0i32; 2];
        let mut eg = [0i32; 2];
        let mut phase = 0;
        for color in Color::ALL {
            let c = color as usize;
            let ours = board.by_color(color);
            for role in Role::ALL {
                let r = role as usize - 1;
                let pieces = ours & board.by_role(role);
                phase += PHASE_WEIGHT[r] * pieces.count() as i32;
                for sq in pieces {
                    let rel = if color == Color::White {
                        sq as usize
                    } else {
                        sq as usize ^ 56
                    };
                    let (m, e) = TABLES[r][rel];
                    mg[c] += m;
                    eg[c] += e;
                }
            }
            if (ours & board.bishops()).count() >= 2 {
                mg[c] += BISHOP_PAIR.0;
                eg[c] += BISHOP_PAIR.1;
            }
        }
        let phase = phase.min(PHASE_TOTAL);
        let us = pos.turn() as usize;
        let them = 1 - us;
        let mg_score = mg[us] - mg[them];
        let eg_score = eg[us] - eg[them];
        let score = (mg_score * phase + eg_score * (PHASE_TOTAL - phase)) / PHASE_TOTAL;
        (score + TEMPO).clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }
}

impl Evaluator for Builtin {
    fn set_root(&mut self, _pos: &Chess) {}

    fn push(&mut self, _before: &Chess, _m: &Move) {}

    fn push_null(&mut self, _after: &Chess) {}

    fn pop(&mut self) {}

    #[inline]
    fn evaluate(&mut self, pos: &Chess) -> i32 {
        Builtin::score(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn eval(fen: &str) -> i32 {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        Builtin::score(&pos)
    }

    #[test]
    fn start_position_is_balanced_up_to_the_tempo() {
        assert_eq!(
            eval("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            TEMPO
        );
        assert_eq!(
            eval("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"),
            TEMPO
        );
    }

    #[test]
    fn colour_flipped_positions_score_alike() {
        let a = eval("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        let b = eval("rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 4 4");
        assert_eq!(a, b);
    }

    #[test]
    fn material_dominates() {
        // White is a queen up.
        let up = eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(up > 800, "{up}");
        let down = eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
        assert!(down < -800, "{down}");
    }
}
