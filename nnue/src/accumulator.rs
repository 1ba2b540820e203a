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
//! A move's delta comes from [`FeatureSet::delta`] (one call per block, both perspectives). Its
//! additions are counted before its removals, so an index that is removed and added again by the
//! same move costs nothing. A perspective whose delta asks for a refresh is recomputed from the
//! new board with [`FeatureSet::active`]; for a set that refreshes only when a perspective's own
//! king moves, through a [`RefreshCache`] that applies only the difference to the accumulator
//! last seen with the king on that square.
//!
//! A set that mixes such king-relative terms with terms the cache cannot serve (threats and
//! mobility are not sums over pieces) keeps its terms in two *parts*: part 0 holds the bias and
//! the cacheable terms, part 1 the others, and the network reads their sum.
//! [`FeatureDelta::refresh_terms`] says which terms asked for a refresh, so a king move
//! recomputes part 0 through the cache while part 1 stays incremental, and part 1 is recomputed
//! only when its own terms ask (for threats, the king changing side). Per ply and perspective
//! the stack keeps part 1's accumulator and the *sum* (in part 0's slot), never part 0's alone:
//! a move adds part 1's rows to both and part 0's to the sum, so the network reads the sum as it
//! is, with no pass that adds the parts (Stockfish keeps one accumulator of both for the same
//! reason). Part 0 alone is what the cache returns on a king move; the sum is then that plus
//! part 1's new accumulator.

use std::fmt;

use plugin_api::{
    BlockError, Board, Color, FeatureDelta, FeatureSet, Move, RefreshTrigger, term_bit,
};

use super::aligned::AlignedVec;
use super::first_layer::RowLists;
use super::forward::{self, ForwardScratch};
use super::load::Nnue;
use super::refresh_cache::{CacheStats, RefreshCache};
use super::simd::Kernels;

/// Default number of plies a stack holds beyond its root.
pub const DEFAULT_MAX_PLY: usize = 256;

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
}

/// A group of terms kept in an accumulator of their own (see the module docs): the terms a
/// [`RefreshCache`] can serve, or the others.
struct Part {
    /// The part's terms ([`plugin_api::term_bit`]).
    mask: u64,
    /// The cache of its refreshes, if it has one.
    cache: Option<RefreshCache>,
    /// Whether its terms can use a cache (binary, piecewise, refreshed on own king moves).
    cacheable: bool,
    /// Whether counts are kept for its indices (its terms are not all binary).
    counted: bool,
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
    /// One part, or two: the cacheable terms (part 0, holding the bias) and the others.
    parts: Vec<Part>,
    /// With two parts: the end of each term's indices and its part, in index order.
    term_parts: Vec<(u32, u8)>,
    /// `(max_ply + 1) × parts × 2 × L1`: ply-major, then part, then perspective.
    acc: AlignedVec<i16>,
    /// PSQT buckets B (0: the network has no PSQT term).
    buckets: usize,
    /// `(max_ply + 1) × parts × 2 × B` PSQT sums, laid out as `acc`.
    psqt: Vec<i32>,
    /// The forward pass's buffers.
    scratch: ForwardScratch,
    /// `2 × N` counts, perspective-major.
    counts: Vec<u16>,
    /// Count changes since the root, `log_marks[p]` = log length before ply p's push.
    log: Vec<u32>,
    log_marks: Vec<usize>,
    delta: FeatureDelta,
    /// The rows a push or refresh adds and subtracts, by part and storage.
    rows: Vec<RowLists>,
    active: Vec<u32>,
    /// L1 zeros: where the accumulators of parts other than 0 start.
    zeros: AlignedVec<i16>,
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
        let (parts, term_parts) = split_terms(set);
        // A binary part's counts would only mirror membership: none are kept.
        let counted = parts.iter().any(|part| part.counted);
        let buckets = net.arch().psqt_buckets;
        let mut stack = AccumulatorStack {
            nnue,
            kernels,
            l1,
            n,
            max_ply,
            ply: 0,
            boards: vec![Board::default_empty(); max_ply + 1],
            acc: AlignedVec::zeroed((max_ply + 1) * parts.len() * 2 * l1),
            buckets,
            psqt: vec![0; (max_ply + 1) * parts.len() * 2 * buckets],
            scratch: ForwardScratch::new(net),
            rows: (0..parts.len())
                .map(|_| RowLists::with_capacity(max_delta.max(max_active)))
                .collect(),
            parts,
            term_parts,
            counts: if counted { vec![0; 2 * n] } else { Vec::new() },
            log: Vec::with_capacity(per_ply * max_ply),
            log_marks: vec![0; max_ply + 1],
            delta: set.delta_buffer(),
            active: Vec::with_capacity(max_active),
            zeros: AlignedVec::zeroed(l1),
            stats: StackStats::default(),
        };
        stack.set_refresh_cache(true);
        // The empty board has no active index: accumulators are the bias (part 0) and zero.
        for p in 0..2 {
            stack.slot_mut(0, 0, p).copy_from_slice(net.b1());
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

    /// Number of accumulators per perspective: 1, or 2 when the set mixes terms a
    /// [`RefreshCache`] can serve (king-relative piece-square terms) with others (threats),
    /// which then refresh on their own triggers only.
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// Turns the [`RefreshCache`] on or off (on by default; off, every refresh sums all rows).
    /// Only terms that are binary, piecewise and refreshed on own king moves can use it; for
    /// others it stays off. The results are the same either way.
    pub fn set_refresh_cache(&mut self, on: bool) {
        let set = self.nnue.features();
        for part in &mut self.parts {
            part.cache = (on && part.cacheable)
                .then(|| RefreshCache::new(self.l1, self.buckets, set.max_active()));
        }
    }

    /// What the refresh cache did, if it is on.
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.parts
            .iter()
            .find_map(|p| p.cache.as_ref().map(RefreshCache::stats))
    }

