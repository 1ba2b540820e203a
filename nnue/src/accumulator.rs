//! Incremental evaluation for a search: a stack of accumulator states, pushed after a move and
//! popped to undo it, with no heap allocation on the per-move path.
//!
//! Per perspective the stack keeps
//! - one L1-wide `i16` accumulator per ply (`acc = b1 + Σ W1[i]` over the active indices i), in
//!   one preallocated 64-byte aligned buffer: a push writes the child's accumulators from the
//!   parent's (copy-make: the parent stays intact, so a pop is free for the accumulators);
//! - a count per feature index, because a block may emit an index several times and the network
//!   input is binary: a row is added when a count goes 0 → 1 and subtracted when it goes 1 → 0.
//!   The counts are updated in place and undone from an undo log of the count changes (a few
//!   entries per move; copying 2·N counts per ply would cost far more, see the benchmarks).
//!   A set whose blocks all promise binary counts ([`FeatureSet::binary`], checked by the
//!   conformance kit) keeps none: its deltas are the rows themselves.
//!
//! A move's delta comes from [`FeatureSet::delta_into`] (one call per block, both perspectives;
//! none for a block the move's roles cannot change). A set without counts whose terms are each
//! one run of the first layer's storage (every network this project writes) has it written
//! straight into both perspectives' row lists ([`DeltaRows`]); the others through
//! [`FeatureDelta`], whose additions are counted before its removals, so an index that is
//! removed and added again by the same move costs nothing. A perspective whose delta asks for a refresh is recomputed from the
//! new board with [`FeatureSet::active`]; for a set that refreshes only when a perspective's own
//! king moves, through a [`RefreshCache`] that applies only the difference to the accumulator
//! last seen with the king on that square.
//!
//! A set that mixes such king-relative terms with terms the cache cannot serve (threats and
//! mobility are not sums over pieces) sorts its terms into two *groups*: group 0 holds the
//! cacheable terms, group 1 the others. The stack still keeps one accumulator per ply and
//! perspective, their sum (Stockfish keeps one accumulator of its HalfKAv2_hm, threat and pair
//! rows for the same reason: a move writes one accumulator, and the network reads it as it is).
//! [`FeatureDelta::refresh_terms`] says which terms asked for a refresh. A king move that asks
//! only group 0 to refresh is Stockfish's *hybrid* update (`update_accumulator_hybrid`,
//! `src/nnue/nnue_accumulator.cpp` at 762dd1da9): the child is the parent, less group 0 of the
//! position before the move (the cache's entry of the old king square, brought up to date),
//! plus group 0 of the position after it (the entry of the new king square), plus group 1's
//! delta rows, on boards of at least [`MIN_PIECES_FOR_HYBRID`] pieces, as Stockfish. When group
//! 1 asks too (threats: the king changing side), or the board has fewer pieces, the child is the
//! cache's group 0 plus every row of group 1.

use std::fmt;

use plugin_api::{BlockError, Board, Color, FeatureDelta, FeatureSet, Move, ProductScratch};

use super::aligned::AlignedVec;
use super::delta_rows::DeltaRows;
use super::first_layer::RowLists;
use super::forward::{self, ForwardScratch};
use super::grouping::{Group, Grouping};
use super::load::Nnue;
use super::network::Network;
use super::refresh_cache::{CacheStats, CachedTerms, RefreshCache};
use super::simd::{Kernels, PerspectiveUpdate};

/// Default number of plies a stack holds beyond its root.
pub const DEFAULT_MAX_PLY: usize = 256;

/// The fewest pieces on the board after a king move for the hybrid update (Stockfish's
/// `MIN_PC_COUNT_HYBRID`, `AccumulatorStack::evaluate_side` in `src/nnue/nnue_accumulator.cpp`
/// at 762dd1da9): with fewer, group 1 has few rows, and refreshing it whole costs less than the
/// second cache refresh and the passes that a hybrid update adds (4% of `host eval --games` on
/// today's shape at AVX-512 VNNI, where random games reach sparse boards).
pub const MIN_PIECES_FOR_HYBRID: u32 = 15;

/// Log entry bit: the change was an increment (undo decrements).
const LOG_INC: u32 = 1 << 30;
/// Log entry bit: the change was for Black's perspective.
const LOG_BLACK: u32 = 1 << 31;
/// Log entry bits holding the feature index.
const LOG_INDEX: u32 = LOG_INC - 1;

