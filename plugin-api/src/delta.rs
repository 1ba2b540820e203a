//! A move's delta of a feature set: what each term adds and removes, for both perspectives.
//!
//! [`FeatureSet::delta_into`] calls each term's block once (a product also lists its left
//! factors' active indices) into lists that a [`DeltaTarget`] places ([`IndexList::placed`]):
//! [`FeatureDelta`] has the term's indices stored offset into the set's index space (what the
//! trainer, the conformance kit and counted sets read); the evaluator's row lists have them
//! stored as the rows of the network's weights. Either takes the lists as the block left them:
//! no list is copied or passed over on the per-move path.

use std::mem::MaybeUninit;

use abi_stable::std_types::RResult;

use crate::block::{IndexList, MoveDelta};
use crate::feature_set::{
    block_error, combined_active, index_past_block, index_past_term, lists_replaced, term_bit,
    FeatureSet, Term,
};
use crate::registry::{BlockError, RegisteredBlock};
use crate::types::{Board, Color, Move, Role};

/// Where [`FeatureSet::delta_into`] writes a move's indices, term by term.
///
/// For each term the set asks for four [`lists`](Self::lists), lets the term write its indices
/// there, then hands them over with [`wrote`](Self::wrote).
pub trait DeltaTarget {
    /// Four lists for term `t` (added for White, added for Black, removed for White, removed
    /// for Black), each with room for at least `cap` indices after what the target holds,
    /// [placed](IndexList::placed) where the target wants the term's indices and refusing
    /// those at or above the term's size.
    fn lists(&mut self, t: usize, term: &Term, cap: usize) -> [IndexList<'_>; 4];

    /// Takes the `counts` indices that term `t`'s lists just stored (same order). A
    /// perspective in `refresh` must be recomputed: its indices of this term are dropped.
    ///
    /// # Safety
    /// `counts` are the lengths of the lists [`lists`](Self::lists) last made for term `t`.
    unsafe fn wrote(&mut self, t: usize, term: &Term, counts: [usize; 4], refresh: [bool; 2]);

    /// Writes term `t`'s changes by `mv` (legal on `board`) itself, from the term's
    /// [`PieceTable`](crate::PieceTable), instead of having its block asked; returns the
    /// perspectives to refresh, or `None` (the default) when the block is to be asked. A target
    /// that keeps the table of a term answers for it on every move the term is asked about.
    #[inline(always)]
    fn by_piece_table(
        &mut self,
        t: usize,
        term: &Term,
        board: &Board,
        mv: &Move,
    ) -> Option<[bool; 2]> {
        let _ = (t, term, board, mv);
        None
    }
}

/// The scratch lists of a product term's delta: its factors' deltas and its left factors'
/// combined active indices. Allocated once per feature set ([`FeatureSet::product_scratch`]).
#[derive(Clone, Debug, Default)]
pub struct ProductScratch {
    /// A factor's delta: added White, added Black, removed White, removed Black.
    factor_lists: [Vec<u32>; 4],
    /// The left factors' combined active indices.
    prefix: Vec<u32>,
}

impl FeatureSet {
    /// Scratch lists sized for this set's products (empty for a set without products).
    pub fn product_scratch(&self) -> ProductScratch {
        let products = || self.terms().iter().filter(|t| t.is_product());
        let factor_cap = products()
            .flat_map(|t| &t.factors)
            .map(|f| f.descriptor.max_delta as usize)
            .max()
            .unwrap_or(0);
        let prefix_cap = products()
            .map(|t| 2 * t.max_active as usize)
            .max()
            .unwrap_or(0);
        ProductScratch {
            factor_lists: std::array::from_fn(|_| vec![0; factor_cap]),
            prefix: Vec::with_capacity(prefix_cap),
        }
    }