    /// The current accumulator of `perspective` (L1 values; with two parts their sum, which is
    /// what the network reads and what part 0's slot holds).
    pub fn accumulator(&self, perspective: Color) -> Vec<i16> {
        self.slot(self.ply, 0, perspective.index()).to_vec()
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

    /// The part of feature `index` (in range).
    #[inline(always)]
    fn part_of(&self, index: u32) -> usize {
        match self.term_parts.iter().find(|&&(end, _)| index < end) {
            Some(&(_, part)) => part as usize,
            None => 0,
        }
    }

    #[inline(always)]
    fn slot_start(&self, ply: usize, part: usize, p: usize) -> usize {
        ((ply * self.parts.len() + part) * 2 + p) * self.l1
    }

    /// Where the PSQT sums of `ply`, `part` and `p` start in `psqt`.
    #[inline(always)]
    fn psqt_start(&self, ply: usize, part: usize, p: usize) -> usize {
        ((ply * self.parts.len() + part) * 2 + p) * self.buckets
    }

    fn slot(&self, ply: usize, part: usize, p: usize) -> &[i16] {
        let start = self.slot_start(ply, part, p);
        &self.acc[start..start + self.l1]
    }

    fn slot_mut(&mut self, ply: usize, part: usize, p: usize) -> &mut [i16] {
        let start = self.slot_start(ply, part, p);
        &mut self.acc[start..start + self.l1]
    }

    /// Makes `board` the root: drops every pushed ply and recomputes both perspectives.
    pub fn reset(&mut self, board: &Board) -> Result<(), EvalError> {
        self.ply = 0;
        self.log.clear();
        self.counts.fill(0);
        self.boards[0] = *board;
        for p in Color::ALL {
            for part in 0..self.parts.len() {
                if let Err(e) = self.refresh(p, part, board, 0) {
                    self.counts.fill(0);
                    return Err(e);
                }
            }
            if self.parts.len() > 1 {
                self.add_part(p, 0, None);
            }
        }
        Ok(())
    }

    /// Counts the indices of `part`'s terms on `board` for `p` (logging the increments when
    /// `ply > 0`) and writes ply `ply`'s accumulator of `part` and `p` as its start (`b1` for
    /// part 0, zero for the others) plus the rows of the distinct indices.
    fn refresh(
        &mut self,
        p: Color,
        part: usize,
        board: &Board,
        ply: usize,
    ) -> Result<(), EvalError> {
        let set: &FeatureSet = self.nnue.features();
        let net = self.nnue.arranged().network();
        let mask = self.parts[part].mask;
        let start = self.slot_start(ply, part, p.index());
        let psqt_at = self.psqt_start(ply, part, p.index());
        if let (Some(cache), Some(king), true) =
            (&mut self.parts[part].cache, board.king(p), ply > 0)
            && cache.engaged()
        {
            // A binary, piecewise part: no counts to keep, and only the changed pieces to ask for.
            let dst = &mut self.acc[start..start + self.l1];
            let psqt = &mut self.psqt[psqt_at..psqt_at + self.buckets];
            let rows = cache.refresh(self.kernels, set, mask, net, p, king, board, (dst, psqt))?;
            self.stats.refresh_rows += rows as u64;
            return Ok(());
        }
        self.active.clear();
        set.active_terms(board, p, mask, &mut self.active)?;
        let base = p.index() * self.n;
        let counted = self.parts[part].counted;
        self.rows[part].clear();
        match net.w1().single_type() {
            // Binary terms of a layer of one type: the indices are the rows.
            Some(ty) if !counted => {
                self.all_in_range(&self.active)?;
                self.rows[part].extend_single(ty, &self.active, &[]);
            }
            _ => {
                for k in 0..self.active.len() {
                    let index = self.active[k];
                    if self.bump(p, base, index, ply > 0, counted)? == 1 {
                        self.rows[part].add(net.w1(), index);
                    }
                }
            }
        }
        let dst = &mut self.acc[start..start + self.l1];
        let origin = if part == 0 { net.b1() } else { &self.zeros[..] };
        self.kernels.update(dst, origin, net.w1(), &self.rows[part]);
        if self.buckets > 0 {
            // PSQT has no bias: every part starts from zero.
            let dst = &mut self.psqt[psqt_at..psqt_at + self.buckets];
            let zero = [0i32; crate::shape::MAX_BUCKETS];
            self.rows[part].apply_psqt(dst, &zero[..self.buckets], net.psqt_rows());
        }
        if ply > 0 {
            self.stats.refresh_rows += self.rows[part].len() as u64;
        }
        Ok(())
    }

    /// Increments a count (logged if `log`) of a part that keeps them (`counted`); returns the
    /// new count (1 for a binary part, which keeps none).
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

    /// Decrements a count (always logged) of a part that keeps them (`counted`); returns the new
    /// count (0 for a binary part).
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
        nnue.features().delta(&before, mv, &mut self.delta)?;
        let after = before.play(mv);
        let mark = self.log.len();
        for p in Color::ALL {
            if let Err(e) = self.push_perspective(p, &before, &after) {
                self.unwind(mark);
                return Err(e);
            }
        }
        self.ply += 1;
        self.boards[self.ply] = after;
        self.log_marks[self.ply] = mark;
        Ok(())
    }

