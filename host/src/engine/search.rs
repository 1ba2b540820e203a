//! The search: iterative deepening with aspiration windows over a negamax alpha-beta search
//! with principal variation search, a quiescence search, and Lazy SMP for several threads.
//!
//! Pruning and ordering, all well known (see the Chess Programming Wiki): transposition table
//! cut-offs and move ordering, MVV/LVA with static exchange evaluation for captures, killer
//! moves, butterfly, continuation and capture histories, late move reductions, null-move pruning,
//! reverse futility pruning, futility and late move pruning of quiet moves, SEE pruning,
//! internal iterative reduction, check extensions and mate distance pruning. Repetitions, the
//! fifty-move rule and insufficient material score as draws.
//!
//! Lazy SMP: every thread runs the same iterative deepening on its own position and histories;
//! they share only the transposition table, through which they help each other. The main thread
//! (0) decides when to stop, reports progress and gives the result.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arrayvec::ArrayVec;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, MoveList, Position, Role};

use super::eval::{EVAL_LIMIT, Evaluator};
use super::movepick::{
    Kind, MovePicker, NO_MOVE, PackedMove, Scorer, from_packed, is_quiet, pack, unpack,
};
use super::position::{PositionStack, has_non_pawn_material};
use super::see::{see_ge, value};
use super::time::{TimeBudget, stability_percent};
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

/// What limits a search besides `stop`.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Deepest iteration (`go depth`).
    pub depth: Option<u32>,
    /// Node budget over all threads (`go nodes`).
    pub nodes: Option<u64>,
    /// Stop once a mate in at most this many moves is found (`go mate`).
    pub mate: Option<u32>,
    /// Time budget (`go movetime` or the clock).
    pub time: Option<TimeBudget>,
    /// Search until `stop` (`go infinite`): the result waits for it.
    pub infinite: bool,
    /// Only these root moves (`go searchmoves`); empty for all.
    pub search_moves: Vec<Move>,
    /// Techniques switched off (UCI option `Ablation`), to measure what each one gains.
    pub ablation: Ablation,
}

/// A set of search techniques switched off, to measure what each gains in games against the
/// full search (`setoption name Ablation value rfp,lmr`). Empty by default: everything on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ablation(u32);

impl Ablation {
    /// Aspiration windows.
    pub const ASPIRATION: Ablation = Ablation(1 << 0);
    /// Reverse futility pruning.
    pub const RFP: Ablation = Ablation(1 << 1);
    /// Null-move pruning.
    pub const NMP: Ablation = Ablation(1 << 2);
    /// Internal iterative reduction.
    pub const IIR: Ablation = Ablation(1 << 3);
    /// Late move pruning.
    pub const LMP: Ablation = Ablation(1 << 4);
    /// Futility pruning of quiet moves.
    pub const FUTILITY: Ablation = Ablation(1 << 5);
    /// SEE pruning of quiet moves and bad captures.
    pub const SEE: Ablation = Ablation(1 << 6);
    /// Late move reductions.
    pub const LMR: Ablation = Ablation(1 << 7);
    /// Check extensions.
    pub const CHECK_EXTENSION: Ablation = Ablation(1 << 8);
    /// Transposition table cut-offs (the table still orders moves and caches evaluations).
    pub const TT_CUTOFF: Ablation = Ablation(1 << 9);