    /// A delta buffer sized for this feature set (allocate once, reuse for every move).
    pub fn delta_buffer(&self) -> FeatureDelta {
        let cap = self.max_delta();
        FeatureDelta {
            lists: DeltaLists {
                added: [Vec::with_capacity(cap), Vec::with_capacity(cap)],
                removed: [Vec::with_capacity(cap), Vec::with_capacity(cap)],
                from_tables: false,
            },
            refresh_terms: [0; 2],
            scratch: self.product_scratch(),
        }
    }

    /// Fills `buf` with what `mv` (legal on `board`) adds and removes, both perspectives, every
    /// term offset. No allocation once `buf` has served a move of every kind.
    pub fn delta(
        &self,
        board: &Board,
        mv: &Move,
        buf: &mut FeatureDelta,
    ) -> Result<(), BlockError> {
        buf.lists.clear();
        buf.refresh_terms = self.delta_into(board, mv, &mut buf.lists, &mut buf.scratch)?;
        Ok(())
    }

    /// Writes what `mv` (legal on `board`) adds and removes into `target`, term by term, and
    /// returns per perspective the terms that ask for a refresh ([`term_bit`]). One call per
    /// block, none for a term that promises no change on moves of the move's roles
    /// ([`Term::changed_by`]), which is refreshed where its refresh trigger
    /// [`fires`](crate::RefreshTrigger::fires); a block's index at or above its size is an error
    /// naming it.
    pub fn delta_into(
        &self,
        board: &Board,
        mv: &Move,
        target: &mut impl DeltaTarget,
        scratch: &mut ProductScratch,
    ) -> Result<[u64; 2], BlockError> {
        let mut refresh_terms = [0u64; 2];
        let roles = mv.roles();
        for (t, term) in self.terms().iter().enumerate() {
            // A term that no role of the move can change is not asked; a king move its
            // refresh trigger names refreshes the perspective.
            if term.changed_by & roles == 0 {
                if mv.role == Role::King {
                    ask_refresh(&mut refresh_terms, t, triggered(term, board, mv));
                }
                continue;
            }
            if let Some(refresh) = target.by_piece_table(t, term, board, mv) {
                ask_refresh(&mut refresh_terms, t, refresh);
                continue;
            }
            let block = &term.factors[0];
            let cap = term.max_delta as usize;
            let [a0, a1, r0, r1] = target.lists(t, term, cap);
            let mut md = MoveDelta {
                added: [a0, a1],
                removed: [r0, r1],
                refresh: [false; 2],
            };
            if term.is_product() {
                product_delta(term, board, mv, &mut md, scratch)?;
            } else {
                block_delta(block, board, mv, &mut md)?;
            }
            if let Some(ix) = stray(&md) {
                return Err(index_past_term(term, "delta emitted", ix));
            }
            let (counts, refresh) = (lengths(&md), md.refresh);
            ask_refresh(&mut refresh_terms, t, refresh);
            // SAFETY: the counts are the lengths of the lists just made for term t.
            unsafe { target.wrote(t, term, counts, refresh) };
        }
        Ok(refresh_terms)
    }
}

/// Marks term `t` in the refresh terms of the perspectives `asked` names.
#[inline(always)]
fn ask_refresh(refresh_terms: &mut [u64; 2], t: usize, asked: [bool; 2]) {
    for (terms, asked) in refresh_terms.iter_mut().zip(asked) {
        if asked {
            *terms |= term_bit(t);
        }
    }
}

/// Per perspective, whether `term`'s refresh trigger names the king move `mv`: apart from the
/// per-move path, which most moves leave at the role test.
#[cold]
#[inline(never)]
fn triggered(term: &Term, board: &Board, mv: &Move) -> [bool; 2] {
    let trigger = term.refresh_trigger();
    let [white, black] = Color::ALL;
    [
        trigger.fires(board, mv, white),
        trigger.fires(board, mv, black),
    ]
}

/// Calls `block`'s `delta` into `md`: the block's error, or lists other than the ones it was
/// given (they would hold indices the host never checked), is an error naming it.
#[inline(always)]
fn block_delta(
    block: &RegisteredBlock,
    board: &Board,
    mv: &Move,
    md: &mut MoveDelta,
) -> Result<(), BlockError> {
    let made = lists_of(md);
    if let RResult::RErr(e) = (block.descriptor.delta)(board, mv, md) {
        return Err(block_error(block, e));
    }
    if moved(lists_of(md), made) {
        return Err(lists_replaced(block));
    }
    Ok(())
}

/// A delta's four lists, in the order of [`DeltaTarget::lists`].
#[inline(always)]
fn four<'m, 'l>(md: &'m MoveDelta<'l>) -> [&'m IndexList<'l>; 4] {
    [&md.added[0], &md.added[1], &md.removed[0], &md.removed[1]]
}

/// Where a delta's lists write, in the order of [`DeltaTarget::lists`].
#[inline(always)]
fn lists_of(md: &MoveDelta) -> [*const u32; 4] {
    four(md).map(IndexList::buffer)
}

/// Whether any of a delta's lists writes elsewhere than where it was made to: the four
/// places compared together, not one after another.
#[inline(always)]
fn moved(now: [*const u32; 4], made: [*const u32; 4]) -> bool {
    now.iter()
        .zip(made)
        .fold(0, |differ, (&a, b)| differ | (a as usize ^ b as usize))
        != 0
}

/// How many indices each of a delta's lists holds, in the order of [`DeltaTarget::lists`].
#[inline(always)]
fn lengths(md: &MoveDelta) -> [usize; 4] {
    four(md).map(IndexList::len)
}

/// The first index of a delta's lists at or above its term's size, if any (none is stored):
/// one branch on the four lists' flags, then the search where one is set.
#[inline(always)]
fn stray(md: &MoveDelta) -> Option<u32> {
    let lists = four(md);
    if !lists.iter().fold(false, |any, l| any | l.stray().is_some()) {
        return None;
    }
    lists.into_iter().find_map(IndexList::stray)
}

/// The delta of a product term into `out`'s lists: refresh a perspective unless only the last
/// factor changed, in which case its changes are emitted under every active combination of the
/// others.
fn product_delta(
    term: &Term,
    board: &Board,
    mv: &Move,
    out: &mut MoveDelta,
    scratch: &mut ProductScratch,
) -> Result<(), BlockError> {
    let (last, prefix) = term.factors.split_last().expect("a product has factors");
    // Which perspectives a left factor changes (then they are refreshed).
    let mut changed = [false; 2];
    for factor in prefix {
        let md = call_delta(factor, board, mv, &mut scratch.factor_lists)?;
        for (p, c) in changed.iter_mut().enumerate() {
            *c |= md.refresh[p] || !md.added[p].is_empty() || !md.removed[p].is_empty();
        }
    }
    let md = call_delta(last, board, mv, &mut scratch.factor_lists)?;
    let last_size = last.descriptor.size;
    let (n, last_refresh) = (lengths(&md), md.refresh);
    for p in Color::ALL {
        let pi = p.index();
        if changed[pi] || last_refresh[pi] {
            out.refresh[pi] = true;
            continue;
        }
        if n[pi] == 0 && n[2 + pi] == 0 {
            continue;
        }
        // The left factors' combined active indices (unchanged by the move).
        scratch.prefix.clear();
        combined_active(prefix, board, p, &mut scratch.prefix)?;
        for (k, list) in [(pi, &mut out.added[pi]), (2 + pi, &mut out.removed[pi])] {
            for &i in &scratch.prefix {
                for &j in &scratch.factor_lists[k][..n[k]] {
                    list.push(i * last_size + j);
                }
            }
        }
        // A bound too small for the combinations refreshes the perspective.
        out.refresh[pi] |= out.added[pi].overflowed() || out.removed[pi].overflowed();
    }
    Ok(())
}

/// Calls one block's `delta` into the scratch lists (added White, added Black, removed White,
/// removed Black) and returns the filled lists, checked as [`FeatureSet::delta_into`] checks a
/// term's: the block's own lists, its indices below its size.
fn call_delta<'b>(
    block: &RegisteredBlock,
    board: &Board,
    mv: &Move,
    lists: &'b mut [Vec<u32>; 4],
) -> Result<MoveDelta<'b>, BlockError> {
    let (cap, size) = (block.descriptor.max_delta as usize, block.descriptor.size);
    let [aw, ab, rw, rb] = lists;
    let mut md = MoveDelta {
        added: [
            IndexList::new(&mut aw[..cap]).below(size),
            IndexList::new(&mut ab[..cap]).below(size),
        ],
        removed: [
            IndexList::new(&mut rw[..cap]).below(size),
            IndexList::new(&mut rb[..cap]).below(size),
        ],
        refresh: [false; 2],
    };
    block_delta(block, board, mv, &mut md)?;
    if let Some(ix) = stray(&md) {
        return Err(index_past_block(block, "delta emitted", ix));
    }
    for p in 0..2 {
        if md.added[p].overflowed() || md.removed[p].overflowed() {
            md.refresh[p] = true;
        }
    }
    Ok(md)
}