/// Why the stack could not follow a move. `Display` is one line. After an error the stack is
/// unchanged (the failed push is rolled back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A feature block failed (a panic inside a plugin, a buffer overflow in `active`).
    Block(BlockError),
    /// A block emitted an index outside the feature set.
    IndexOutOfRange {
        /// The index (offset into the whole feature set).
        index: u32,
        /// The feature set's size.
        size: u32,
    },
    /// A block removed an index that was not active.
    CountUnderflow {
        /// The index.
        index: u32,
        /// The perspective.
        perspective: Color,
    },
    /// A count exceeded 65535 (a block that adds without ever removing).
    CountOverflow {
        /// The index.
        index: u32,
    },
    /// A push beyond the stack's capacity.
    TooDeep {
        /// The capacity in plies.
        max_ply: usize,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Block(e) => e.fmt(f),
            EvalError::IndexOutOfRange { index, size } => write!(
                f,
                "a feature block emitted index {index}, outside the feature set's {size} indices"
            ),
            EvalError::CountUnderflow { index, perspective } => write!(
                f,
                "a feature block removed index {index} from {perspective:?}'s perspective, where it was not active"
            ),
            EvalError::CountOverflow { index } => {
                write!(f, "feature index {index} was added more than 65535 times")
            }
            EvalError::TooDeep { max_ply } => {
                write!(f, "the accumulator stack holds at most {max_ply} plies")
            }
        }
    }
}

impl std::error::Error for EvalError {}

impl From<BlockError> for EvalError {
    fn from(e: BlockError) -> Self {
        EvalError::Block(e)
    }
}

/// Counters of what the stack did (for benchmarks and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackStats {
    /// Perspectives recomputed from scratch on a push.
    pub refreshes: u64,
    /// Perspectives updated incrementally on a push.
    pub updates: u64,
    /// Rows added or subtracted by incremental updates.
    pub rows: u64,
    /// Rows summed or applied by refreshes after a move (through the cache where it is on).
    pub refresh_rows: u64,
    /// Perspectives updated by a king move's hybrid update (see the module docs): group 0
    /// from the cache, group 1 incremental.
    pub hybrids: u64,
}

/// The evaluator of one search thread: accumulators and counts for a root position and up to
/// `max_ply` moves on top of it.
pub struct AccumulatorStack<'a> {
    nnue: &'a Nnue,
    kernels: Kernels,
    l1: usize,
    n: usize,
    max_ply: usize,
    ply: usize,
    boards: Vec<Board>,
    /// The terms in one group, or two: those a cache serves and the others.
    grouping: Grouping,
    /// The cache of group 0's refreshes, if it is on.
    cache: Option<RefreshCache>,
    /// `(max_ply + 1) × 2 × L1`: ply-major, then perspective.
    acc: AlignedVec<i16>,
    /// PSQT buckets B (0: the network has no PSQT term).
    buckets: usize,
    /// `(max_ply + 1) × 2 × B` PSQT sums, laid out as `acc`.
    psqt: Vec<i32>,
    /// The forward pass's buffers.
    scratch: ForwardScratch,
    /// `2 × N` counts, perspective-major.
    counts: Vec<u16>,
    /// Count changes since the root, `log_marks[p]` = log length before ply p's push.
    log: Vec<u32>,
    log_marks: Vec<usize>,
    /// A move's delta, offset into the set's indices: for sets that keep counts, or whose terms
    /// are not one run of storage each.
    delta: FeatureDelta,
    /// A move's delta as rows, both perspectives, for the other sets (see [`DeltaRows`]).
    delta_rows: Option<DeltaRows>,
    /// The scratch lists of the products' deltas written into `delta_rows`.
    product_scratch: ProductScratch,
    /// Per perspective, the terms the last push's delta asked to refresh.
    refresh_terms: [u64; 2],
    /// The rows a push or refresh adds and subtracts, by storage.
    rows: RowLists,
    active: Vec<u32>,
    /// Group 0's accumulators (and PSQT sums) of the positions before and after a king move,
    /// from the cache: what a hybrid update takes out and puts in.
    group0: [AlignedVec<i16>; 2],
    group0_psqt: [[i32; crate::shape::MAX_BUCKETS]; 2],
    stats: StackStats,
}

impl<'a> AccumulatorStack<'a> {
    /// A stack for `nnue` using `kernels`, holding [`DEFAULT_MAX_PLY`] plies. Its root is the
    /// empty board until [`reset`](Self::reset).
    pub fn new(nnue: &'a Nnue, kernels: Kernels) -> Self {
        Self::with_max_ply(nnue, kernels, DEFAULT_MAX_PLY)
    }