    /// Writes perspective `p` of ply + 1: each part refreshed if one of its terms asks for it,
    /// else updated from the delta buffer.
    fn push_perspective(
        &mut self,
        p: Color,
        before: &Board,
        after: &Board,
    ) -> Result<(), EvalError> {
        let refresh = if self.delta.needs_refresh(p) {
            self.delta.refresh_terms(p)
        } else {
            0
        };
        let stale = |part: &Part| part.mask & refresh != 0;
        if self.parts.iter().all(|part| !stale(part)) {
            return self.update_child(p, u64::MAX);
        }
        let fresh: u64 = self
            .parts
            .iter()
            .filter(|&part| !stale(part))
            .fold(0, |m, part| m | part.mask);
        if fresh != 0 {
            self.update_child(p, fresh)?;
        }
        for part in 0..self.parts.len() {
            if stale(&self.parts[part]) {
                self.refresh_child(p, part, before, after)?;
            }
        }
        // Part 0's slot holds the sum: part 0 refreshed holds part 0 alone, to which part 1's
        // new accumulator is added; part 1 alone refreshed leaves the old part 1 in the sum,
        // replaced by the new one.
        let child = self.ply + 1;
        if self.parts.len() == 1 {
            return Ok(());
        }
        match stale(&self.parts[0]) {
            true => self.add_part(p, child, None),
            false => self.add_part(p, child, Some(self.ply)),
        }
        Ok(())
    }