/// Room for `cap` more indices in `list`'s spare capacity, which must hold them: the lists of a
/// delta are made with room for every term's bound ([`FeatureSet::max_delta`]), so a list too
/// short is one made for another feature set.
#[inline(always)]
pub fn spare(list: &mut Vec<u32>, cap: usize) -> &mut [MaybeUninit<u32>] {
    let len = list.len();
    assert!(
        cap <= list.capacity() - len,
        "a delta list made for another feature set"
    );
    // SAFETY: the `cap` entries after `len` are inside the capacity (asserted).
    unsafe {
        std::slice::from_raw_parts_mut(list.as_mut_ptr().add(len).cast::<MaybeUninit<u32>>(), cap)
    }
}

/// [`FeatureDelta`]'s lists: per perspective, the indices added and removed, offset into the
/// set's index space.
#[derive(Clone, Debug, Default)]
pub struct DeltaLists {
    added: [Vec<u32>; 2],
    removed: [Vec<u32>; 2],
    /// Whether terms with a [`PieceTable`](crate::PieceTable) are changed from it instead of
    /// asking their blocks ([`FeatureDelta::from_piece_tables`]).
    from_tables: bool,
}

impl DeltaLists {
    fn clear(&mut self) {
        self.added
            .iter_mut()
            .chain(&mut self.removed)
            .for_each(Vec::clear);
    }
}

