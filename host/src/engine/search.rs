//! The search of one thread: iterative deepening with aspiration windows over a negamax
//! alpha-beta search with principal variation search, and a quiescence search (`Searcher`).
//!
//! Pruning and ordering, all well known (see the Chess Programming Wiki): transposition table
//! cut-offs and move ordering, MVV/LVA with static exchange evaluation for captures, killer
//! moves, butterfly, continuation and capture histories, late move reductions, null-move pruning,
//! reverse futility pruning, futility and late move pruning of quiet moves, SEE pruning,
//! internal iterative reduction, check extensions and mate distance pruning. Repetitions, the
//! fifty-move rule and insufficient material score as draws.
//!
//! The limits it obeys are in [`super::limits`], the switches it shares with the other threads
//! in [`super::control`], its move-ordering memory in `super::history`; running it on several
//! threads (Lazy SMP) is `super::lazy_smp`'s work, and [`super::facade::Engine`] is the way in.

use super::parameters::*;
use std::time::Duration;

use arrayvec::ArrayVec;
use shakmaty::{Chess, Move, MoveList, Position};

use super::control::SearchControl;
use super::evaluator::{EVAL_LIMIT, Evaluator};
use super::history::{Killers, ThreadData, landing, piece_to};
use super::limits::{Ablation, Limits};
use super::movepick::{
    Kind, MovePicker, NO_MOVE, PackedMove, Scorer, from_packed, is_quiet, pack, unpack,
};
use super::position::{PositionStack, has_non_pawn_material};
use super::see::{see_ge, value};
use super::time::stability_percent;
use super::tt::{Bound, TranspositionTable, TtEntry};
use super::zobrist;

/// Deepest ply the search reaches (iterations go up to this depth).
pub const MAX_PLY: usize = 128;
/// Larger than any score.
pub const INFINITE: i32 = 32_000;
/// The score of giving mate now; mate in n plies scores `MATE - n`.
pub const MATE: i32 = 31_000;
/// Scores at or beyond this magnitude are mate scores.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
/// Marker for "no static evaluation" (the side to move is in check).
const NO_EVAL: i32 = -INFINITE - 1;

/// One completed (or cut short) iteration, as reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Depth of the iteration.
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Score for the side to move at the root.
    pub score: i32,
    /// Principal variation from the root.
    pub pv: Vec<Move>,
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play; `None` when the root has no legal move (checkmate or stalemate).
    pub best: Option<Move>,
    /// The expected reply, for pondering.
    pub ponder: Option<Move>,
    /// The last reported iteration (depth 0 when none completed).
    pub last: Iteration,
    /// Nodes searched by all threads.
    pub nodes: u64,
    /// Wall time of the search.
    pub elapsed: Duration,
    /// What went wrong without stopping the search, for the user to see: evaluator failures
    /// ([`Evaluator::take_error`]; that thread went on with the built-in evaluation), helper
    /// threads that could not start or failed. Empty when all went well.
    pub errors: Vec<String>,
}

/// What the main thread calls after each iteration: the iteration, the search's shared control
/// (node counts, clock) and table (fill rate), from which [`super::uci_format::info_line`]
/// writes the UCI `info` line.
pub type IterationReport<'a> = dyn Fn(&Iteration, &SearchControl, &TranspositionTable) + Sync + 'a;

/// Whether a stored bound settles the window: a cut-off (or, for `Bound::None`, nothing).
#[inline(always)]
fn bound_cuts(bound: Bound, score: i32, alpha: i32, beta: i32) -> bool {
    match bound {
        Bound::Exact => true,
        Bound::Lower => score >= beta,
        Bound::Upper => score <= alpha,
        Bound::None => false,
    }
}

/// What a searched move's score did to its node: the one rule of alpha-beta's bounds, for the
/// main search and the quiescence search alike.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Raised {
    /// No better than the best so far.
    Nothing,
    /// The best so far, not above alpha.
    Best,
    /// Above alpha: the new best move, and alpha is its score.
    Alpha,
    /// At or above beta: the node fails high (alpha left as it was).
    Cutoff,
}

/// Applies a move's `score` to the node's best score and window.
#[inline(always)]
fn raise(score: i32, best_score: &mut i32, alpha: &mut i32, beta: i32) -> Raised {
    if score <= *best_score {
        return Raised::Nothing;
    }
    *best_score = score;
    if score <= *alpha {
        Raised::Best
    } else if score >= beta {
        Raised::Cutoff
    } else {
        *alpha = score;
        Raised::Alpha
    }
}