    /// Every technique that can be switched off, by its name in the option.
    pub const TECHNIQUES: [(&'static str, Ablation); 10] = [
        ("aspiration", Self::ASPIRATION),
        ("rfp", Self::RFP),
        ("nmp", Self::NMP),
        ("iir", Self::IIR),
        ("lmp", Self::LMP),
        ("futility", Self::FUTILITY),
        ("see", Self::SEE),
        ("lmr", Self::LMR),
        ("check-ext", Self::CHECK_EXTENSION),
        ("tt-cut", Self::TT_CUTOFF),
    ];

    /// Parses a comma- or space-separated list of [`TECHNIQUES`](Self::TECHNIQUES) names;
    /// empty, `none` or `<empty>` switch nothing off.
    pub fn parse(list: &str) -> Result<Ablation, String> {
        let mut set = Ablation::default();
        for name in list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty() && *n != "none" && *n != "<empty>")
        {
            let name = name.to_ascii_lowercase();
            match Self::TECHNIQUES.iter().find(|(n, _)| *n == name) {
                Some((_, technique)) => set.0 |= technique.0,
                None => {
                    let known: Vec<&str> = Self::TECHNIQUES.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "unknown search technique '{name}' (known: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        Ok(set)
    }

    /// Whether `technique` is switched off.
    #[inline(always)]
    pub fn off(self, technique: Ablation) -> bool {
        self.0 & technique.0 != 0
    }

    /// Whether `technique` is in use.
    #[inline(always)]
    pub fn on(self, technique: Ablation) -> bool {
        !self.off(technique)
    }

    /// The names switched off, comma-separated (empty when everything is on).
    pub fn names(self) -> String {
        let names: Vec<&str> = Self::TECHNIQUES
            .iter()
            .filter(|(_, technique)| self.off(*technique))
            .map(|(n, _)| *n)
            .collect();
        names.join(",")
    }
}

/// State shared by the UCI front end and all search threads of one search.
#[derive(Debug)]
pub struct SearchControl {
    stop: AtomicBool,
    pondering: AtomicBool,
    base: Instant,
    /// Nanoseconds from `base` to the moment the clock started (reset by `ponderhit`).
    start_ns: AtomicU64,
    nodes: Vec<PaddedCounter>,
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct PaddedCounter(AtomicU64);

impl SearchControl {
    /// Control for a search with `threads` threads, started now; `ponder` for `go ponder`.
    pub fn new(threads: usize, ponder: bool) -> Self {
        SearchControl {
            stop: AtomicBool::new(false),
            pondering: AtomicBool::new(ponder),
            base: Instant::now(),
            start_ns: AtomicU64::new(0),
            nodes: (0..threads.max(1))
                .map(|_| PaddedCounter::default())
                .collect(),
        }
    }

    /// Asks every thread to stop as soon as possible (UCI `stop`, or a limit reached).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked.
    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// UCI `ponderhit`: the pondered move was played; the clock starts now.
    pub fn ponderhit(&self) {
        let now = self.base.elapsed().as_nanos() as u64;
        self.start_ns.store(now, Ordering::Relaxed);
        self.pondering.store(false, Ordering::Release);
    }

    /// Whether the search is still pondering.
    pub fn is_pondering(&self) -> bool {
        self.pondering.load(Ordering::Acquire)
    }

    /// Time since the clock started.
    pub fn elapsed(&self) -> Duration {
        let start = Duration::from_nanos(self.start_ns.load(Ordering::Relaxed));
        self.base.elapsed().saturating_sub(start)
    }

    /// Time since the search began (for `info time` and the speed).
    pub fn since_go(&self) -> Duration {
        self.base.elapsed()
    }

    /// Nodes searched by all threads (as last published).
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }
}

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
                *r = (0.75 + (d as f64).ln() * (m as f64).ln() / 2.25) as u8;
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

    /// Forgets everything learned (UCI `ucinewgame`).
    pub fn clear(&mut self) {
        *self = Self::new();
    }
}

fn zeroed_continuation() -> Box<[[i16; 768]; 768]> {
    vec![[0i16; 768]; 768]
        .into_boxed_slice()
        .try_into()
        .expect("768 rows")
}

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
}

/// The score as UCI writes it: `cp N` or `mate N` (moves, negative when being mated).
pub fn uci_score(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        match (MATE + score) / 2 {
            0 => "mate 0".to_string(),
            n => format!("mate -{n}"),
        }
    } else {
        format!("cp {score}")
    }
}

/// A move in UCI notation (standard castling, `0000` for none).
pub fn uci_move(m: Option<&Move>) -> String {
    m.map_or_else(
        || "0000".to_string(),
        |m| m.to_uci(CastlingMode::Standard).to_string(),
    )
}

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