impl DeltaTarget for DeltaLists {
    #[inline]
    fn lists(&mut self, _t: usize, term: &Term, cap: usize) -> [IndexList<'_>; 4] {
        let [a0, a1] = &mut self.added;
        let [r0, r1] = &mut self.removed;
        [a0, a1, r0, r1].map(|list| IndexList::placed(spare(list, cap), term.offset, term.size))
    }

    fn by_piece_table(
        &mut self,
        _t: usize,
        term: &Term,
        board: &Board,
        mv: &Move,
    ) -> Option<[bool; 2]> {
        if !self.from_tables {
            return None;
        }
        let (places, rows) = term.piece_table()?.changes(board, mv);
        let mut refresh = [false; 2];
        for (p, row) in rows.into_iter().enumerate() {
            let Some(row) = row else {
                refresh[p] = true;
                continue;
            };
            for (list, places) in [
                (&mut self.added[p], places.added()),
                (&mut self.removed[p], places.removed()),
            ] {
                let indices = places.into_iter().filter_map(|place| row.of(place));
                list.extend(indices.map(|ix| ix + term.offset));
            }
        }
        Some(refresh)
    }

    #[inline]
    unsafe fn wrote(&mut self, _t: usize, _term: &Term, counts: [usize; 4], refresh: [bool; 2]) {
        let [a0, a1] = &mut self.added;
        let [r0, r1] = &mut self.removed;
        for (k, list) in [a0, a1, r0, r1].into_iter().enumerate() {
            if !refresh[k % 2] {
                // SAFETY: the list made over this vector's spare capacity stored `counts[k]`
                // indices there (the caller's promise).
                unsafe { list.set_len(list.len() + counts[k]) };
            }
        }
    }
}