    /// Adds part 1's accumulator and PSQT sums of `ply` to the sum in part 0's slot of `ply`,
    /// less those of ply `replaced` if given (the part 1 the sum held until then).
    fn add_part(&mut self, p: Color, ply: usize, replaced: Option<usize>) {
        let (l1, b, p) = (self.l1, self.buckets, p.index());
        let (sum, part) = (self.slot_start(ply, 0, p), self.slot_start(ply, 1, p));
        let old = replaced.map(|r| self.slot_start(r, 1, p));
        for k in 0..l1 {
            let out = old.map_or(0, |o| self.acc[o + k]);
            self.acc[sum + k] = self.acc[sum + k]
                .wrapping_add(self.acc[part + k])
                .wrapping_sub(out);
        }
        let (sum, part) = (self.psqt_start(ply, 0, p), self.psqt_start(ply, 1, p));
        let old = replaced.map(|r| self.psqt_start(r, 1, p));
        for k in 0..b {
            let out = old.map_or(0, |o| self.psqt[o + k]);
            self.psqt[sum + k] = self.psqt[sum + k]
                .wrapping_add(self.psqt[part + k])
                .wrapping_sub(out);
        }
    }

    /// Incremental update of perspective `p` from the delta buffer into ply + 1, for the parts
    /// whose terms are all in `mask` (`u64::MAX`: every part).
    #[inline]
    fn update_child(&mut self, p: Color, mask: u64) -> Result<(), EvalError> {
        let base = p.index() * self.n;
        let net = self.nnue.arranged().network();
        let split = self.parts.len() > 1;
        self.rows.iter_mut().for_each(RowLists::clear);
        if !split && !self.parts[0].counted {
            // One part, binary counts (the thesis's and Stockfish's sets): the delta's indices
            // are the rows themselves.
            let (w1, n) = (net.w1(), self.n as u32);
            if let Some(ty) = w1.single_type() {
                let (added, removed) = (self.delta.added(p), self.delta.removed(p));
                self.all_in_range(added.iter().chain(removed))?;
                self.rows[0].extend_single(ty, added, removed);
                self.apply_rows(p, 0);
                return Ok(());
            }
            let rows = &mut self.rows[0];
            for (&index, add) in self
                .delta
                .added(p)
                .iter()
                .map(|i| (i, true))
                .chain(self.delta.removed(p).iter().map(|i| (i, false)))
            {
                if index >= n {
                    return Err(EvalError::IndexOutOfRange { index, size: n });
                }
                if add {
                    rows.add(w1, index);
                } else {
                    rows.sub(w1, index);
                }
            }
            self.apply_rows(p, 0);
            return Ok(());
        }
        let added = self.delta.added(p).len();
        for k in 0..added {
            let index = self.delta.added(p)[k];
            let part = if split { self.part_of(index) } else { 0 };
            if self.parts[part].mask & mask == 0 {
                continue;
            }
            if self.bump(p, base, index, true, self.parts[part].counted)? == 1 {
                self.rows[part].add(net.w1(), index);
            }
        }
        let removed = self.delta.removed(p).len();
        for k in 0..removed {
            let index = self.delta.removed(p)[k];
            let part = if split { self.part_of(index) } else { 0 };
            if self.parts[part].mask & mask == 0 {
                continue;
            }
            if self.drop_count(p, base, index, self.parts[part].counted)? == 0 {
                self.rows[part].sub(net.w1(), index);
            }
        }
        if self.parts.len() == 1 {
            self.apply_rows(p, 0);
            return Ok(());
        }
        match (
            self.parts[0].mask & mask != 0,
            self.parts[1].mask & mask != 0,
        ) {
            // Part 1's rows into its accumulator, both parts' into the sum.
            (true, true) => self.apply_rows_pair(p),
            // Part 0 alone (part 1 is being refreshed): the sum is fixed up after the refresh.
            (true, false) => self.apply_rows(p, 0),
            // Part 1 alone (part 0 is being refreshed, which rewrites the sum).
            (false, true) => self.apply_rows(p, 1),
            (false, false) => {}
        }
        Ok(())
    }