/// The static evaluation as the table stores it (0 where there is none: in check).
#[inline(always)]
fn eval_to_tt(static_eval: i32) -> i16 {
    if static_eval == NO_EVAL {
        0
    } else {
        static_eval as i16
    }
}

/// Whether a stored score says more about the position than its static evaluation `eval`.
#[inline(always)]
fn bound_refines(bound: Bound, score: i32, eval: i32) -> bool {
    score.abs() < MATE_BOUND
        && match bound {
            Bound::Exact => true,
            Bound::Lower => score > eval,
            Bound::Upper => score < eval,
            Bound::None => false,
        }
}

#[inline(always)]
fn score_to_tt(score: i32, ply: usize) -> i16 {
    let s = if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    };
    s as i16
}

#[inline(always)]
fn score_from_tt(score: i16, ply: usize) -> i32 {
    let s = score as i32;
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

/// What move ordering reads at a node: the position and the thread's histories.
struct OrderCtx<'s> {
    pos: &'s Chess,
    data: &'s ThreadData,
    /// The continuation indices of the moves one and two plies back.
    prev: [Option<usize>; 2],
}

impl Scorer for OrderCtx<'_> {
    #[inline]
    fn capture_score(&self, m: &Move) -> i32 {
        let victim = m.capture().map_or(0, value);
        let promotion = m.promotion().map_or(0, value);
        let hist = self.data.capture_score(self.pos.turn(), m);
        (victim + promotion) * CAPTURE_VALUE_SCALE + hist / CAPTURE_HISTORY_DIVISOR
    }

    #[inline]
    fn quiet_score(&self, m: &Move) -> i32 {
        self.data.quiet_score(self.pos.turn(), m, self.prev)
    }

    #[inline]
    fn see_ge(&self, m: &Move, threshold: i32) -> bool {
        see_ge(self.pos, m, threshold)
    }
}

#[derive(Clone, Copy)]
struct Frame {
    static_eval: i32,
    killers: Killers,
    /// Continuation index of the move that led to this ply (`None` after a null move / at root).
    moved: Option<usize>,
    /// Whether this ply was reached by a null move.
    null: bool,
    /// Whether the side to move is in check at this ply.
    in_check: bool,
}

impl Default for Frame {
    fn default() -> Self {
        Frame {
            static_eval: NO_EVAL,
            killers: Killers::default(),
            moved: None,
            null: false,
            in_check: false,
        }
    }
}

/// Two frames of padding before ply 0 so `ply - 2` is always valid.
const FRAME_PAD: usize = 2;

/// The search of one thread: its position, evaluator, search stack and principal variations,
/// over the tables it shares with the other threads.
pub(super) struct Searcher<'a, E: Evaluator> {
    id: usize,
    pos: PositionStack,
    eval: E,
    tt: &'a TranspositionTable,
    ctl: &'a SearchControl,
    limits: &'a Limits,
    data: &'a mut ThreadData,
    nodes: u64,
    seldepth: usize,
    stopped: bool,
    frames: Vec<Frame>,
    pv: Vec<[PackedMove; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 2],
    /// Completed depth (1 once the first iteration finished).
    completed_depth: u32,
    /// Best root move of the current iteration, set when a root move raises alpha.
    iteration_best: Option<(PackedMove, i32)>,
    /// Best move of the last completed iteration (searched first at the root).
    previous_best: PackedMove,
    /// Main thread: when to stop (the soft limit scaled by the best move's stability), set
    /// after each iteration.
    time_target: Option<Duration>,
    /// Whether the current iteration's root search failed low (the best move is in doubt).
    failing_low: bool,
    root_moves: MoveList,
}