/// Host-owned result of [`FeatureSet::delta`]: per perspective, added and removed indices
/// (offset into the whole feature set) and whether a refresh is needed.
#[derive(Clone, Debug)]
pub struct FeatureDelta {
    lists: DeltaLists,
    /// Per perspective, the terms that asked for a refresh ([`term_bit`]).
    refresh_terms: [u64; 2],
    scratch: ProductScratch,
}

impl FeatureDelta {
    /// This buffer, changing the terms that have a [`PieceTable`](crate::PieceTable) from it
    /// instead of asking their blocks, as the evaluator does: the conformance kit holds the
    /// tables' deltas to the boards' `active` as it holds the blocks'.
    pub fn from_piece_tables(mut self) -> FeatureDelta {
        self.lists.from_tables = true;
        self
    }

    /// Indices whose count rises by one for `perspective`.
    #[inline(always)]
    pub fn added(&self, perspective: Color) -> &[u32] {
        &self.lists.added[perspective.index()]
    }

    /// Indices whose count falls by one for `perspective`.
    #[inline(always)]
    pub fn removed(&self, perspective: Color) -> &[u32] {
        &self.lists.removed[perspective.index()]
    }

    /// Whether `perspective` must be recomputed from scratch (its lists are then meaningless).
    #[inline(always)]
    pub fn needs_refresh(&self, perspective: Color) -> bool {
        self.refresh_terms[perspective.index()] != 0
    }

