//! Cheap refreshes for king-relative feature sets: a cache of accumulators per perspective and
//! own king square (the "Finny table" of Koivisto and Stockfish).
//!
//! A set whose blocks refresh a perspective only when its own king moves
//! ([`RefreshTrigger::OwnKingMove`](plugin_api::RefreshTrigger)) recomputes ~30 rows on every
//! such move. The cache keeps, for each perspective and king square, the accumulator of the last
//! position seen with the king there and that position's board. A refresh starts from the entry
//! and applies only what the pieces that differ between the two boards contribute: the set must
//! be a sum over pieces ([`FeatureSet::piecewise`]) with binary counts, so that those rows are
//! the indices of the own king with the removed pieces (subtracted) and with the added pieces
//! (added), both computed by the plugins on boards of a few pieces. After a king steps back to a
//! square it stood on a few moves ago that is a handful of rows instead of thirty, and no call
//! of the plugins over the whole board. Entries are exact whatever they hold: the key only
//! decides how small the difference is, never whether the result is right. A cache that keeps
//! missing stands aside (see [`Credit`]): in a search more than half the refreshes hit, but when
//! kings wander, as in random playouts, its look-ups and entry writes would only cost.

use plugin_api::{BlockError, Board, Color, FeatureSet, Role, Square};

use super::aligned::AlignedVec;
use super::first_layer::RowLists;
use super::network::Network;
use super::simd::Kernels;

/// Entries: one per perspective and king square.
const ENTRIES: usize = 2 * 64;

/// What the cache did (for benchmarks and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Refreshes served from a filled entry.
    pub hits: u64,
    /// Refreshes that summed every row: the entry was empty, or its board further from the
    /// position than the bias is (then it is replaced).
    pub fills: u64,
    /// Refreshes the cache stood aside for, while it was not earning its keep (see
    /// [`RefreshCache::engaged`]).
    pub bypassed: u64,
    /// Rows added or subtracted by the refreshes served from entries.
    pub rows: u64,
}

/// Accumulators per perspective and own king square, with the pieces of the positions they
/// belong to.
pub struct RefreshCache {
    l1: usize,
    /// `ENTRIES × L1`.
    acc: AlignedVec<i16>,
    /// PSQT buckets B (0: none).
    buckets: usize,
    /// `ENTRIES × B` PSQT sums.
    psqt: Vec<i32>,
    /// The pieces of each entry's position (none while the entry is empty).
    pieces: Vec<Pieces>,
    add: Vec<u32>,
    sub: Vec<u32>,
    /// `add` and `sub` by storage.
    rows: RowLists,
    credit: Credit,
    stats: CacheStats,
}

/// Whether refreshes go through the cache. An entry pays only if later refreshes start from
/// it; when kings wander (random playouts), nearly every refresh misses, and the cache's look-up
/// and the 2 × L1 bytes each miss writes into its entry are pure cost (5 to 6% of an
/// evaluation along the random games of `host/tests/data/stockfish-15.1/games.tsv` with
/// Stockfish's network). So hits earn [`Credit::PER_HIT`] and each replacement of a filled entry spends
/// one: while a cache's refreshes hit less than one time in `1 + PER_HIT`, it stands aside
/// (refreshes sum every row, as without the cache) but for one refresh in [`Credit::PROBE`],
/// which notices when the positions settle and hits come back. In a search more than half the
/// refreshes hit, and nearly every one goes through the cache.
#[derive(Clone, Copy, Debug)]
struct Credit {
    balance: u32,
    /// Refreshes stood aside for since the last probe.
    aside: u32,
}

impl Credit {
    /// What a hit earns.
    const PER_HIT: u32 = 4;
    /// The most a cache saves up, and what it starts with.
    const MAX: u32 = 64;
    /// Without credit, one refresh in this many goes through the cache anyway.
    const PROBE: u32 = 32;

    fn new() -> Credit {
        Credit {
            balance: Self::MAX,
            aside: 0,
        }
    }

