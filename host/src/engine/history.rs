//! What one search thread learns about move ordering: the butterfly, continuation and capture
//! histories of [`ThreadData`] (kept between the searches of a game) and the [`Killers`] of a
//! ply (kept for one search), with the gravity update that keeps every history entry bounded.

use super::parameters::*;
use shakmaty::{Color, Move, Role, Square};

/// Histories and other learned move-ordering data of one thread, kept between searches of a game.
pub struct ThreadData {
    /// Butterfly history by side to move, origin and destination.
    history: Box<[[[i16; 64]; 64]; 2]>,
    /// Continuation histories: by the (piece, destination) one and two plies back, then the
    /// (piece, destination) of the move scored.
    continuation: [Box<[[i16; 768]; 768]>; 2],
    /// Capture history by (piece, destination) and captured role.
    capture: Box<[[i16; 6]; 768]>,
    /// Late move reductions by depth and move number.
    reductions: [[u8; 64]; 64],
}

impl Default for ThreadData {
    fn default() -> Self {
        Self::new()
    }
}

impl ThreadData {
    /// Empty histories.
    pub fn new() -> Self {
        let mut reductions = [[0u8; 64]; 64];
        for (d, row) in reductions.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                *r = (LMR_BASE + (d as f64).ln() * (m as f64).ln() / LMR_DIVISOR) as u8;
            }
        }
        ThreadData {
            history: vec![[[0i16; 64]; 64]; 2]
                .into_boxed_slice()
                .try_into()
                .expect("two sides"),
            continuation: [zeroed_continuation(), zeroed_continuation()],
            capture: vec![[0i16; 6]; 768]
                .into_boxed_slice()
                .try_into()
                .expect("768 piece-squares"),
            reductions,
        }
    }

    /// Forgets everything learned (UCI `ucinewgame`), in place: the tables are zeroed where
    /// they are (no new allocation, the reductions kept), as data generation does before every
    /// game.
    pub fn clear(&mut self) {
        self.history
            .iter_mut()
            .flatten()
            .for_each(|row| row.fill(0));
        for table in &mut self.continuation {
            table.iter_mut().for_each(|row| row.fill(0));
        }
        self.capture.iter_mut().for_each(|row| row.fill(0));
    }

    /// The late move reduction, in plies, of move number `searched` (0-based) at `depth`.
    #[inline(always)]
    pub(super) fn reduction(&self, depth: i32, searched: usize) -> i32 {
        self.reductions[(depth as usize).min(63)][searched.min(63)] as i32
    }

    /// The history score of the quiet move `m` of `us`: butterfly plus the continuation
    /// histories after `prev`, the [`piece_to`] indices of the moves one and two plies back.
    #[inline(always)]
    pub(super) fn quiet_score(&self, us: Color, m: &Move, prev: [Option<usize>; 2]) -> i32 {
        let from = m.from().map_or(0, |s| s as usize);
        let to = landing(m);
        let mut s = self.history[us as usize][from][to as usize] as i32;
        let cur = piece_to(us, m.role(), to);
        if let Some(p) = prev[0] {
            s += self.continuation[0][p][cur] as i32;
        }
        if let Some(p) = prev[1] {
            s += self.continuation[1][p][cur] as i32;
        }
        s
    }

    /// The capture history of `m` played by `us` (0 for a move that captures nothing).
    #[inline(always)]
    pub(super) fn capture_score(&self, us: Color, m: &Move) -> i32 {
        m.capture().map_or(0, |c| {
            self.capture[piece_to(us, m.role(), m.to())][c as usize - 1] as i32
        })
    }

    /// After the quiet move `best` of `us` failed high at `depth`: rewards it and punishes the
    /// quiet moves tried before it (`failed`), in the butterfly and continuation histories.
    pub(super) fn reward_quiet(
        &mut self,
        us: Color,
        best: &Move,
        failed: &[Move],
        depth: i32,
        prev: [Option<usize>; 2],
    ) {
        let bonus = history_bonus(depth);
        self.update_quiet(us, best, bonus, prev);
        for m in failed {
            self.update_quiet(us, m, -bonus, prev);
        }
    }

    #[inline(always)]
    fn update_quiet(&mut self, us: Color, m: &Move, bonus: i32, prev: [Option<usize>; 2]) {
        let from = m.from().map_or(0, |s| s as usize);
        let to = landing(m);
        gravity(&mut self.history[us as usize][from][to as usize], bonus);
        let cur = piece_to(us, m.role(), to);
        if let Some(p) = prev[0] {
            gravity(&mut self.continuation[0][p][cur], bonus);
        }
        if let Some(p) = prev[1] {
            gravity(&mut self.continuation[1][p][cur], bonus);
        }
    }

    /// After a fail high at `depth` (by the capture `best`, or by a quiet move when `None`):
    /// rewards `best` and punishes the captures tried before it (`failed`).
    pub(super) fn reward_capture(
        &mut self,
        us: Color,
        best: Option<&Move>,
        failed: &[Move],
        depth: i32,
    ) {
        let bonus = history_bonus(depth);
        if let Some(m) = best {
            self.update_capture(us, m, bonus);
        }
        for m in failed {
            self.update_capture(us, m, -bonus);
        }
    }

    #[inline(always)]
    fn update_capture(&mut self, us: Color, m: &Move, bonus: i32) {
        if let Some(c) = m.capture() {
            let i = piece_to(us, m.role(), m.to());
            gravity(&mut self.capture[i][c as usize - 1], bonus);
        }
    }
}

fn zeroed_continuation() -> Box<[[i16; 768]; 768]> {
    vec![[0i16; 768]; 768]
        .into_boxed_slice()
        .try_into()
        .expect("768 rows")
}

/// The killer moves of a ply: the last two quiet moves that failed high there, tried early at
/// the other nodes of that ply.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Killers([Option<Move>; 2]);

impl Killers {
    /// Makes `m` the first killer (the former first becomes the second), unless it already is.
    #[inline(always)]
    pub(super) fn record(&mut self, m: Move) {
        if self.0[0] != Some(m) {
            self.0[1] = self.0[0];
            self.0[0] = Some(m);
        }
    }

    /// The killers, most recent first.
    #[inline(always)]
    pub(super) fn moves(self) -> [Option<Move>; 2] {
        self.0
    }
}

/// Index of a piece (colour, role) moving to a square, for the continuation histories.
#[inline(always)]
pub(super) fn piece_to(color: Color, role: Role, to: Square) -> usize {
    ((color as usize * 6) + role as usize - 1) * 64 + to as usize
}

/// The destination square of a move as the piece sees it (the king's square for castling).
#[inline(always)]
pub(super) fn landing(m: &Move) -> Square {
    match *m {
        Move::Castle { king, rook } => super::zobrist::castle_destinations(king, rook).0,
        _ => m.to(),
    }
}

/// Moves a history entry towards `bonus`'s sign by `bonus`, less the closer it already is to
/// ±16 384, so entries stay bounded and recent outcomes weigh more.
#[inline(always)]
fn gravity(entry: &mut i16, bonus: i32) {
    let v = *entry as i32;
    let b = bonus.clamp(-HISTORY_CLAMP, HISTORY_CLAMP);
    *entry = (v + b - v * b.abs() / HISTORY_GRAVITY) as i16;
}

/// The history bonus of a fail high at `depth`: growing with the square of the depth, capped.
#[inline(always)]
fn history_bonus(depth: i32) -> i32 {
    (depth * depth * HISTORY_DEPTH2 + depth * HISTORY_DEPTH).min(HISTORY_MAX_BONUS)
}