    /// Writes part 1 and the parts' sum of perspective `p` at ply + 1 in one pass over their
    /// lanes ([`Kernels::update_pair`]): part 1 plus its rows, the sum plus both parts' rows.
    fn apply_rows_pair(&mut self, p: Color) {
        let net = self.nnue.arranged().network();
        let (l1, b) = (self.l1, self.buckets);
        self.stats.updates += 2;
        self.stats.rows += (self.rows[0].len() + self.rows[1].len()) as u64;
        let p = p.index();
        let (sum_parent, part_parent) = (
            self.slot_start(self.ply, 0, p),
            self.slot_start(self.ply, 1, p),
        );
        let (sum_child, part_child) = (
            self.slot_start(self.ply + 1, 0, p),
            self.slot_start(self.ply + 1, 1, p),
        );
        let (head, tail) = self.acc.split_at_mut(sum_child);
        let (sum_dst, rest) = tail.split_at_mut(l1);
        let part_dst = &mut rest[part_child - sum_child - l1..][..l1];
        self.kernels.update_pair(
            (sum_dst, &head[sum_parent..sum_parent + l1]),
            (part_dst, &head[part_parent..part_parent + l1]),
            net.w1(),
            (&self.rows[0], &self.rows[1]),
        );
        if b > 0 {
            let (sum_parent, part_parent) = (
                self.psqt_start(self.ply, 0, p),
                self.psqt_start(self.ply, 1, p),
            );
            let (sum_child, part_child) = (
                self.psqt_start(self.ply + 1, 0, p),
                self.psqt_start(self.ply + 1, 1, p),
            );
            let (head, tail) = self.psqt.split_at_mut(sum_child);
            let (sum_dst, rest) = tail.split_at_mut(b);
            let part_dst = &mut rest[part_child - sum_child - b..][..b];
            let rows = net.psqt_rows();
            self.rows[1].apply_psqt(part_dst, &head[part_parent..part_parent + b], rows);
            self.rows[0].apply_psqt(sum_dst, &head[sum_parent..sum_parent + b], rows);
            // Part 1's rows: what part 1 moved by.
            for ((s, &n), &o) in sum_dst
                .iter_mut()
                .zip(&*part_dst)
                .zip(&head[part_parent..part_parent + b])
            {
                *s = s.wrapping_add(n.wrapping_sub(o));
            }
        }
    }

    /// Writes `part` of perspective `p` at ply + 1: ply's accumulator (and PSQT sums) plus the
    /// rows listed for the part.
    #[inline]
    fn apply_rows(&mut self, p: Color, part: usize) {
        let net = self.nnue.arranged().network();
        self.stats.updates += 1;
        self.stats.rows += self.rows[part].len() as u64;
        let parent = self.slot_start(self.ply, part, p.index());
        let child = self.slot_start(self.ply + 1, part, p.index());
        let (head, tail) = self.acc.split_at_mut(child);
        self.kernels.update(
            &mut tail[..self.l1],
            &head[parent..parent + self.l1],
            net.w1(),
            &self.rows[part],
        );
        if self.buckets > 0 {
            let b = self.buckets;
            let parent = self.psqt_start(self.ply, part, p.index());
            let child = self.psqt_start(self.ply + 1, part, p.index());
            let (head, tail) = self.psqt.split_at_mut(child);
            self.rows[part].apply_psqt(&mut tail[..b], &head[parent..parent + b], net.psqt_rows());
        }
    }