/// Index of a piece (colour, role) moving to a square, for the continuation histories.
#[inline(always)]
fn piece_to(color: shakmaty::Color, role: Role, to: shakmaty::Square) -> usize {
    ((color as usize * 6) + role as usize - 1) * 64 + to as usize
}

/// The destination square of a move as the piece sees it (the king's square for castling).
#[inline(always)]
fn landing(m: &Move) -> shakmaty::Square {
    match *m {
        Move::Castle { king, rook } => super::zobrist::castle_destinations(king, rook).0,
        _ => m.to(),
    }
}

#[inline(always)]
fn gravity(entry: &mut i16, bonus: i32) {
    let v = *entry as i32;
    let b = bonus.clamp(-16_000, 16_000);
    *entry = (v + b - v * b.abs() / 16_384) as i16;
}

#[inline(always)]
fn history_bonus(depth: i32) -> i32 {
    (depth * depth * 16 + depth * 32).min(1_600)
}

/// What move ordering reads at a node: the position and the thread's histories.
struct OrderCtx<'s> {
    pos: &'s Chess,
    data: &'s ThreadData,
    prev1: Option<usize>,
    prev2: Option<usize>,
}

impl Scorer for OrderCtx<'_> {
    #[inline]
    fn capture_score(&self, m: &Move) -> i32 {
        let victim = m.capture().map_or(0, value);
        let promotion = m.promotion().map_or(0, value);
        let hist = m.capture().map_or(0, |c| {
            self.data.capture[piece_to(self.pos.turn(), m.role(), m.to())][c as usize - 1] as i32
        });
        (victim + promotion) * 16 + hist / 16
    }

    #[inline]
    fn quiet_score(&self, m: &Move) -> i32 {
        let us = self.pos.turn();
        let from = m.from().map_or(0, |s| s as usize);
        let to = landing(m);
        let mut s = self.data.history[us as usize][from][to as usize] as i32;
        let cur = piece_to(us, m.role(), to);
        if let Some(p) = self.prev1 {
            s += self.data.continuation[0][p][cur] as i32;
        }
        if let Some(p) = self.prev2 {
            s += self.data.continuation[1][p][cur] as i32;
        }
        s
    }

    #[inline]
    fn see_ge(&self, m: &Move, threshold: i32) -> bool {
        see_ge(self.pos, m, threshold)
    }
}

#[derive(Clone, Copy)]
struct Frame {
    static_eval: i32,
    killers: [Option<Move>; 2],
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
            killers: [None; 2],
            moved: None,
            null: false,
            in_check: false,
        }
    }
}

/// Two frames of padding before ply 0 so `ply - 2` is always valid.
const FRAME_PAD: usize = 2;