impl<'a, E: Evaluator> Searcher<'a, E> {
    /// Thread `id`'s search of `root` (after the positions hashed in `history`), with its own
    /// evaluator and histories and the shared (table, control, limits).
    pub(super) fn new(
        id: usize,
        root: &Chess,
        history: &[u64],
        eval: E,
        shared: (&'a TranspositionTable, &'a SearchControl, &'a Limits),
        data: &'a mut ThreadData,
    ) -> Self {
        let (tt, ctl, limits) = shared;
        let mut root_moves = root.legal_moves();
        if !limits.search_moves.is_empty() {
            let only: Vec<PackedMove> = limits.search_moves.iter().map(pack).collect();
            root_moves.retain(|m| only.contains(&pack(m)));
        }
        let mut s = Searcher {
            id,
            pos: PositionStack::new(root.clone(), history),
            eval,
            tt,
            ctl,
            limits,
            data,
            nodes: 0,
            seldepth: 0,
            stopped: false,
            frames: vec![Frame::default(); MAX_PLY + FRAME_PAD + 2],
            pv: vec![[NO_MOVE; MAX_PLY + 1]; MAX_PLY + 2],
            pv_len: [0; MAX_PLY + 2],
            completed_depth: 0,
            iteration_best: None,
            previous_best: NO_MOVE,
            time_target: None,
            failing_low: false,
            root_moves,
        };
        s.eval.set_root(root);
        s.frame_mut(0).in_check = root.is_check();
        s
    }

    /// Whether the root has a move to search (after `go searchmoves`).
    pub(super) fn has_root_moves(&self) -> bool {
        !self.root_moves.is_empty()
    }

    /// The first root move, to play when no iteration completed.
    pub(super) fn first_root_move(&self) -> Option<Move> {
        self.root_moves.first().copied()
    }

    /// The root's static evaluation (`quiescence` false; one node) or its quiescence search
    /// with a full window, and the nodes visited: the cheap labels of
    /// [`super::label::LabelBudget`].
    pub(super) fn root_label(&mut self, quiescence: bool) -> (i32, u64) {
        let score = if quiescence {
            self.qsearch(-INFINITE, INFINITE, 0)
        } else {
            self.nodes += 1;
            self.evaluate()
        };
        (score, self.nodes)
    }

    /// The evaluator's first error since the last call ([`Evaluator::take_error`]).
    pub(super) fn take_eval_error(&mut self) -> Option<String> {
        self.eval.take_error()
    }

    /// Whether `technique` is in use in this search (not switched off by the ablation).
    #[inline(always)]
    fn on(&self, technique: Ablation) -> bool {
        self.limits.ablation.on(technique)
    }

    /// Publishes the node count and checks the limits; `true` when the search must unwind.
    #[inline(always)]
    fn should_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if self.nodes & CHECK_EVERY_NODES == 0 {
            self.ctl.publish_nodes(self.id, self.nodes);
            if self.id == 0 && self.main_limits_reached() {
                self.ctl.stop();
            }
        }
        if self.id == 0
            && let Some(max) = self.limits.nodes
            && self.ctl.threads() == 1
            && self.nodes >= max
            && self.completed_depth >= 1
        {
            self.ctl.stop();
        }
        if self.ctl.is_stopped() {
            self.stopped = true;
        }
        self.stopped
    }

    fn main_limits_reached(&self) -> bool {
        if self.completed_depth == 0 {
            // Always finish the first iteration, so there is a move to play.
            return false;
        }
        if let Some(max) = self.limits.nodes
            && self.ctl.total_nodes() >= max
        {
            return true;
        }
        if let Some(t) = self.limits.time
            && !self.limits.infinite
            && !self.ctl.is_pondering()
        {
            // The scaled soft limit applies inside an iteration too (a root move that raised
            // alpha in the unfinished iteration is kept), except while the root fails low: then
            // only the hard limit stops the search.
            let limit = if self.failing_low {
                t.hard
            } else {
                self.time_target.unwrap_or(t.hard).min(t.hard)
            };
            if self.ctl.elapsed() >= limit {
                return true;
            }
        }
        false
    }

    #[inline(always)]
    fn frame(&self, ply: usize) -> &Frame {
        &self.frames[ply + FRAME_PAD]
    }

    #[inline(always)]
    fn frame_mut(&mut self, ply: usize) -> &mut Frame {
        &mut self.frames[ply + FRAME_PAD]
    }

    #[inline(always)]
    fn make(&mut self, m: &Move, ply: usize, key: u64) {
        let moved = piece_to(self.pos.current().turn(), m.role(), landing(m));
        let hash = self.pos.make_keyed(m, key);
        if hash != key {
            // A change of castling rights or a new en passant square: the prefetch missed.
            self.tt.prefetch(hash);
        }
        self.eval.push(self.pos.parent(), m);
        let in_check = self.pos.current().is_check();
        let child = self.frame_mut(ply + 1);
        child.moved = Some(moved);
        child.null = false;
        child.in_check = in_check;
    }

    #[inline(always)]
    fn unmake(&mut self) {
        self.pos.unmake();
        self.eval.pop();
    }

    /// Starts fetching the table entry of the position after `m`, from the key known before the
    /// move is played, so that the child's probe (after the pruning decisions and the move
    /// itself) does not wait for memory. Returns the key, which [`make`](Self::make) completes.
    #[inline(always)]
    fn prefetch_child(&self, m: &Move) -> u64 {
        let key = zobrist::key_after(self.pos.current(), self.pos.hash(), m);
        self.tt.prefetch(key);
        key
    }