    /// A stack holding `max_ply` plies beyond its root. Everything the per-move path needs is
    /// allocated here.
    pub fn with_max_ply(nnue: &'a Nnue, kernels: Kernels, max_ply: usize) -> Self {
        let net = nnue.arranged().network();
        let set = nnue.features();
        let (l1, n) = (net.l1(), net.n());
        let max_delta = set.max_delta();
        let max_active = set.max_active();
        // Per ply and perspective: added + removed of a delta, or old + new indices of a refresh.
        let per_ply = 2 * 2 * max_delta.max(max_active);
        let grouping = Grouping::of(set);
        // A binary group's counts would only mirror membership: none are kept.
        let counted = grouping.iter().any(|group| group.counted);
        let buckets = net.arch().psqt_buckets;
        let mut stack = AccumulatorStack {
            nnue,
            kernels,
            l1,
            n,
            max_ply,
            ply: 0,
            boards: vec![Board::default_empty(); max_ply + 1],
            acc: AlignedVec::zeroed((max_ply + 1) * 2 * l1),
            buckets,
            psqt: vec![0; (max_ply + 1) * 2 * buckets],
            scratch: ForwardScratch::new(net),
            rows: RowLists::with_capacity(2 * max_delta.max(max_active)),
            grouping,
            cache: None,
            counts: if counted { vec![0; 2 * n] } else { Vec::new() },
            log: Vec::with_capacity(per_ply * max_ply),
            log_marks: vec![0; max_ply + 1],
            delta: set.delta_buffer(),
            delta_rows: match counted {
                false => DeltaRows::new(set, net),
                true => None,
            },
            product_scratch: set.product_scratch(),
            refresh_terms: [0; 2],
            active: Vec::with_capacity(max_active),
            group0: [AlignedVec::zeroed(l1), AlignedVec::zeroed(l1)],
            group0_psqt: [[0; crate::shape::MAX_BUCKETS]; 2],
            stats: StackStats::default(),
        };
        stack.set_refresh_cache(true);
        // The empty board has no active index: accumulators are the bias.
        for p in 0..2 {
            stack.slot_mut(0, p).copy_from_slice(net.b1());
        }
        stack
    }

