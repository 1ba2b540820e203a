//! PQR triplets (thesis §5.3) as examples, for method 2.
//!
//! For two records p → q that follow each other in a unit and belong to one game (q's ply is
//! p's plus one and one legal move of p leads to q's board), a random legal move of p other than
//! the played one gives r. The triplet's three positions are encoded through the feature plugins
//! like any batch; scores and results are not used. Each unit keeps its previous record, so
//! pairs are formed inside a unit, and has its own seeded stream of random moves, so a seed gives
//! the same batches whatever the number of threads.

use plugin_api::{Board, FeatureSet};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Position};

use super::{Examples, LoaderError};
use crate::data::Sample;
use crate::data::filter::Filter;
use crate::loader::batch::SparseBatch;

/// One triplet: the position p, the next position q of its game, and r, p after a random legal
/// move other than the played one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triplet {
    /// The position.
    pub p: Board,
    /// The position after the move played in the game.
    pub q: Board,
    /// The position after a random other legal move.
    pub r: Board,
}

/// The triplet of two consecutive records, if q follows p in one game and p has another legal
/// move; `rng` picks r's move.
pub fn triplet(p: &Sample, q: &Sample, rng: &mut impl Rng) -> Option<Triplet> {
    if u32::from(q.ply) != u32::from(p.ply) + 1 || q.board.turn == p.board.turn {
        return None;
    }
    let pos = p.to_chess().ok()?;
    let moves = pos.legal_moves();
    if moves.len() < 2 {
        return None;
    }
    let same = |a: &Board, b: &Board| {
        a.by_color == b.by_color && a.by_role == b.by_role && a.turn == b.turn
    };
    let after = |m: &shakmaty::Move| -> Board {
        let mut next: Chess = pos.clone();
        next.play_unchecked(*m);
        plugin_api::board_from_position(&next)
    };
    // The record's move first (the played move in chained formats), then every other.
    let hint = p.best_move.map(|m| plugin_api::move_to_shakmaty(&m));
    let played = hint
        .filter(|m| moves.contains(m) && same(&after(m), &q.board))
        .or_else(|| moves.iter().copied().find(|m| same(&after(m), &q.board)))?;
    let others: Vec<&shakmaty::Move> = moves.iter().filter(|&&m| m != played).collect();
    let r = after(others.choose(rng)?);
    Some(Triplet {
        p: p.board,
        q: q.board,
        r,
    })
}

/// A batch of triplets: `positions` holds the p of every triplet, then every q, then every r
/// (3·`len` positions, without labels).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TripletBatch {
    /// Number of triplets.
    pub len: usize,
    /// The encoded positions: p's, q's, r's.
    pub positions: SparseBatch,
}

/// Examples that are PQR triplets of consecutive records (the PQR method's batches).
pub struct Triplets;

/// What a unit of the triplet loader remembers: its previous record and its random moves.
pub struct TripletUnit {
    previous: Option<Sample>,
    rng: ChaCha8Rng,
}

impl Examples for Triplets {
    type Example = Triplet;
    type UnitState = TripletUnit;
    type Part = [SparseBatch; 3];
    type Batch = TripletBatch;
    const NAME: &'static str = "pqr-loader";

    fn open(seed: u64, stream: u64) -> TripletUnit {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0070_7172);
        rng.set_stream(stream);
        TripletUnit {
            previous: None,
            rng,
        }
    }

    fn take(unit: &mut TripletUnit, record: Sample, filter: &mut Filter) -> Option<Triplet> {
        let made = unit
            .previous
            .take()
            .and_then(|p| triplet(&p, &record, &mut unit.rng).filter(|_| filter.keep(&p)));
        unit.previous = Some(record);
        made
    }

    fn skipped(unit: &mut TripletUnit) {
        unit.previous = None;
    }

    fn encode(set: &FeatureSet, triplets: &[Triplet]) -> Result<[SparseBatch; 3], LoaderError> {
        let mut out = [
            SparseBatch::with_capacity(set, triplets.len()),
            SparseBatch::with_capacity(set, triplets.len()),
            SparseBatch::with_capacity(set, triplets.len()),
        ];
        let mut scratch = Vec::with_capacity(set.max_active());
        for t in triplets {
            for (batch, board) in out.iter_mut().zip([&t.p, &t.q, &t.r]) {
                batch
                    .push(set, board, &mut scratch)
                    .map_err(|e| LoaderError::Encode(e.to_string()))?;
            }
        }
        Ok(out)
    }

    fn join(set: &FeatureSet, parts: Vec<[SparseBatch; 3]>, len: usize) -> TripletBatch {
        let mut positions = SparseBatch::with_capacity(set, 3 * len);
        for role in 0..3 {
            for part in &parts {
                positions.append(&part[role]);
            }
        }
        TripletBatch { len, positions }
    }

    fn len(batch: &TripletBatch) -> usize {
        batch.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic::random_games;

    #[test]
    fn triplets_follow_games_and_r_differs_from_q() {
        let samples: Vec<Sample> = random_games(3).take(3000).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut formed = 0;
        let mut boundaries = 0;
        for w in samples.windows(2) {
            let t = triplet(&w[0], &w[1], &mut rng);
            if w[1].ply != w[0].ply + 1 {
                boundaries += 1;
                assert!(t.is_none());
                continue;
            }
            if let Some(t) = t {
                formed += 1;
                assert_eq!(t.p, w[0].board);
                assert_eq!(t.q, w[1].board);
                assert_ne!(
                    (t.r.by_color, t.r.by_role),
                    (t.q.by_color, t.q.by_role),
                    "r must come from another move"
                );
                assert_eq!(t.r.turn, t.q.turn);
            }
        }
        assert!(boundaries > 5);
        assert!(formed > 2500, "{formed}");
    }

    #[test]
    fn records_of_different_games_make_no_triplet() {
        let a: Vec<Sample> = random_games(4).take(50).collect();
        let b: Vec<Sample> = random_games(5).skip(10).take(50).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Same ply step but unrelated boards.
        let p = a[10];
        let mut q = b[20];
        q.ply = p.ply + 1;
        q.board.turn = p.board.turn.other();
        assert!(triplet(&p, &q, &mut rng).is_none());
    }
}