    /// The terms whose indices must be recomputed for `perspective` (bit t for term t, see
    /// [`term_bit`]): their lists are meaningless, the other terms' lists are exact. An
    /// evaluator that keeps terms apart refreshes only these.
    #[inline(always)]
    pub fn refresh_terms(&self, perspective: Color) -> u64 {
        self.refresh_terms[perspective.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::spare;
    use crate::block::{BlockDescriptor, FeatureBlock, IndexList, MoveDelta};
    use crate::registry::PluginRegistry;
    use crate::testing::start_board;
    use crate::types::{Board, Color, Move, MoveKind, Role, NO_ROLE};

    /// Size 2: index 1 added for both perspectives on every move.
    struct Fine;
    impl FeatureBlock for Fine {
        const NAME: &'static str = "fine";
        const DESCRIPTION: &'static str = "index 1 on every move";
        const SIZE: u32 = 2;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 1;
        fn active(_board: &Board, _perspective: Color, out: &mut IndexList<'_>) {
            out.push(0);
        }
        fn delta(_board: &Board, _mv: &Move, out: &mut MoveDelta<'_>) {
            out.added[0].push(1);
            out.added[1].push(1);
        }
    }

    /// Size 3: index 2 added for both perspectives on every move.
    struct Also;
    impl FeatureBlock for Also {
        const NAME: &'static str = "also";
        const DESCRIPTION: &'static str = "index 2 on every move";
        const SIZE: u32 = 3;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 1;
        fn active(_board: &Board, _perspective: Color, out: &mut IndexList<'_>) {
            out.push(0);
        }
        fn delta(_board: &Board, _mv: &Move, out: &mut MoveDelta<'_>) {
            out.added[0].push(2);
            out.added[1].push(2);
        }
    }

    /// Size 4: index 3 added for White, 4 (one past its end) for Black.
    struct Past;
    impl FeatureBlock for Past {
        const NAME: &'static str = "past";
        const DESCRIPTION: &'static str = "one index past the end for Black";
        const SIZE: u32 = 4;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 1;
        fn active(_board: &Board, _perspective: Color, out: &mut IndexList<'_>) {
            out.push(0);
        }
        fn delta(_board: &Board, _mv: &Move, out: &mut MoveDelta<'_>) {
            out.added[0].push(3);
            out.added[1].push(4);
        }
    }

    /// Puts a list of its own in place of the host's White list of added indices.
    struct DeltaSwaps;
    impl FeatureBlock for DeltaSwaps {
        const NAME: &'static str = "swaps";
        const DESCRIPTION: &'static str = "replaces a list it was given";
        const SIZE: u32 = 4;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 1;
        fn active(_board: &Board, _perspective: Color, out: &mut IndexList<'_>) {
            *out = IndexList::new(Box::leak(Box::new([0; 64])));
            out.push(0);
        }
        fn delta(_board: &Board, _mv: &Move, out: &mut MoveDelta<'_>) {
            out.added[0] = IndexList::new(Box::leak(Box::new([0; 64])));
            out.added[0].push(3);
        }
    }

    fn registry() -> PluginRegistry {
        let mut r = PluginRegistry::new();
        let blocks = [
            BlockDescriptor::of::<Fine>(),
            BlockDescriptor::of::<Also>(),
            BlockDescriptor::of::<Past>(),
            BlockDescriptor::of::<DeltaSwaps>(),
        ];
        r.register(&blocks, "linked", "test 0").unwrap();
        r
    }

    const E2E4: Move = Move {
        from: 12,
        to: 28,
        role: Role::Pawn,
        captured: NO_ROLE,
        promotion: NO_ROLE,
        kind: MoveKind::Normal,
    };

    #[test]
    fn each_term_stores_its_indices_offset_into_the_set() {
        let set = registry().feature_set("fine+also").unwrap();
        let mut delta = set.delta_buffer();
        set.delta(&start_board(), &E2E4, &mut delta).unwrap();
        for p in Color::ALL {
            assert_eq!(delta.added(p), [1, 2 + 2]);
            assert!(delta.removed(p).is_empty() && !delta.needs_refresh(p));
        }
    }

    #[test]
    fn a_block_that_replaces_its_lists_is_an_error_naming_it() {
        let registry = registry();
        // As a term, and as a product's factor (whose lists the host reads from its scratch).
        for spec in ["fine+swaps", "fine*swaps"] {
            let set = registry.feature_set(spec).unwrap();
            let mut delta = set.delta_buffer();
            let err = set.delta(&start_board(), &E2E4, &mut delta).unwrap_err();
            assert_eq!(err.block, "swaps", "{spec}");
            assert!(
                err.message.contains("replaced the index lists"),
                "{spec}: {err:?}"
            );
        }
        let set = registry.feature_set("fine+swaps").unwrap();
        let err = set
            .active(&start_board(), Color::White, &mut Vec::new())
            .unwrap_err();
        assert_eq!(err.block, "swaps");
        assert!(err.message.contains("replaced the index lists"), "{err:?}");
    }

    #[test]
    fn an_index_past_a_term_or_a_factor_is_an_error_naming_its_block() {
        let registry = registry();
        for spec in ["fine+past", "fine*past"] {
            let set = registry.feature_set(spec).unwrap();
            let mut delta = set.delta_buffer();
            let err = set.delta(&start_board(), &E2E4, &mut delta).unwrap_err();
            assert_eq!(err.block, "past", "{spec}");
            assert!(
                err.message.contains("delta emitted index 4 >= its size 4"),
                "{spec}: {err:?}"
            );
        }
    }

    #[test]
    fn placed_lists_store_offset_indices_and_refuse_those_past_the_size() {
        let mut list = Vec::with_capacity(8);
        list.push(7u32);
        let mut placed = IndexList::placed(spare(&mut list, 3), 100, 5);
        for ix in [0, 4, 5, 2, 9] {
            placed.push(ix);
        }
        assert_eq!(placed.as_slice(), [100, 104, 102]);
        // The first index past the size is remembered; none past it is stored.
        assert_eq!(placed.stray(), Some(5));
        assert!(!placed.overflowed());
        // `take` finds an index by the block's number, the last one taking its place.
        assert!(placed.take(4));
        assert!(!placed.take(4));
        assert_eq!(placed.as_slice(), [100, 102]);
        placed.push(1);
        placed.push(3);
        assert_eq!(placed.as_slice(), [100, 102, 101]);
        assert!(placed.overflowed());
    }
}