    fn engaged(&mut self) -> bool {
        if self.balance > 0 {
            return true;
        }
        self.aside += 1;
        if self.aside == Self::PROBE {
            self.aside = 0;
            return true;
        }
        false
    }

    fn hit(&mut self) {
        self.balance = (self.balance + Self::PER_HIT).min(Self::MAX);
    }

    fn replaced(&mut self) {
        self.balance = self.balance.saturating_sub(1);
    }
}

impl RefreshCache {
    /// An empty cache for accumulators of `l1` values and `buckets` PSQT sums, and positions of
    /// up to `max_active` indices per perspective.
    pub fn new(l1: usize, buckets: usize, max_active: usize) -> Self {
        RefreshCache {
            l1,
            acc: AlignedVec::zeroed(ENTRIES * l1),
            buckets,
            psqt: vec![0; ENTRIES * buckets],
            pieces: vec![Pieces::default(); ENTRIES],
            add: Vec::with_capacity(2 * max_active),
            sub: Vec::with_capacity(2 * max_active),
            rows: RowLists::with_capacity(2 * max_active),
            credit: Credit::new(),
            stats: CacheStats::default(),
        }
    }

    /// Whether the next refresh should go through [`refresh`](Self::refresh); when not, the
    /// caller sums every row itself (see `Credit`).
    #[inline]
    pub fn engaged(&mut self) -> bool {
        let engaged = self.credit.engaged();
        if !engaged {
            self.stats.bypassed += 1;
        }
        engaged
    }

    /// What the cache did since it was made.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Writes into `dst` the accumulator `b1 + Σ w1[i]` of `board` for perspective `p`, whose own
    /// king stands on `king`, over the indices of `terms`, and its PSQT sums `Σ psqt[i]` (empty
    /// without PSQT), starting from that king square's entry (or from `b1` when that takes fewer
    /// rows), and makes the entry hold the result. Returns the rows it added or subtracted.
    pub fn refresh(
        &mut self,
        terms: &CachedTerms,
        (board, p, king): (&Board, Color, Square),
        (dst, psqt_dst): (&mut [i16], &mut [i32]),
    ) -> Result<usize, BlockError> {
        let CachedTerms {
            kernels,
            set,
            mask,
            net,
        } = *terms;
        let slot = p.index() * 64 + king as usize;
        let entry = &mut self.acc[slot * self.l1..(slot + 1) * self.l1];
        let b = self.buckets;
        let psqt_entry = &mut self.psqt[slot * b..(slot + 1) * b];
        self.add.clear();
        self.sub.clear();
        let old = &self.pieces[slot];
        let from_entry = if old.is_empty() {
            false
        } else {
            // The own king alone with the pieces that left (subtracted) and with those that
            // came (added): what they contribute is all that differs.
            let (mut gone, mut came) = (Board::empty(p), Board::empty(p));
            gone.put(king, p, Role::King);
            came.put(king, p, Role::King);
            let mut changed = 0;
            for color in Color::ALL {
                for role in Role::ALL {
                    let (was, now) = (old.squares(color, role), board.pieces(color, role));
                    gone.by_color[color.index()] |= was & !now;
                    gone.by_role[role.index()] |= was & !now;
                    came.by_color[color.index()] |= now & !was;
                    came.by_role[role.index()] |= now & !was;
                    changed += (was ^ now).count_ones();
                }
            }
            // Beyond half the board's pieces the bias is the nearer start.
            if 2 * changed as usize <= board.occupied().count_ones() as usize {
                set.active_terms(&came, p, mask, &mut self.add)?;
                set.active_terms(&gone, p, mask, &mut self.sub)?;
                cancel_common(&mut self.add, &mut self.sub);
                true
            } else {
                false
            }
        };
        let w1 = net.w1();
        self.rows.clear();
        let rows = if from_entry {
            self.rows.extend(w1, &self.add, &self.sub);
            kernels.update_in_place_and_copy(entry, dst, w1, &self.rows);
            let mut start = [0i32; crate::shape::MAX_BUCKETS];
            start[..b].copy_from_slice(psqt_entry);
            let rows = net.psqt_rows();
            self.rows
                .apply_psqt_and_copy(psqt_dst, psqt_entry, &start[..b], rows);
            self.stats.hits += 1;
            self.credit.hit();
            let rows = self.add.len() + self.sub.len();
            self.stats.rows += rows as u64;
            rows
        } else {
            set.active_terms(board, p, mask, &mut self.add)?;
            self.rows.extend(w1, &self.add, &[]);
            kernels.update_and_copy(dst, entry, net.b1(), w1, &self.rows);
            let zero = [0i32; crate::shape::MAX_BUCKETS];
            let rows = net.psqt_rows();
            self.rows
                .apply_psqt_and_copy(psqt_dst, psqt_entry, &zero[..b], rows);
            self.stats.fills += 1;
            if !self.pieces[slot].is_empty() {
                self.credit.replaced();
            }
            self.add.len()
        };
        self.pieces[slot] = Pieces::of(board);
        Ok(rows)
    }
}