    /// The network and feature set.
    pub fn nnue(&self) -> &'a Nnue {
        self.nnue
    }

    /// The kernels in use.
    pub fn kernels(&self) -> Kernels {
        self.kernels
    }

    /// Moves pushed since the root.
    pub fn ply(&self) -> usize {
        self.ply
    }

    /// Capacity in plies.
    pub fn max_ply(&self) -> usize {
        self.max_ply
    }

    /// The current board.
    pub fn board(&self) -> &Board {
        &self.boards[self.ply]
    }

    /// What the stack did since it was made.
    pub fn stats(&self) -> StackStats {
        self.stats
    }

    /// Number of term groups: 1, or 2 when the set mixes terms a [`RefreshCache`] can serve
    /// (king-relative piece-square terms) with others (threats), which then refresh on their
    /// own triggers only.
    pub fn groups(&self) -> usize {
        self.grouping.len()
    }

    /// Turns the [`RefreshCache`] on or off (on by default; off, every refresh sums all rows).
    /// Only terms that are binary, piecewise and refreshed on own king moves can use it; for
    /// others it stays off. The results are the same either way.
    pub fn set_refresh_cache(&mut self, on: bool) {
        let set = self.nnue.features();
        self.cache = (on && self.grouping.cacheable())
            .then(|| RefreshCache::new(self.l1, self.buckets, set.max_active()));
    }

    /// What the refresh cache did, if it is on.
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(RefreshCache::stats)
    }

    /// The current accumulator of `perspective` (L1 values; with two groups their sum, which
    /// is what the network reads).
    pub fn accumulator(&self, perspective: Color) -> Vec<i16> {
        self.slot(self.ply, perspective.index()).to_vec()
    }

    /// How many times the current position emits `index` from `perspective`; `None` for a
    /// binary set, which keeps no counts.
    pub fn count(&self, perspective: Color, index: u32) -> Option<u16> {
        self.counts
            .get(perspective.index() * self.n + index as usize)
            .copied()
    }

    /// Checks that an index lies in the feature set.
    #[inline(always)]
    fn in_range(&self, index: u32) -> Result<(), EvalError> {
        if (index as usize) < self.n {
            Ok(())
        } else {
            Err(EvalError::IndexOutOfRange {
                index,
                size: self.n as u32,
            })
        }
    }

    /// Checks that every index of `indices` lies in the feature set (the error names the first
    /// that does not): one comparison per index, for lists whose indices are the rows.
    #[inline(always)]
    fn all_in_range<'i>(
        &self,
        indices: impl IntoIterator<Item = &'i u32>,
    ) -> Result<(), EvalError> {
        match indices.into_iter().find(|&&i| i as usize >= self.n) {
            Some(&index) => self.in_range(index),
            None => Ok(()),
        }
    }

    /// Whether counts are kept for feature `index` (in range).
    #[inline(always)]
    fn is_counted(&self, index: u32) -> bool {
        self.grouping.group_of(index).counted
    }

    #[inline(always)]
    fn slot_start(&self, ply: usize, p: usize) -> usize {
        (ply * 2 + p) * self.l1
    }

    /// Where the PSQT sums of `ply` and `p` start in `psqt`.
    #[inline(always)]
    fn psqt_start(&self, ply: usize, p: usize) -> usize {
        (ply * 2 + p) * self.buckets
    }

    fn slot(&self, ply: usize, p: usize) -> &[i16] {
        let start = self.slot_start(ply, p);
        &self.acc[start..start + self.l1]
    }

    fn slot_mut(&mut self, ply: usize, p: usize) -> &mut [i16] {
        let start = self.slot_start(ply, p);
        &mut self.acc[start..start + self.l1]
    }

    /// Makes `board` the root: drops every pushed ply and recomputes both perspectives.
    pub fn reset(&mut self, board: &Board) -> Result<(), EvalError> {
        self.ply = 0;
        self.log.clear();
        self.counts.fill(0);
        self.boards[0] = *board;
        for p in Color::ALL {
            if let Err(e) = self.refresh(p, board, 0) {
                self.counts.fill(0);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Writes ply `ply`'s accumulator of `p` for `board`: `b1` plus the rows of the distinct
    /// indices, counted (the increments logged when `ply > 0`). After a move (`ply > 0`) group
    /// 0's terms come from the cache when it is on and engaged; the other terms are summed.
    fn refresh(&mut self, p: Color, board: &Board, ply: usize) -> Result<(), EvalError> {
        let set: &FeatureSet = self.nnue.features();
        let net = self.nnue.arranged().network();
        let start = self.slot_start(ply, p.index());
        let psqt_at = self.psqt_start(ply, p.index());
        let b = self.buckets;
        let zero = [0i32; crate::shape::MAX_BUCKETS];
        // Group 0 from the cache, into the slot (one group) or the scratch (two).
        let mut from_cache = false;
        if let (Some(cache), Some(king), true) = (&mut self.cache, board.king(p), ply > 0)
            && cache.engaged()
        {
            let mask = self.grouping.first().mask;
            let (dst, psqt) = match self.grouping {
                Grouping::One { .. } => (
                    &mut self.acc[start..start + self.l1],
                    &mut self.psqt[psqt_at..psqt_at + b],
                ),
                Grouping::Two { .. } => (&mut self.group0[0][..], &mut self.group0_psqt[0][..b]),
            };
            let terms = CachedTerms {
                kernels: self.kernels,
                set,
                mask,
                net,
            };
            let rows = cache.refresh(&terms, (board, p, king), (dst, psqt))?;
            self.stats.refresh_rows += rows as u64;
            if let Grouping::One { .. } = self.grouping {
                return Ok(());
            }
            from_cache = true;
        }
        let mask = match (from_cache, self.grouping.rest()) {
            (true, Some(rest)) => rest.mask,
            _ => u64::MAX,
        };
        let base = p.index() * self.n;
        self.rows.clear();
        if let Some(delta) = &self.delta_rows {
            // Binary terms of one run each: the blocks write the rows themselves.
            let mut target = delta.active_rows(&mut self.rows);
            set.active_into(board, p, mask, &mut target, &mut self.active)?;
        } else if self.counts.is_empty() {
            // Binary terms: every index is a row, no count to look up.
            self.active.clear();
            set.active_terms(board, p, mask, &mut self.active)?;
            self.all_in_range(&self.active)?;
            self.rows.extend(net.w1(), &self.active, &[]);
        } else {
            self.active.clear();
            set.active_terms(board, p, mask, &mut self.active)?;
            for k in 0..self.active.len() {
                let index = self.active[k];
                let counted = self.is_counted(index);
                if self.bump(p, base, index, ply > 0, counted)? == 1 {
                    self.rows.add(net.w1(), index);
                }
            }
        }
        let dst = &mut self.acc[start..start + self.l1];
        let psqt = &mut self.psqt[psqt_at..psqt_at + b];
        let (origin, psqt_origin) = match from_cache {
            true => (&self.group0[0][..], &self.group0_psqt[0][..b]),
            false => (net.b1(), &zero[..b]),
        };
        update_rows(
            self.kernels,
            net,
            (dst, origin),
            (psqt, psqt_origin),
            &self.rows,
        );
        if ply > 0 {
            self.stats.refresh_rows += self.rows.len() as u64;
        }
        Ok(())
    }

    /// Increments a count (logged if `log`) of a group that keeps them (`counted`); returns the
    /// new count (1 for a binary group, which keeps none).
    #[inline(always)]
    fn bump(
        &mut self,
        p: Color,
        base: usize,
        index: u32,
        log: bool,
        counted: bool,
    ) -> Result<u16, EvalError> {
        self.in_range(index)?;
        if !counted {
            return Ok(1);
        }
        let c = &mut self.counts[base + index as usize];
        *c = c.checked_add(1).ok_or(EvalError::CountOverflow { index })?;
        let new = *c;
        if log {
            self.log_push(p, index | LOG_INC);
        }
        Ok(new)
    }

    /// Decrements a count (always logged) of a group that keeps them (`counted`); returns the
    /// new count (0 for a binary group).
    #[inline(always)]
    fn drop_count(
        &mut self,
        p: Color,
        base: usize,
        index: u32,
        counted: bool,
    ) -> Result<u16, EvalError> {
        self.in_range(index)?;
        if !counted {
            return Ok(0);
        }
        let c = &mut self.counts[base + index as usize];
        *c = c.checked_sub(1).ok_or(EvalError::CountUnderflow {
            index,
            perspective: p,
        })?;
        let new = *c;
        self.log_push(p, index);
        Ok(new)
    }

    #[inline(always)]
    fn log_push(&mut self, p: Color, entry: u32) {
        let entry = entry | if p == Color::Black { LOG_BLACK } else { 0 };
        // The capacity covers max_ply plies of the largest possible changes, so this never
        // reallocates; a plugin exceeding its declared bounds only costs an allocation.
        self.log.push(entry);
    }

    /// Reverts the count changes logged after `mark`.
    fn unwind(&mut self, mark: usize) {
        while self.log.len() > mark {
            let e = self.log.pop().expect("log is longer than mark");
            let base = if e & LOG_BLACK != 0 { self.n } else { 0 };
            let c = &mut self.counts[base + (e & LOG_INDEX) as usize];
            if e & LOG_INC != 0 {
                *c -= 1;
            } else {
                *c += 1;
            }
        }
    }

    /// Plays `mv` (legal in the current position) on top of the stack: asks the plugins for the
    /// move's delta and writes the child's accumulators. No heap allocation.
    pub fn push(&mut self, mv: &Move) -> Result<(), EvalError> {
        if self.ply == self.max_ply {
            return Err(EvalError::TooDeep {
                max_ply: self.max_ply,
            });
        }
        let nnue = self.nnue;
        let before = self.boards[self.ply];
        let set = nnue.features();
        self.refresh_terms = match &mut self.delta_rows {
            Some(rows) => {
                rows.clear();
                set.delta_into(&before, mv, rows, &mut self.product_scratch)?
            }
            None => {
                set.delta(&before, mv, &mut self.delta)?;
                Color::ALL.map(|p| self.delta.refresh_terms(p))
            }
        };
        let after = before.play(mv);
        let mark = self.log.len();
        if self.refresh_terms == [0; 2] && self.delta_rows.is_some() && self.buckets == 8 {
            // Neither perspective refreshed: both updated from the delta rows in one call.
            self.apply_both();
        } else {
            for p in Color::ALL {
                if let Err(e) = self.push_perspective(p, &before, &after) {
                    self.unwind(mark);
                    return Err(e);
                }
            }
        }
        self.ply += 1;
        self.boards[self.ply] = after;
        self.log_marks[self.ply] = mark;
        Ok(())
    }

    /// Writes perspective `p` of ply + 1: updated from the delta buffer when no term asks for a
    /// refresh; a king move that refreshes group 0 alone through the cache (the hybrid update);
    /// else refreshed.
    fn push_perspective(
        &mut self,
        p: Color,
        before: &Board,
        after: &Board,
    ) -> Result<(), EvalError> {
        let refresh = self.refresh_terms[p.index()];
        // The groups hold every term: no term asking is no group stale.
        if refresh == 0 {
            if self.delta_rows.is_none() {
                self.list_delta_rows(p, u64::MAX)?;
            }
            self.apply_rows(p);
            return Ok(());
        }
        let stale = |group: Group| group.mask & refresh != 0;
        if let Some(rest) = self.grouping.rest()
            && !stale(rest)
            && self.cache.is_some()
            && after.occupied().count_ones() >= MIN_PIECES_FOR_HYBRID
            && let (Some(old), Some(new)) = (before.king(p), after.king(p))
        {
            return self.king_move_child(p, rest, (before, old), (after, new));
        }
        self.refresh_child(p, before, after)
    }

    /// Lists in `rows` the rows of the delta buffer's indices for `p` of the groups whose terms
    /// are in `mask` (`u64::MAX`: every group), counting them where counts are kept.
    #[inline]
    fn list_delta_rows(&mut self, p: Color, mask: u64) -> Result<(), EvalError> {
        let base = p.index() * self.n;
        let net = self.nnue.arranged().network();
        let w1 = net.w1();
        self.rows.clear();
        if self.counts.is_empty() && mask == u64::MAX {
            // Binary counts (the thesis's and Stockfish's sets): the delta's indices are the
            // rows themselves.
            let (added, removed) = (self.delta.added(p), self.delta.removed(p));
            self.all_in_range(added.iter().chain(removed))?;
            self.rows.extend(w1, added, removed);
            return Ok(());
        }
        let added = self.delta.added(p).len();
        for k in 0..added {
            let index = self.delta.added(p)[k];
            let group = self.grouping.group_of(index);
            if group.mask & mask == 0 {
                continue;
            }
            if self.bump(p, base, index, true, group.counted)? == 1 {
                self.rows.add(w1, index);
            }
        }
        let removed = self.delta.removed(p).len();
        for k in 0..removed {
            let index = self.delta.removed(p)[k];
            let group = self.grouping.group_of(index);
            if group.mask & mask == 0 {
                continue;
            }
            if self.drop_count(p, base, index, group.counted)? == 0 {
                self.rows.sub(w1, index);
            }
        }
        Ok(())
    }

    /// Writes perspective `p` at ply + 1: ply's accumulator (and PSQT sums) plus the rows
    /// of the move's delta ([`DeltaRows`]) or, without them, those listed in `rows`.
    #[inline]
    fn apply_rows(&mut self, p: Color) {
        let net = self.nnue.arranged().network();
        let rows = match &self.delta_rows {
            Some(delta) => delta.of(p),
            None => &self.rows,
        };
        self.stats.updates += 1;
        self.stats.rows += rows.len() as u64;
        let ((src, dst), (psqt_src, psqt_dst)) = parent_and_child(
            (&mut self.acc, &mut self.psqt),
            (self.l1, self.buckets),
            2 * self.ply + p.index(),
        );
        update_rows(self.kernels, net, (dst, src), (psqt_dst, psqt_src), rows);
    }

    /// [`apply_rows`](Self::apply_rows) of both perspectives from the delta rows, with
    /// Stockfish's 8 PSQT buckets, in one kernel call.
    #[inline]
    fn apply_both(&mut self) {
        let net = self.nnue.arranged().network();
        let delta = self
            .delta_rows
            .as_ref()
            .expect("the caller checked the delta rows");
        let (l1, b, ply) = (self.l1, self.buckets, self.ply);
        let rows = Color::ALL.map(|p| delta.of(p));
        self.stats.updates += 2;
        self.stats.rows += (rows[0].len() + rows[1].len()) as u64;
        // Ply's two accumulators (White's, Black's), then the child's two; their PSQT sums
        // likewise.
        let (parents, children) = self.acc[2 * ply * l1..(2 * ply + 4) * l1].split_at_mut(2 * l1);
        let ((src_w, src_b), (dst_w, dst_b)) = (parents.split_at(l1), children.split_at_mut(l1));
        let sums: &mut [i32; 32] = (&mut self.psqt[2 * ply * b..(2 * ply + 4) * b])
            .try_into()
            .expect("8 buckets");
        let [psqt_parents, psqt_children] = sums.as_chunks_mut::<16>().0 else {
            unreachable!("32 sums");
        };
        let [psqt_src_w, psqt_src_b] = psqt_parents.as_chunks::<8>().0 else {
            unreachable!("16 sums");
        };
        let [psqt_dst_w, psqt_dst_b] = psqt_children.as_chunks_mut::<8>().0 else {
            unreachable!("16 sums");
        };
        let white = PerspectiveUpdate {
            dst: dst_w,
            src: src_w,
            psqt_dst: psqt_dst_w,
            psqt_src: psqt_src_w,
            rows: rows[0],
        };
        let black = PerspectiveUpdate {
            dst: dst_b,
            src: src_b,
            psqt_dst: psqt_dst_b,
            psqt_src: psqt_src_b,
            rows: rows[1],
        };
        self.kernels
            .update_both_with_psqt([white, black], net.w1(), net.psqt_rows());
    }

    /// The hybrid update of a king move that refreshes group 0 alone (Stockfish's
    /// `update_accumulator_hybrid`): group 0 of `before` with `p`'s king on `old` and of
    /// `after` with it on `new`, both from the cache (each entry brought up to its board), and
    /// ply + 1 = ply − the first + the second + group 1's delta rows. Taken whenever the board
    /// keeps [`MIN_PIECES_FOR_HYBRID`] pieces, even when the entries miss: then the rows of a
    /// refresh of both groups outnumber those of two cache refreshes.
    fn king_move_child(
        &mut self,
        p: Color,
        rest: Group,
        (before, old): (&Board, plugin_api::Square),
        (after, new): (&Board, plugin_api::Square),
    ) -> Result<(), EvalError> {
        let nnue = self.nnue;
        match &self.delta_rows {
            Some(delta) => {
                let (set, w1) = (nnue.features(), nnue.arranged().network().w1());
                delta.select(p, set, rest.mask, w1, &mut self.rows);
            }
            None => self.list_delta_rows(p, rest.mask)?,
        }
        let (set, net) = (nnue.features(), nnue.arranged().network());
        // Group 1's PSQT rows asked for now, so that their misses overlap with the two cache
        // refreshes (as `apply_rows` asks before its update).
        if self.buckets > 0 {
            self.rows.prefetch_psqt(net.psqt_rows(), self.buckets);
        }
        let (b, mask) = (self.buckets, self.grouping.first().mask);
        let cache = self.cache.as_mut().expect("the caller checked the cache");
        let [was, now] = &mut self.group0;
        let [was_psqt, now_psqt] = &mut self.group0_psqt;
        let (was_psqt, now_psqt) = (&mut was_psqt[..b], &mut now_psqt[..b]);
        let terms = CachedTerms {
            kernels: self.kernels,
            set,
            mask,
            net,
        };
        let rows = cache.refresh(&terms, (before, p, old), (was, was_psqt))?
            + cache.refresh(&terms, (after, p, new), (now, now_psqt))?;
        self.stats.refresh_rows += rows as u64;
        self.stats.hybrids += 1;
        self.stats.rows += self.rows.len() as u64;
        // now += parent − was: the parent with group 0 replaced, then group 1's rows.
        let ((parent, child), (psqt_parent, psqt_child)) = parent_and_child(
            (&mut self.acc, &mut self.psqt),
            (self.l1, b),
            2 * self.ply + p.index(),
        );
        self.kernels.add_difference(now, parent, &was[..]);
        for ((n, &w), &a) in now_psqt.iter_mut().zip(&*was_psqt).zip(psqt_parent) {
            *n = n.wrapping_add(a.wrapping_sub(w));
        }
        update_rows(
            self.kernels,
            net,
            (child, now),
            (psqt_child, now_psqt),
            &self.rows,
        );
        Ok(())
    }

    /// Full recomputation of perspective `p` into ply + 1: the counts of `before` are taken out
    /// (logged) and those of `after` put in (logged).
    fn refresh_child(&mut self, p: Color, before: &Board, after: &Board) -> Result<(), EvalError> {
        if !self.counts.is_empty() {
            let set = self.nnue.features();
            let base = p.index() * self.n;
            let mask = self
                .grouping
                .iter()
                .filter(|group| group.counted)
                .fold(0, |m, group| m | group.mask);
            self.active.clear();
            set.active_terms(before, p, mask, &mut self.active)?;
            for k in 0..self.active.len() {
                let index = self.active[k];
                self.drop_count(p, base, index, true)?;
            }
        }
        self.stats.refreshes += 1;
        self.refresh(p, after, self.ply + 1)
    }

    /// Undoes the last [`push`](Self::push). Panics at the root.
    pub fn pop(&mut self) {
        assert!(self.ply > 0, "pop at the root of the accumulator stack");
        let mark = self.log_marks[self.ply];
        self.unwind(mark);
        self.ply -= 1;
    }

    /// The network's output for the side to move of the current position.
    pub fn evaluate(&mut self) -> i32 {
        // The layers' kernels inlined into one copy per kernel version.
        self.kernels.compiled(
            #[inline(always)]
            |kernels| {
                let (nnue, l1, b) = (self.nnue, self.l1, self.buckets);
                let (acc, psqt, scratch, stm, pieces) = self.forward_inputs();
                let (s, o) = (stm.index(), 1 - stm.index());
                // By index, not by a branch on the side to move (which alternates every ply).
                let (white, black) = acc.split_at(l1);
                let (stm_acc, opp_acc) = ([white, black][s], [white, black][o]);
                forward::evaluate(
                    kernels,
                    nnue.arranged().network(),
                    stm_acc,
                    opp_acc,
                    (&psqt[s * b..(s + 1) * b], &psqt[o * b..(o + 1) * b]),
                    pieces,
                    scratch,
                )
            },
        )
    }
}

/// The accumulator slot `slot` (`2 · ply + perspective`) of `acc`, of `l1` values, and the one
/// two slots on (the same perspective at the next ply), apart; the same of the PSQT sums, of `b`
/// each: the parent a push reads and the child it writes. One check for each buffer instead of
/// one per bound of every slice.
#[inline(always)]
#[allow(clippy::type_complexity)]
fn parent_and_child<'s>(
    (acc, psqt): (&'s mut [i16], &'s mut [i32]),
    (l1, b): (usize, usize),
    slot: usize,
) -> ((&'s [i16], &'s mut [i16]), (&'s [i32], &'s mut [i32])) {
    let (parent, psqt_parent) = (slot * l1, slot * b);
    assert!(
        parent + 3 * l1 <= acc.len() && psqt_parent + 3 * b <= psqt.len(),
        "a ply past the stack"
    );
    let (acc, psqt) = (acc.as_mut_ptr(), psqt.as_mut_ptr());
    // SAFETY: both slots of each buffer lie inside it (asserted: the child ends at the parent
    // + 3 slots) and apart (the child starts 2 slots on, past the parent's end), and the
    // buffers are borrowed mutably for 's.
    unsafe {
        (
            (
                std::slice::from_raw_parts(acc.add(parent), l1),
                std::slice::from_raw_parts_mut(acc.add(parent + 2 * l1), l1),
            ),
            (
                std::slice::from_raw_parts(psqt.add(psqt_parent), b),
                std::slice::from_raw_parts_mut(psqt.add(psqt_parent + 2 * b), b),
            ),
        )
    }
}

/// Writes `dst` = `src` + the rows of `rows` in `net`'s first layer, and the PSQT sums
/// `psqt_dst` = `psqt_src` + theirs (none without buckets): Stockfish's 8 buckets in the
/// update's pass (its `apply_combined`), other counts in a pass of their own.
#[inline(always)]
fn update_rows(
    kernels: Kernels,
    net: &Network,
    (dst, src): (&mut [i16], &[i16]),
    (psqt_dst, psqt_src): (&mut [i32], &[i32]),
    rows: &RowLists,
) {
    if let (Ok(psqt_dst), Ok(psqt_src)) = (
        <&mut [i32; 8]>::try_from(&mut *psqt_dst),
        <&[i32; 8]>::try_from(psqt_src),
    ) {
        let (w1, psqt_rows) = (net.w1(), net.psqt_rows());
        kernels.update_with_psqt((dst, src), (psqt_dst, psqt_src), w1, psqt_rows, rows);
        return;
    }
    // The PSQT rows asked for before the update, so that their misses overlap with it (the
    // kernels ask for those of 8 buckets themselves).
    if !psqt_dst.is_empty() {
        rows.prefetch_psqt(net.psqt_rows(), psqt_dst.len());
    }
    kernels.update(dst, src, net.w1(), rows);
    if !psqt_dst.is_empty() {
        rows.apply_psqt(psqt_dst, psqt_src, net.psqt_rows());
    }
}

impl AccumulatorStack<'_> {
    /// The layers' inputs: both perspectives' accumulators (White's L1 values, then Black's)
    /// and PSQT sums (White's B, then Black's), with two groups their sum; the stack's scratch; the
    /// side to move and the piece count.
    #[inline]
    fn forward_inputs(&mut self) -> (&[i16], &[i32], &mut ForwardScratch, Color, u32) {
        let board = &self.boards[self.ply];
        // The piece count picks the stack and the PSQT bucket: not needed with one of each.
        let arch = self.nnue.arranged().network().arch();
        let pieces = match arch.stacks > 1 || arch.psqt_buckets > 1 {
            true => board.occupied().count_ones(),
            false => 0,
        };
        let stm = board.turn;
        let (l1, b) = (self.l1, self.buckets);
        // Both perspectives are contiguous (perspective is the innermost index).
        let start = self.slot_start(self.ply, 0);
        let at = self.psqt_start(self.ply, 0);
        (
            &self.acc[start..start + 2 * l1],
            &self.psqt[at..at + 2 * b],
            &mut self.scratch,
            stm,
            pieces,
        )
    }

    /// Every layer stack's raw terms on the current position (PSQT bucket k with stack k, the
    /// last bucket for stacks beyond them), and the stack the position uses: what
    /// `host eval --stacks` prints, like Stockfish's `eval` table.
    pub fn stack_outputs(&mut self) -> (Vec<forward::StackOutput>, usize) {
        let (kernels, nnue, l1, b) = (self.kernels, self.nnue, self.l1, self.buckets);
        let (acc, psqt, scratch, stm, pieces) = self.forward_inputs();
        let (s, o) = (stm.index(), stm.other().index());
        let net = nnue.arranged().network();
        let arch = net.arch();
        let outputs = (0..arch.stacks)
            .map(|k| {
                forward::stack_output(
                    kernels,
                    net,
                    &acc[s * l1..(s + 1) * l1],
                    &acc[o * l1..(o + 1) * l1],
                    (&psqt[s * b..(s + 1) * b], &psqt[o * b..(o + 1) * b]),
                    k,
                    k.min(b.saturating_sub(1)),
                    scratch,
                )
            })
            .collect();
        (outputs, arch.stack_of(pieces))
    }
}

/// An empty board, White to move (the root of a fresh stack).
trait EmptyBoard {
    fn default_empty() -> Board;
}

impl EmptyBoard for Board {
    fn default_empty() -> Board {
        Board {
            by_color: [0; 2],
            by_role: [0; 6],
            castling: 0,
            turn: Color::White,
            ep_square: plugin_api::NO_SQUARE,
        }
    }
}

impl Nnue {
    /// The output for the side to move of `board` from a fresh refresh (allocates an evaluator:
    /// for tools, not for a search).
    pub fn evaluate(&self, board: &Board, kernels: Kernels) -> Result<i32, EvalError> {
        let mut stack = AccumulatorStack::with_max_ply(self, kernels, 0);
        stack.reset(board)?;
        Ok(stack.evaluate())
    }
}