    /// Caches a freshly computed static evaluation in the table (no score, no move).
    #[inline(always)]
    fn store_eval(&self, key: u64, eval: i32) {
        self.tt.store(
            key,
            TtEntry {
                mv: NO_MOVE,
                score: 0,
                eval: eval as i16,
                depth: 0,
                bound: Bound::None,
                pv: false,
            },
        );
    }

    fn evaluate(&mut self) -> i32 {
        let pos = self.pos.current();
        self.eval.evaluate(pos).clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }

    /// The continuation indices of the moves one and two plies before `ply`.
    #[inline(always)]
    fn previous_moves(&self, ply: usize) -> [Option<usize>; 2] {
        [
            self.frame(ply).moved,
            if ply >= 1 {
                self.frame(ply - 1).moved
            } else {
                None
            },
        ]
    }

    /// The move-ordering view of this node (histories of the moves leading here).
    #[inline(always)]
    fn order_ctx(&self, ply: usize) -> OrderCtx<'_> {
        OrderCtx {
            pos: self.pos.current(),
            data: self.data,
            prev: self.previous_moves(ply),
        }
    }

    /// After the quiet move `best` failed high: its histories and the killers of `ply`.
    fn update_quiet_histories(&mut self, best: &Move, quiets: &[Move], depth: i32, ply: usize) {
        let us = self.pos.current().turn();
        let prev = self.previous_moves(ply);
        self.data.reward_quiet(us, best, quiets, depth, prev);
        self.frame_mut(ply).killers.record(*best);
    }

    fn update_pv(&mut self, ply: usize, m: PackedMove) {
        let child_len = self.pv_len[ply + 1];
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let row = &mut head[ply];
        row[0] = m;
        row[1..=child_len].copy_from_slice(&tail[0][..child_len]);
        self.pv_len[ply] = child_len + 1;
    }

    /// Alpha-beta search of the current position to `depth` plies.
    fn search(
        &mut self,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv_len[ply] = 0;
        if depth <= 0 {
            return self.qsearch(alpha, beta, ply);
        }
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply + 1);

        let in_check = self.frame(ply).in_check;
        if !root {
            if self.pos.is_draw() {
                return 0;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { 0 } else { self.evaluate() };
            }
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        let key = self.pos.hash();
        let tte = self.tt.probe(key);
        let mut tt_move = tte.map_or(NO_MOVE, |e| e.mv);
        if root && self.previous_best != NO_MOVE {
            tt_move = self.previous_best;
        }
        let tt_score = tte.map(|e| score_from_tt(e.score, ply));
        if !pv_node
            && self.on(Ablation::TT_CUTOFF)
            && let (Some(e), Some(s)) = (tte, tt_score)
            && e.depth as i32 >= depth
            && bound_cuts(e.bound, s, alpha, beta)
        {
            return s;
        }

        let static_eval;
        let mut eval;
        if in_check {
            static_eval = NO_EVAL;
            eval = NO_EVAL;
        } else {
            static_eval = match tte {
                Some(e) => e.eval as i32,
                None => {
                    let v = self.evaluate();
                    self.store_eval(key, v);
                    v
                }
            };
            eval = static_eval;
            if let (Some(e), Some(s)) = (tte, tt_score)
                && bound_refines(e.bound, s, eval)
            {
                eval = s;
            }
        }
        self.frame_mut(ply).static_eval = static_eval;
        // The grandchildren start without killers; the children keep those of their cousins.
        self.frame_mut(ply + 2).killers = Killers::default();
        let improving = !in_check && ply >= 2 && {
            let two = self.frame(ply - 2).static_eval;
            if two != NO_EVAL {
                static_eval > two
            } else if ply >= 4 {
                let four = self.frame(ply - 4).static_eval;
                four == NO_EVAL || static_eval > four
            } else {
                true
            }
        };

        if !pv_node && !in_check {
            // Reverse futility pruning: far above beta at low depth.
            if depth <= RFP_MAX_DEPTH
                && self.on(Ablation::RFP)
                && eval.abs() < MATE_BOUND
                && eval - RFP_MARGIN * (depth - improving as i32) >= beta
            {
                return (eval + beta) / 2;
            }
            // Null-move pruning.
            if depth >= NMP_MIN_DEPTH
                && self.on(Ablation::NMP)
                && eval >= beta
                && static_eval >= beta - NMP_DEPTH_MARGIN * depth + NMP_BASE_MARGIN
                && !self.frame(ply).null
                && beta > -MATE_BOUND
                && has_non_pawn_material(self.pos.current())
            {
                let r = NMP_BASE_REDUCTION
                    + depth / NMP_DEPTH_DIVISOR
                    + ((eval - beta) / NMP_EVAL_DIVISOR).min(NMP_MAX_EVAL_REDUCTION);
                if self.pos.make_null() {
                    self.eval.push_null(self.pos.current());
                    self.tt.prefetch(self.pos.hash());
                    let child = self.frame_mut(ply + 1);
                    child.moved = None;
                    child.null = true;
                    child.in_check = false;
                    let v = -self.search(-beta, -beta + 1, depth - r, ply + 1, !cut_node);
                    self.unmake();
                    if self.stopped {
                        return 0;
                    }
                    if v >= beta {
                        return if v >= MATE_BOUND { beta } else { v };
                    }
                }
            }
        }

        // Internal iterative reduction: no move to try first, search shallower.
        if depth >= IIR_MIN_DEPTH
            && self.on(Ablation::IIR)
            && tt_move == NO_MOVE
            && (pv_node || cut_node)
        {
            depth -= 1;
        }

        let tt_legal = from_packed(self.pos.current(), tt_move);
        let mut picker = if root {
            MovePicker::with_moves(self.root_moves.clone(), tt_legal)
        } else {
            MovePicker::main(tt_legal, self.frame(ply).killers.moves())
        };

        let mut best_score = -INFINITE;
        let mut best_move: Option<Move> = None;
        let mut searched = 0usize;
        // Moves tried without success, for the history maluses (the tail may be forgotten).
        let mut quiets: ArrayVec<Move, 64> = ArrayVec::new();
        let mut captures: ArrayVec<Move, 32> = ArrayVec::new();
        let lmp_limit = (LMP_BASE + depth * depth) as usize / if improving { 1 } else { 2 };

        loop {
            let next = picker.next(self.pos.current(), &self.order_ctx(ply));
            let Some((m, kind, order)) = next else { break };
            let key = self.prefetch_child(&m);
            let quiet = is_quiet(&m);
            let reduction = self.data.reduction(depth, searched);
            if !root && best_score > -MATE_BOUND {
                let lmr_depth = (depth - 1 - reduction).max(0);
                if quiet {
                    if searched >= lmp_limit && self.on(Ablation::LMP) {
                        picker.skip_quiets();
                        continue;
                    }
                    if !in_check
                        && lmr_depth <= FUTILITY_MAX_DEPTH
                        && self.on(Ablation::FUTILITY)
                        && static_eval + FUTILITY_BASE + FUTILITY_DEPTH * lmr_depth <= alpha
                    {
                        continue;
                    }
                    if lmr_depth <= SEE_MAX_DEPTH
                        && self.on(Ablation::SEE)
                        && !see_ge(
                            self.pos.current(),
                            &m,
                            -SEE_QUIET_MARGIN * lmr_depth * lmr_depth,
                        )
                    {
                        continue;
                    }
                } else if depth <= SEE_MAX_DEPTH
                    && self.on(Ablation::SEE)
                    && kind == Kind::BadCapture
                    && !see_ge(self.pos.current(), &m, -SEE_CAPTURE_MARGIN * depth)
                {
                    continue;
                }
            }

            self.make(&m, ply, key);
            let gives_check = self.frame(ply + 1).in_check;
            let extension = gives_check && self.on(Ablation::CHECK_EXTENSION);
            let new_depth = depth - 1 + extension as i32;
            let mut score;
            if searched == 0 {
                score = -self.search(-beta, -alpha, new_depth, ply + 1, !pv_node && !cut_node);
            } else {
                let mut r = 0;
                if depth >= LMR_MIN_DEPTH
                    && self.on(Ablation::LMR)
                    && searched > root as usize
                    && (quiet || kind == Kind::BadCapture)
                {
                    r = reduction;
                    r += !pv_node as i32;
                    r += cut_node as i32;
                    r -= improving as i32;
                    r -= gives_check as i32;
                    match kind {
                        Kind::Killer => r -= 1,
                        Kind::Quiet => r -= order / LMR_HISTORY_DIVISOR,
                        _ => {}
                    }
                    r = r.clamp(0, (new_depth - 1).max(0));
                }
                score = -self.search(-alpha - 1, -alpha, new_depth - r, ply + 1, true);
                if score > alpha && r > 0 {
                    score = -self.search(-alpha - 1, -alpha, new_depth, ply + 1, !cut_node);
                }
                if pv_node && score > alpha && score < beta {
                    score = -self.search(-beta, -alpha, new_depth, ply + 1, false);
                }
            }
            self.unmake();
            if self.stopped {
                return 0;
            }
            searched += 1;

            let raised = raise(score, &mut best_score, &mut alpha, beta);
            if matches!(raised, Raised::Alpha | Raised::Cutoff) {
                best_move = Some(m);
                if pv_node {
                    self.update_pv(ply, pack(&m));
                }
                if root {
                    self.iteration_best = Some((pack(&m), score));
                }
                if raised == Raised::Cutoff {
                    if quiet {
                        self.update_quiet_histories(&m, &quiets, depth, ply);
                    }
                    let us = self.pos.current().turn();
                    self.data
                        .reward_capture(us, (!quiet).then_some(&m), &captures, depth);
                    break;
                }
            }
            if quiet {
                let _ = quiets.try_push(m);
            } else {
                let _ = captures.try_push(m);
            }
        }

        if searched == 0 {
            if picker.no_legal_move() {
                return if in_check { -MATE + ply as i32 } else { 0 };
            }
            // Every move pruned (cannot happen: pruning needs a searched move first).
            return alpha;
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_move.is_some() && pv_node {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(
            key,
            TtEntry {
                mv: best_move.as_ref().map_or(NO_MOVE, pack),
                score: score_to_tt(best_score, ply),
                eval: eval_to_tt(static_eval),
                depth: depth.clamp(0, 255) as u8,
                bound,
                pv: pv_node,
            },
        );
        best_score
    }

    /// Quiescence search: captures (and queen promotions) until the position is quiet; all
    /// evasions when in check.
    fn qsearch(&mut self, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply + 1);
        self.pv_len[ply] = 0;
        let pv_node = beta - alpha > 1;
        if self.pos.is_draw() {
            return 0;
        }
        let in_check = self.frame(ply).in_check;
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.evaluate() };
        }

        let key = self.pos.hash();
        let tte = self.tt.probe(key);
        let tt_move = tte.map_or(NO_MOVE, |e| e.mv);
        if !pv_node
            && self.on(Ablation::TT_CUTOFF)
            && let Some(e) = tte
            && bound_cuts(e.bound, score_from_tt(e.score, ply), alpha, beta)
        {
            return score_from_tt(e.score, ply);
        }

        let static_eval;
        let mut best_score;
        if in_check {
            static_eval = NO_EVAL;
            best_score = -MATE + ply as i32;
        } else {
            static_eval = match tte {
                Some(e) => e.eval as i32,
                None => self.evaluate(),
            };
            best_score = static_eval;
            if let Some(e) = tte
                && bound_refines(e.bound, score_from_tt(e.score, ply), best_score)
            {
                best_score = score_from_tt(e.score, ply);
            }
            if best_score >= beta {
                if tte.is_none() {
                    self.tt.store(
                        key,
                        TtEntry {
                            mv: NO_MOVE,
                            score: score_to_tt(best_score, ply),
                            eval: static_eval as i16,
                            depth: 0,
                            bound: Bound::Lower,
                            pv: false,
                        },
                    );
                }
                return best_score;
            }
            alpha = alpha.max(best_score);
        }

        let tt_legal = from_packed(self.pos.current(), tt_move);
        let mut picker = MovePicker::quiescence(tt_legal, in_check);
        let mut best_move = NO_MOVE;
        let mut searched = 0usize;
        loop {
            let next = picker.next(self.pos.current(), &self.order_ctx(ply));
            let Some((m, _, _)) = next else { break };
            let key = self.prefetch_child(&m);
            if !in_check {
                // Futility: even winning the victim for free does not reach alpha.
                if m.promotion().is_none() {
                    let gain = m.capture().map_or(0, value);
                    if static_eval + gain + QS_FUTILITY_MARGIN <= alpha {
                        best_score = best_score.max(static_eval + gain + QS_FUTILITY_MARGIN);
                        continue;
                    }
                }
                if !see_ge(self.pos.current(), &m, 0) {
                    continue;
                }
            } else if best_score > -MATE_BOUND && is_quiet(&m) && searched >= QS_CHECK_QUIETS {
                // Enough evasions tried and one does not lose: skip the remaining quiet ones.
                picker.skip_quiets();
                continue;
            }
            self.make(&m, ply, key);
            let score = -self.qsearch(-beta, -alpha, ply + 1);
            self.unmake();
            if self.stopped {
                return 0;
            }
            searched += 1;
            let raised = raise(score, &mut best_score, &mut alpha, beta);
            if matches!(raised, Raised::Alpha | Raised::Cutoff) {
                best_move = pack(&m);
                if raised == Raised::Cutoff {
                    break;
                }
            }
        }
        if in_check && picker.no_legal_move() {
            return -MATE + ply as i32;
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        self.tt.store(
            key,
            TtEntry {
                mv: best_move,
                score: score_to_tt(best_score, ply),
                eval: eval_to_tt(static_eval),
                depth: 0,
                bound,
                pv: pv_node,
            },
        );
        best_score
    }

    /// One iteration at `depth` with an aspiration window around the previous score.
    fn aspiration(&mut self, depth: u32, previous: i32) -> i32 {
        let depth = depth as i32;
        let mut delta = ASPIRATION_DELTA;
        let (mut alpha, mut beta) = if depth >= ASPIRATION_MIN_DEPTH
            && self.on(Ablation::ASPIRATION)
            && previous.abs() < MATE_BOUND
        {
            (previous - delta, previous + delta)
        } else {
            (-INFINITE, INFINITE)
        };
        loop {
            self.iteration_best = None;
            let score = self.search(alpha, beta, depth, 0, false);
            if self.stopped {
                return score;
            }
            if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITE);
                self.failing_low = true;
            } else if score >= beta {
                beta = (score + delta).min(INFINITE);
            } else {
                self.failing_low = false;
                return score;
            }
            delta += delta / 2;
            if delta > ASPIRATION_MAX_DELTA {
                alpha = -INFINITE;
                beta = INFINITE;
            }
        }
    }

    fn pv_moves(&self) -> Vec<Move> {
        let mut pos = self.pos.root().clone();
        let mut out = Vec::new();
        for &pm in &self.pv[0][..self.pv_len[0]] {
            let Some(m) = unpack(&pos, pm) else { break };
            pos.play_unchecked(m);
            out.push(m);
        }
        out
    }

    /// Iterative deepening. The main thread reports each iteration through `report`.
    pub(super) fn iterate(&mut self, report: &IterationReport<'_>) -> Option<Iteration> {
        let max_depth = self
            .limits
            .depth
            .map_or(MAX_PLY as u32 - 1, |d| d.clamp(1, MAX_PLY as u32 - 1));
        let mut last: Option<Iteration> = None;
        let mut score = 0;
        let mut stable = 0u32;
        for depth in 1..=max_depth {
            self.seldepth = 0;
            let s = self.aspiration(depth, score);
            let best = if self.stopped {
                match self.iteration_best {
                    Some(best) => best,
                    None => break,
                }
            } else {
                (self.pv[0][0], s)
            };
            if best.0 == NO_MOVE {
                break;
            }
            if self.stopped && self.pv_len[0] == 0 {
                // A root move raised alpha before the stop but left no variation: keep it alone.
                self.pv[0][0] = best.0;
                self.pv_len[0] = 1;
            }
            if best.0 == self.previous_best {
                stable += 1;
            } else {
                stable = 0;
            }
            self.previous_best = best.0;
            score = best.1;
            let iteration = Iteration {
                depth,
                seldepth: self.seldepth as u32,
                score,
                pv: self.pv_moves(),
            };
            if self.id == 0 {
                self.ctl.publish_nodes(0, self.nodes);
                report(&iteration, self.ctl, self.tt);
            }
            last = Some(iteration);
            if self.stopped {
                break;
            }
            self.completed_depth = depth;
            if self.id != 0 {
                continue;
            }
            if let Some(n) = self.limits.mate
                && score >= MATE_BOUND
                && (MATE - score + 1) / 2 <= n as i32
            {
                break;
            }
            if let Some(t) = self.limits.time
                && !t.managed
            {
                // `go movetime`: the whole time, unless searching on cannot change the move.
                let proven_mate = score.abs() >= MATE_BOUND && depth as i32 > MATE - score.abs();
                if self.root_moves.len() == 1 || proven_mate {
                    break;
                }
            } else if let Some(t) = self.limits.time {
                let target = t
                    .soft
                    .mul_f64(stability_percent(stable) as f64 / 100.0)
                    .min(t.hard);
                self.time_target = Some(target);
                // The next iteration would most likely not finish in the time left.
                if !self.limits.infinite
                    && !self.ctl.is_pondering()
                    && self.ctl.elapsed() >= target.mul_f64(0.6)
                {
                    break;
                }
            }
            if let Some(max) = self.limits.nodes
                && self.ctl.total_nodes() >= max
            {
                break;
            }
        }
        self.ctl.publish_nodes(self.id, self.nodes);
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eval_source::EvalSource;
    use crate::engine::facade::Engine;
    use crate::engine::uci_format::{info_line, uci_move, uci_score};
    use shakmaty::uci::UciMove;

    fn pos(fen: &str) -> Chess {
        chess_text::fen::parse_position(fen).unwrap()
    }

    fn search(fen: &str, limits: Limits, threads: usize) -> SearchResult {
        let root = pos(fen);
        let mut engine = Engine::new(8, threads, EvalSource::Builtin).unwrap();
        let result = engine.search(&root, &[], &limits, &|it, c, t| {
            eprintln!("{}", info_line(it, c, t))
        });
        assert!(result.errors.is_empty(), "{:?}", result.errors);
        result
    }

    #[test]
    fn finds_mate_in_one_and_scores_it() {
        let r = search(
            "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
            Limits::at_depth(4),
            1,
        );
        assert_eq!(uci_move(r.best.as_ref()), "d1d8");
        assert_eq!(uci_score(r.last.score), "mate 1");
    }

    #[test]
    fn finds_mate_in_two() {
        // 1. Nf6+ gxf6 2. Bxf7#.
        let r = search(
            "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
            Limits::at_depth(6),
            1,
        );
        assert_eq!(uci_score(r.last.score), "mate 2");
        assert_eq!(uci_move(r.best.as_ref()), "d5f6");
    }

    #[test]
    fn mated_and_stalemated_roots_have_no_move() {
        let mated = search("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", Limits::at_depth(3), 1);
        assert_eq!(mated.best, None);
        assert_eq!(mated.last.score, -MATE);
        let stalemate = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Limits::at_depth(3), 1);
        assert_eq!(stalemate.best, None);
        assert_eq!(stalemate.last.score, 0);
    }

    #[test]
    fn wins_hanging_material() {
        let r = search("6k1/8/8/3q4/8/8/3R4/3RK3 w - - 0 1", Limits::at_depth(5), 1);
        assert_eq!(uci_move(r.best.as_ref()), "d2d5");
        assert!(r.last.score > 800, "{}", r.last.score);
    }

    #[test]
    fn avoids_stalemating_when_winning() {
        // Kxa... any move except Qb6/Qc7-type stalemates; the search must not stalemate.
        let r = search("k7/8/1Q6/8/8/8/8/6K1 w - - 0 1", Limits::at_depth(5), 1);
        let mut p = pos("k7/8/1Q6/8/8/8/8/6K1 w - - 0 1");
        p.play_unchecked(r.best.unwrap());
        assert!(!p.is_stalemate());
    }

    #[test]
    fn fixed_depth_search_is_deterministic() {
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let a = search(fen, Limits::at_depth(7), 1);
        let b = search(fen, Limits::at_depth(7), 1);
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.best, b.best);
        assert_eq!(a.last.depth, 7);
    }

    #[test]
    fn each_ablated_technique_changes_the_tree_and_keeps_the_mate() {
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let full = search(fen, Limits::at_depth(8), 1);
        // That each technique has a bit and a name of its own is tested in `limits`.
        for &(name, technique) in &Ablation::TECHNIQUES {
            let ablation = Ablation::parse(name).unwrap();
            assert_eq!(ablation, technique);
            let limits = Limits {
                ablation,
                ..Limits::at_depth(8)
            };
            let r = search(fen, limits.clone(), 1);
            assert_ne!(r.nodes, full.nodes, "switching off {name} changed nothing");
            // Mate in two is found whatever is switched off.
            let mate = search(
                "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
                Limits {
                    ablation,
                    ..Limits::at_depth(6)
                },
                1,
            );
            assert_eq!(uci_score(mate.last.score), "mate 2", "without {name}");
        }
    }

    #[test]
    fn node_limit_is_honoured_exactly_with_one_thread() {
        let r = search(
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            Limits {
                nodes: Some(5_000),
                ..Limits::default()
            },
            1,
        );
        assert!(r.best.is_some());
        assert!(r.nodes <= 5_000 + 1, "{}", r.nodes);
    }

    #[test]
    fn search_moves_restrict_the_root() {
        let root = pos("4k3/8/8/3q4/8/8/3R4/3RK3 w - - 0 1");
        let only: Move = "e1e2".parse::<UciMove>().unwrap().to_move(&root).unwrap();
        let r = search(
            "4k3/8/8/3q4/8/8/3R4/3RK3 w - - 0 1",
            Limits {
                depth: Some(4),
                search_moves: vec![only],
                ..Limits::default()
            },
            1,
        );
        assert_eq!(r.best, Some(only));
    }

    #[test]
    fn two_threads_agree_on_an_obvious_move() {
        let r = search("6k1/8/8/3q4/8/8/3R4/3RK3 w - - 0 1", Limits::at_depth(8), 2);
        assert_eq!(uci_move(r.best.as_ref()), "d2d5");
    }

    #[test]
    fn bare_kings_are_a_draw() {
        let r = search("8/8/8/8/8/2k5/8/K7 w - - 0 1", Limits::at_depth(6), 1);
        assert_eq!(r.last.score, 0);
    }
}