    /// Full recomputation of `part` of perspective `p` into ply + 1: the counts of `before` are
    /// taken out (logged) and those of `after` put in (logged).
    fn refresh_child(
        &mut self,
        p: Color,
        part: usize,
        before: &Board,
        after: &Board,
    ) -> Result<(), EvalError> {
        if self.parts[part].counted {
            let set = self.nnue.features();
            let base = p.index() * self.n;
            self.active.clear();
            set.active_terms(before, p, self.parts[part].mask, &mut self.active)?;
            for k in 0..self.active.len() {
                let index = self.active[k];
                self.drop_count(p, base, index, true)?;
            }
        }
        self.stats.refreshes += 1;
        self.refresh(p, part, after, self.ply + 1)
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
        let (kernels, nnue, l1, b) = (self.kernels, self.nnue, self.l1, self.buckets);
        let (acc, psqt, scratch, stm, pieces) = self.forward_inputs();
        let (s, o) = (stm.index(), 1 - stm.index());
        let (stm_acc, opp_acc) = match s {
            0 => acc.split_at(l1),
            _ => {
                let (white, black) = acc.split_at(l1);
                (black, white)
            }
        };
        forward::evaluate(
            kernels,
            nnue.arranged().network(),
            stm_acc,
            opp_acc,
            (&psqt[s * b..(s + 1) * b], &psqt[o * b..(o + 1) * b]),
            pieces,
            scratch,
        )
    }
}

impl AccumulatorStack<'_> {
    /// The layers' inputs: both perspectives' accumulators (White's L1 values, then Black's)
    /// and PSQT sums (White's B, then Black's), with two parts their sum; the stack's scratch; the
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
        // Part 0's slots (with two parts, their sum): both perspectives are contiguous
        // (perspective is the innermost index).
        let start = self.slot_start(self.ply, 0, 0);
        let at = self.psqt_start(self.ply, 0, 0);
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

/// The parts of `set` and, with two, each term's end and part in index order.
///
/// Terms a [`RefreshCache`] can serve are binary and piecewise (its refreshes diff pieces); it
/// pays when one of them is refreshed on own king moves. A set whose terms can all be served
/// is one part with a cache if it has such a term; a set that mixes them with others
/// (threats, which are not piecewise) is split in two when it has such a term and at most 64
/// terms, so that a king move refreshes only the first part, through the cache, and the
/// others keep their incremental updates; otherwise it is one part without a cache.
fn split_terms(set: &FeatureSet) -> (Vec<Part>, Vec<(u32, u8)>) {
    let terms = set.terms();
    let servable = |t: &plugin_api::Term| t.binary() && t.piecewise();
    let king_moved = |t: &plugin_api::Term| t.refresh_trigger() == RefreshTrigger::OwnKingMove;
    let mask_of = |want: bool| {
        terms
            .iter()
            .enumerate()
            .filter(|(_, t)| servable(t) == want)
            .fold(0u64, |m, (i, _)| m | term_bit(i))
    };
    let (served, other) = (mask_of(true), mask_of(false));
    let pays = terms.iter().any(|t| servable(t) && king_moved(t));
    if other == 0 || served == 0 || !pays || terms.len() > 64 {
        let part = Part {
            mask: u64::MAX,
            cache: None,
            cacheable: other == 0
                && set.binary()
                && set.refresh_trigger() == RefreshTrigger::OwnKingMove,
            counted: !set.binary(),
        };
        return (vec![part], Vec::new());
    }
    let parts = vec![
        Part {
            mask: served,
            cache: None,
            cacheable: true,
            counted: false,
        },
        Part {
            mask: other,
            cache: None,
            cacheable: false,
            counted: terms.iter().any(|t| !servable(t) && !t.binary()),
        },
    ];
    let term_parts = terms
        .iter()
        .map(|t| (t.offset + t.size, u8::from(!servable(t))))
        .collect();
    (parts, term_parts)
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