struct Searcher<'a, E: Evaluator> {
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
    fn new(
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
        if self.nodes & 1023 == 0 {
            self.ctl.nodes[self.id]
                .0
                .store(self.nodes, Ordering::Relaxed);
            if self.id == 0 && self.main_limits_reached() {
                self.ctl.stop();
            }
        }
        if self.id == 0
            && let Some(max) = self.limits.nodes
            && self.ctl.nodes.len() == 1
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

    /// The move-ordering view of this node (histories of the moves leading here).
    #[inline(always)]
    fn order_ctx(&self, ply: usize) -> OrderCtx<'_> {
        OrderCtx {
            pos: self.pos.current(),
            data: self.data,
            prev1: self.frame(ply).moved,
            prev2: if ply >= 1 {
                self.frame(ply - 1).moved
            } else {
                None
            },
        }
    }

    fn update_quiet_histories(&mut self, best: &Move, quiets: &[Move], depth: i32, ply: usize) {
        let us = self.pos.current().turn();
        let bonus = history_bonus(depth);
        let prev1 = self.frame(ply).moved;
        let prev2 = if ply >= 1 {
            self.frame(ply - 1).moved
        } else {
            None
        };
        let apply = |data: &mut ThreadData, m: &Move, b: i32| {
            let from = m.from().map_or(0, |s| s as usize);
            let to = landing(m);
            gravity(&mut data.history[us as usize][from][to as usize], b);
            let cur = piece_to(us, m.role(), to);
            if let Some(p) = prev1 {
                gravity(&mut data.continuation[0][p][cur], b);
            }
            if let Some(p) = prev2 {
                gravity(&mut data.continuation[1][p][cur], b);
            }
        };
        apply(self.data, best, bonus);
        for m in quiets {
            apply(self.data, m, -bonus);
        }
        let f = self.frame_mut(ply);
        if f.killers[0] != Some(*best) {
            f.killers[1] = f.killers[0];
            f.killers[0] = Some(*best);
        }
    }

    fn update_capture_histories(&mut self, best: Option<&Move>, captures: &[Move], depth: i32) {
        let us = self.pos.current().turn();
        let bonus = history_bonus(depth);
        let mut apply = |m: &Move, b: i32| {
            if let Some(c) = m.capture() {
                let i = piece_to(us, m.role(), m.to());
                gravity(&mut self.data.capture[i][c as usize - 1], b);
            }
        };
        if let Some(m) = best {
            apply(m, bonus);
        }
        for m in captures {
            apply(m, -bonus);
        }
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
        self.frame_mut(ply + 2).killers = [None; 2];
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
            if depth <= 7
                && self.on(Ablation::RFP)
                && eval.abs() < MATE_BOUND
                && eval - 80 * (depth - improving as i32) >= beta
            {
                return (eval + beta) / 2;
            }
            // Null-move pruning.
            if depth >= 3
                && self.on(Ablation::NMP)
                && eval >= beta
                && static_eval >= beta - 20 * depth + 160
                && !self.frame(ply).null
                && beta > -MATE_BOUND
                && has_non_pawn_material(self.pos.current())
            {
                let r = 3 + depth / 3 + ((eval - beta) / 200).min(3);
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
        if depth >= 4 && self.on(Ablation::IIR) && tt_move == NO_MOVE && (pv_node || cut_node) {
            depth -= 1;
        }

        let tt_legal = from_packed(self.pos.current(), tt_move);
        let mut picker = if root {
            MovePicker::with_moves(self.root_moves.clone(), tt_legal)
        } else {
            MovePicker::main(tt_legal, self.frame(ply).killers)
        };

        let mut best_score = -INFINITE;
        let mut best_move: Option<Move> = None;
        let mut searched = 0usize;
        // Moves tried without success, for the history maluses (the tail may be forgotten).
        let mut quiets: ArrayVec<Move, 64> = ArrayVec::new();
        let mut captures: ArrayVec<Move, 32> = ArrayVec::new();
        let lmp_limit = (3 + depth * depth) as usize / if improving { 1 } else { 2 };
        let d_index = (depth as usize).min(63);

        loop {
            let next = picker.next(self.pos.current(), &self.order_ctx(ply));
            let Some((m, kind, order)) = next else { break };
            let key = self.prefetch_child(&m);
            let quiet = is_quiet(&m);
            let reduction = self.data.reductions[d_index][searched.min(63)] as i32;
            if !root && best_score > -MATE_BOUND {
                let lmr_depth = (depth - 1 - reduction).max(0);
                if quiet {
                    if searched >= lmp_limit && self.on(Ablation::LMP) {
                        picker.skip_quiets();
                        continue;
                    }
                    if !in_check
                        && lmr_depth <= 6
                        && self.on(Ablation::FUTILITY)
                        && static_eval + 120 + 90 * lmr_depth <= alpha
                    {
                        continue;
                    }
                    if lmr_depth <= 6
                        && self.on(Ablation::SEE)
                        && !see_ge(self.pos.current(), &m, -25 * lmr_depth * lmr_depth)
                    {
                        continue;
                    }
                } else if depth <= 6
                    && self.on(Ablation::SEE)
                    && kind == Kind::BadCapture
                    && !see_ge(self.pos.current(), &m, -90 * depth)
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
                if depth >= 3
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
                        Kind::Quiet => r -= order / 8_000,
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

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    if pv_node {
                        self.update_pv(ply, pack(&m));
                    }
                    if root {
                        self.iteration_best = Some((pack(&m), score));
                    }
                    if score >= beta {
                        if quiet {
                            self.update_quiet_histories(&m, &quiets, depth, ply);
                        }
                        self.update_capture_histories((!quiet).then_some(&m), &captures, depth);
                        break;
                    }
                    alpha = score;
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
                eval: if static_eval == NO_EVAL {
                    0
                } else {
                    static_eval as i16
                },
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
                    if static_eval + gain + 200 <= alpha {
                        best_score = best_score.max(static_eval + gain + 200);
                        continue;
                    }
                }
                if !see_ge(self.pos.current(), &m, 0) {
                    continue;
                }
            } else if best_score > -MATE_BOUND && is_quiet(&m) && searched >= 3 {
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
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = pack(&m);
                    if score >= beta {
                        break;
                    }
                    alpha = score;
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
                eval: if static_eval == NO_EVAL {
                    0
                } else {
                    static_eval as i16
                },
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
        let mut delta = 20;
        let (mut alpha, mut beta) =
            if depth >= 4 && self.on(Ablation::ASPIRATION) && previous.abs() < MATE_BOUND {
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
            if delta > 1_000 {
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
    fn iterate(
        &mut self,
        report: &dyn Fn(&Iteration, &SearchControl, &TranspositionTable),
    ) -> Option<Iteration> {
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
                self.ctl.nodes[0].0.store(self.nodes, Ordering::Relaxed);
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
        self.ctl.nodes[self.id]
            .0
            .store(self.nodes, Ordering::Relaxed);
        last
    }
}

/// A search to run: the root, the game's earlier positions, the limits and shared tables.
pub struct SearchJob<'a> {
    /// The root position.
    pub root: &'a Chess,
    /// Hashes of the game's positions before the root ([`super::zobrist::hash`]), oldest first.
    pub history: &'a [u64],
    /// The limits.
    pub limits: &'a Limits,
    /// The shared transposition table.
    pub tt: &'a TranspositionTable,
    /// The shared control (stop, ponder, node counts): one counter per thread.
    pub control: &'a SearchControl,
}

/// Runs a search with one thread per entry of `threads` (the first is the calling thread),
/// each with an evaluator from `make_eval`. `report` is called by the main thread after each
/// iteration. In `infinite` and ponder mode the result is held back until `stop`/`ponderhit`.
/// Evaluator errors ([`Evaluator::take_error`]) of all threads come back beside the result.
pub fn run<E, F>(
    job: &SearchJob<'_>,
    threads: &mut [ThreadData],
    make_eval: F,
    report: &(dyn Fn(&Iteration, &SearchControl, &TranspositionTable) + Sync),
) -> (SearchResult, Vec<String>)
where
    E: Evaluator,
    F: Fn() -> E + Sync,
{
    let (main_data, helpers) = threads
        .split_first_mut()
        .expect("a search needs at least one thread");
    job.tt.new_search();
    let shared = (job.tt, job.control, job.limits);
    let mut main = Searcher::new(0, job.root, job.history, make_eval(), shared, main_data);
    let has_moves = !main.root_moves.is_empty();
    let mut errors = Vec::new();
    let last = if has_moves {
        std::thread::scope(|s| {
            let mut handles = Vec::new();
            for (i, data) in helpers.iter_mut().enumerate() {
                let make_eval = &make_eval;
                let spawned = std::thread::Builder::new()
                    .name(format!("search-{}", i + 1))
                    .stack_size(SEARCH_STACK_BYTES)
                    .spawn_scoped(s, move || {
                        let mut helper =
                            Searcher::new(i + 1, job.root, job.history, make_eval(), shared, data);
                        helper.iterate(&|_, _, _| {});
                        helper.eval.take_error()
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => errors.push(format!("cannot start search thread {}: {e}", i + 1)),
                }
            }
            let last = main.iterate(report);
            wait_for_release(job.limits, job.control);
            job.control.stop();
            for h in handles {
                match h.join() {
                    Ok(Some(e)) => errors.push(e),
                    Ok(None) => {}
                    Err(_) => errors.push("a helper search thread failed".to_string()),
                }
            }
            last
        })
    } else {
        wait_for_release(job.limits, job.control);
        None
    };
    if let Some(e) = main.eval.take_error() {
        errors.insert(0, e);
    }
    errors.dedup();
    let best = last
        .as_ref()
        .and_then(|it| it.pv.first().copied())
        .or_else(|| main.root_moves.first().copied());
    let ponder = best.and_then(|b| {
        last.as_ref()
            .and_then(|it| it.pv.get(1).copied())
            .or_else(|| ponder_from_tt(job.root, &b, job.tt))
    });
    let result = SearchResult {
        best,
        ponder,
        last: last.unwrap_or(Iteration {
            depth: 0,
            seldepth: 0,
            score: if job.root.is_check() && !has_moves {
                -MATE
            } else {
                0
            },
            pv: Vec::new(),
        }),
        nodes: job.control.total_nodes(),
        elapsed: job.control.since_go(),
    };
    (result, errors)
}

/// Stack size of search threads: the recursion keeps a move list per ply.
pub const SEARCH_STACK_BYTES: usize = 16 << 20;

/// In `go infinite` and while pondering, the answer must wait for `stop` (or `ponderhit`).
fn wait_for_release(limits: &Limits, control: &SearchControl) {
    while !control.is_stopped() && (limits.infinite || control.is_pondering()) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn ponder_from_tt(root: &Chess, best: &Move, tt: &TranspositionTable) -> Option<Move> {
    let mut pos = root.clone();
    pos.play_unchecked(*best);
    let key = super::zobrist::hash(&pos);
    let e = tt.probe(key)?;
    unpack(&pos, e.mv)
}

/// The UCI `info` line of an iteration.
pub fn info_line(it: &Iteration, control: &SearchControl, tt: &TranspositionTable) -> String {
    let nodes = control.total_nodes();
    let elapsed = control.since_go();
    let ms = elapsed.as_millis();
    let nps = (nodes as f64 / elapsed.as_secs_f64().max(1e-6)) as u64;
    let mut line = format!(
        "info depth {} seldepth {} multipv 1 score {} nodes {} nps {} hashfull {} time {} pv",
        it.depth,
        it.seldepth.max(it.depth),
        uci_score(it.score),
        nodes,
        nps,
        tt.hashfull(),
        ms
    );
    for m in &it.pv {
        line.push(' ');
        line.push_str(&UciMove::from_standard(*m).to_string());
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eval::Builtin;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn search(fen: &str, limits: Limits, threads: usize) -> SearchResult {
        let root = pos(fen);
        let tt = TranspositionTable::new(8).unwrap();
        let control = SearchControl::new(threads, false);
        let mut data: Vec<ThreadData> = (0..threads).map(|_| ThreadData::new()).collect();
        let job = SearchJob {
            root: &root,
            history: &[],
            limits: &limits,
            tt: &tt,
            control: &control,
        };
        let (result, errors) = run(&job, &mut data, || Builtin, &|it, c, t| {
            eprintln!("{}", info_line(it, c, t))
        });
        assert!(errors.is_empty(), "{errors:?}");
        result
    }

    fn depth(d: u32) -> Limits {
        Limits {
            depth: Some(d),
            ..Limits::default()
        }
    }

    #[test]
    fn finds_mate_in_one_and_scores_it() {
        let r = search("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", depth(4), 1);
        assert_eq!(uci_move(r.best.as_ref()), "d1d8");
        assert_eq!(uci_score(r.last.score), "mate 1");
    }

    #[test]
    fn finds_mate_in_two() {
        // 1. Nf6+ gxf6 2. Bxf7#.
        let r = search(
            "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
            depth(6),
            1,
        );
        assert_eq!(uci_score(r.last.score), "mate 2");
        assert_eq!(uci_move(r.best.as_ref()), "d5f6");
    }

    #[test]
    fn mated_and_stalemated_roots_have_no_move() {
        let mated = search("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", depth(3), 1);
        assert_eq!(mated.best, None);
        assert_eq!(mated.last.score, -MATE);
        let stalemate = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", depth(3), 1);
        assert_eq!(stalemate.best, None);
        assert_eq!(stalemate.last.score, 0);
    }

    #[test]
    fn wins_hanging_material() {
        let r = search("6k1/8/8/3q4/8/8/3R4/3RK3 w - - 0 1", depth(5), 1);
        assert_eq!(uci_move(r.best.as_ref()), "d2d5");
        assert!(r.last.score > 800, "{}", r.last.score);
    }

    #[test]
    fn avoids_stalemating_when_winning() {
        // Kxa... any move except Qb6/Qc7-type stalemates; the search must not stalemate.
        let r = search("k7/8/1Q6/8/8/8/8/6K1 w - - 0 1", depth(5), 1);
        let mut p = pos("k7/8/1Q6/8/8/8/8/6K1 w - - 0 1");
        p.play_unchecked(r.best.unwrap());
        assert!(!p.is_stalemate());
    }

    #[test]
    fn fixed_depth_search_is_deterministic() {
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let a = search(fen, depth(7), 1);
        let b = search(fen, depth(7), 1);
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.best, b.best);
        assert_eq!(a.last.depth, 7);
    }

    #[test]
    fn each_ablated_technique_changes_the_tree_and_keeps_the_mate() {
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let full = search(fen, depth(8), 1);
        let mut seen = Ablation::default();
        for &(name, technique) in &Ablation::TECHNIQUES {
            // Each technique has a bit of its own.
            assert_eq!(technique.0.count_ones(), 1, "{name}");
            assert!(seen.on(technique), "{name} shares a bit");
            seen.0 |= technique.0;
            let ablation = Ablation::parse(name).unwrap();
            assert_eq!(ablation, technique);
            assert_eq!(ablation.names(), *name);
            let limits = Limits {
                ablation,
                ..depth(8)
            };
            let r = search(fen, limits.clone(), 1);
            assert_ne!(r.nodes, full.nodes, "switching off {name} changed nothing");
            // Mate in two is found whatever is switched off.
            let mate = search(
                "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
                Limits {
                    ablation,
                    ..depth(6)
                },
                1,
            );
            assert_eq!(uci_score(mate.last.score), "mate 2", "without {name}");
        }
    }

    #[test]
    fn ablation_lists_parse_and_refuse_unknown_names() {
        let set = Ablation::parse("rfp, LMR nmp").unwrap();
        assert!(set.off(Ablation::RFP) && set.off(Ablation::LMR) && set.off(Ablation::NMP));
        assert!(set.on(Ablation::LMP));
        assert_eq!(set.names(), "rfp,nmp,lmr");
        assert_eq!(Ablation::parse("").unwrap(), Ablation::default());
        assert_eq!(Ablation::parse("<empty>").unwrap(), Ablation::default());
        let e = Ablation::parse("rfp,warp-drive").unwrap_err();
        assert!(e.contains("'warp-drive'") && e.contains("lmr"), "{e}");
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
        let r = search("6k1/8/8/3q4/8/8/3R4/3RK3 w - - 0 1", depth(8), 2);
        assert_eq!(uci_move(r.best.as_ref()), "d2d5");
    }

    #[test]
    fn bare_kings_are_a_draw() {
        let r = search("8/8/8/8/8/2k5/8/K7 w - - 0 1", depth(6), 1);
        assert_eq!(r.last.score, 0);
    }

    #[test]
    fn mate_scores_are_reported_in_moves() {
        assert_eq!(uci_score(MATE - 1), "mate 1");
        assert_eq!(uci_score(MATE - 3), "mate 2");
        assert_eq!(uci_score(-MATE + 2), "mate -1");
        assert_eq!(uci_score(-MATE), "mate 0");
        assert_eq!(uci_score(35), "cp 35");
    }
}