/// The terms a cache refresh sums: `set`'s terms in `mask` (piecewise and binary, see
/// [`plugin_api::term_bit`]), their rows and PSQT rows in `net`, added with `kernels`.
#[derive(Clone, Copy)]
pub struct CachedTerms<'a> {
    /// The kernels that add the rows.
    pub kernels: Kernels,
    /// The feature set.
    pub set: &'a FeatureSet,
    /// Its terms the cache serves.
    pub mask: u64,
    /// The network whose rows are summed.
    pub net: &'a Network,
}

/// Where the pieces of an entry's position stand: what a refresh compares with its board, in one
/// cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Pieces {
    by_color: [u64; 2],
    by_role: [u64; 6],
}

impl Pieces {
    fn of(board: &Board) -> Pieces {
        Pieces {
            by_color: board.by_color,
            by_role: board.by_role,
        }
    }

    /// No piece: an empty entry (the board of a refresh has its king).
    fn is_empty(&self) -> bool {
        self.by_color == [0; 2]
    }

    /// The squares of `color`'s pieces of `role`.
    fn squares(&self, color: Color, role: Role) -> u64 {
        self.by_color[color.index()] & self.by_role[role.index()]
    }
}

/// Removes the indices `add` and `sub` share (once per pair): adding and subtracting a row is
/// no change.
fn cancel_common(add: &mut Vec<u32>, sub: &mut Vec<u32>) {
    let mut i = 0;
    while i < add.len() {
        match sub.iter().position(|&s| s == add[i]) {
            Some(j) => {
                add.swap_remove(i);
                sub.swap_remove(j);
            }
            None => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_that_keeps_missing_stands_aside_but_for_probes_and_one_that_hits_never_does() {
        let mut credit = Credit::new();
        // Every other refresh a hit and the other a replacement: always engaged.
        for k in 0..10_000 {
            assert!(credit.engaged());
            if k % 2 == 0 {
                credit.hit();
            } else {
                credit.replaced();
            }
        }
        // Only replacements: the saved credit runs out, then one refresh in PROBE goes through.
        let mut credit = Credit::new();
        let mut engaged = 0;
        for _ in 0..Credit::MAX as usize + 100 * Credit::PROBE as usize {
            if credit.engaged() {
                engaged += 1;
                credit.replaced();
            }
        }
        assert_eq!(engaged, Credit::MAX + 100);
        // A hit brings it back.
        while !credit.engaged() {}
        credit.hit();
        assert!((0..Credit::PER_HIT).all(|_| {
            let e = credit.engaged();
            credit.replaced();
            e
        }));
    }

    #[test]
    fn common_indices_cancel_in_pairs() {
        let (mut add, mut sub) = (vec![9, 1, 3, 70, 3], vec![3, 70, 2, 10]);
        cancel_common(&mut add, &mut sub);
        add.sort_unstable();
        sub.sort_unstable();
        assert_eq!((add, sub), (vec![1, 3, 9], vec![2, 10]));
    }
}
