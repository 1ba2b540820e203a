//! A move's delta of a feature set: what each term adds and removes, for both perspectives.
//!
//! [`FeatureSet::delta_into`] calls each term's block once (a product also lists its left
//! factors' active indices) and hands the term's lists, local to the term, to a
//! [`DeltaTarget`], which places them: [`FeatureDelta`] offsets them into the set's index space
//! (what the trainer, the conformance kit and counted sets read); the evaluator's row lists
//! shift them straight to the rows of the network's weights, so that no list is copied on the
//! per-move path.

use std::mem::MaybeUninit;

use abi_stable::std_types::RResult;

use crate::block::{IndexList, MoveDelta};
use crate::feature_set::{
    block_error, combined_active, index_past_term, term_bit, FeatureSet, Term,
};
use crate::loader::{BlockError, RegisteredBlock};
use crate::types::{Board, Color, Move, Role};

/// Where [`FeatureSet::delta_into`] writes a move's indices, term by term.
///
/// For each term the set asks for [`room`](Self::room) in four lists, lets the term write its
/// indices there (local to the term: below its size), then hands them over with
/// [`wrote`](Self::wrote).
pub trait DeltaTarget {
    /// Room for at least `cap` indices of term `t` after what each of the four lists holds:
    /// added for White, added for Black, removed for White, removed for Black.
    fn room(&mut self, t: usize, term: &Term, cap: usize) -> [&mut [MaybeUninit<u32>]; 4];

    /// Takes the `counts` indices term `t` just wrote at the start of each room (same order).
    /// A perspective in `refresh` must be recomputed: its indices of this term are dropped.
    /// Returns an index at or above the term's size, if there is one (none is taken then).
    fn wrote(
        &mut self,
        t: usize,
        term: &Term,
        counts: [usize; 4],
        refresh: [bool; 2],
    ) -> Result<(), u32>;
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
                    for (p, fires) in triggered(term, board, mv).into_iter().enumerate() {
                        if fires {
                            refresh_terms[p] |= term_bit(t);
                        }
                    }
                }
                continue;
            }
            let block = &term.factors[0];
            let cap = term.max_delta as usize;
            let (counts, refresh) = if term.is_product() {
                product_delta(term, board, mv, target.room(t, term, cap), scratch)?
            } else {
                let [a0, a1, r0, r1] = target.room(t, term, cap);
                let mut md = MoveDelta {
                    added: [IndexList::in_spare(a0), IndexList::in_spare(a1)],
                    removed: [IndexList::in_spare(r0), IndexList::in_spare(r1)],
                    refresh: [false; 2],
                };
                if let RResult::RErr(e) = (block.descriptor.delta)(board, mv, &mut md) {
                    return Err(block_error(block, e));
                }
                let counts = [
                    md.added[0].len(),
                    md.added[1].len(),
                    md.removed[0].len(),
                    md.removed[1].len(),
                ];
                (counts, md.refresh)
            };
            for (p, asked) in refresh.into_iter().enumerate() {
                if asked {
                    refresh_terms[p] |= term_bit(t);
                }
            }
            if let Err(ix) = target.wrote(t, term, counts, refresh) {
                return Err(index_past_term(term, "delta emitted", ix));
            }
        }
        Ok(refresh_terms)
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

/// The delta of a product term into `rooms`: refresh a perspective unless only the last factor
/// changed, in which case its changes are emitted under every active combination of the
/// others. Returns the counts written and the perspectives to refresh.
fn product_delta(
    term: &Term,
    board: &Board,
    mv: &Move,
    mut rooms: [&mut [MaybeUninit<u32>]; 4],
    scratch: &mut ProductScratch,
) -> Result<([usize; 4], [bool; 2]), BlockError> {
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
    let n = [
        md.added[0].len(),
        md.added[1].len(),
        md.removed[0].len(),
        md.removed[1].len(),
    ];
    let last_refresh = md.refresh;
    let mut counts = [0; 4];
    let mut refresh = [false; 2];
    for p in Color::ALL {
        let pi = p.index();
        if changed[pi] || last_refresh[pi] {
            refresh[pi] = true;
            continue;
        }
        if n[pi] == 0 && n[2 + pi] == 0 {
            continue;
        }
        // The left factors' combined active indices (unchanged by the move).
        scratch.prefix.clear();
        combined_active(prefix, board, p, &mut scratch.prefix)?;
        for list in [pi, 2 + pi] {
            let room = &mut rooms[list];
            for &i in &scratch.prefix {
                for &j in &scratch.factor_lists[list][..n[list]] {
                    room[counts[list]].write(i * last_size + j);
                    counts[list] += 1;
                }
            }
        }
    }
    Ok((counts, refresh))
}

/// Calls one block's `delta` into the scratch lists (added White, added Black, removed White,
/// removed Black) and returns the filled lists.
fn call_delta<'b>(
    block: &RegisteredBlock,
    board: &Board,
    mv: &Move,
    lists: &'b mut [Vec<u32>; 4],
) -> Result<MoveDelta<'b>, BlockError> {
    let cap = block.descriptor.max_delta as usize;
    let [aw, ab, rw, rb] = lists;
    let mut md = MoveDelta {
        added: [
            IndexList::new(&mut aw[..cap]),
            IndexList::new(&mut ab[..cap]),
        ],
        removed: [
            IndexList::new(&mut rw[..cap]),
            IndexList::new(&mut rb[..cap]),
        ],
        refresh: [false; 2],
    };
    if let RResult::RErr(e) = (block.descriptor.delta)(board, mv, &mut md) {
        return Err(block_error(block, e));
    }
    for p in 0..2 {
        if md.added[p].overflowed() || md.removed[p].overflowed() {
            md.refresh[p] = true;
        }
    }
    Ok(md)
}

/// Takes `n` indices written into `list`'s spare capacity, each below `size`, plus `shift`
/// (wrapping), and shows each to `each` (a reader that asks for the memory it will read).
/// Returns the first index not below `size`, if any (then the list keeps its length).
#[inline(always)]
pub fn take_shifted(
    list: &mut Vec<u32>,
    n: usize,
    size: u32,
    shift: u32,
    mut each: impl FnMut(u32),
) -> Result<(), u32> {
    let len = list.len();
    assert!(
        n <= list.capacity() - len,
        "more indices than the room given"
    );
    // SAFETY: the caller wrote the `n` entries after `len`, inside the capacity (asserted).
    let new = unsafe { std::slice::from_raw_parts_mut(list.as_mut_ptr().add(len), n) };
    // One pass with an exit: a delta's lists are a few indices long, too short for the
    // vectorised loops the compiler makes of a pass without one.
    for ix in new.iter_mut() {
        if *ix >= size {
            return Err(*ix);
        }
        *ix = ix.wrapping_add(shift);
        each(*ix);
    }
    // SAFETY: the entries up to len + n are written.
    unsafe { list.set_len(len + n) };
    Ok(())
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
    fn room(&mut self, _t: usize, _term: &Term, cap: usize) -> [&mut [MaybeUninit<u32>]; 4] {
        let [a0, a1] = &mut self.added;
        let [r0, r1] = &mut self.removed;
        [
            spare(a0, cap),
            spare(a1, cap),
            spare(r0, cap),
            spare(r1, cap),
        ]
    }

    #[inline]
    fn wrote(
        &mut self,
        _t: usize,
        term: &Term,
        counts: [usize; 4],
        refresh: [bool; 2],
    ) -> Result<(), u32> {
        let [a0, a1] = &mut self.added;
        let [r0, r1] = &mut self.removed;
        for (k, list) in [a0, a1, r0, r1].into_iter().enumerate() {
            if !refresh[k % 2] {
                take_shifted(list, counts[k], term.size, term.offset, |_| {})?;
            }
        }
        Ok(())
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
    use super::{spare, take_shifted};

    #[test]
    fn taken_indices_are_shifted_shown_and_checked_against_the_size() {
        let mut list = Vec::with_capacity(8);
        list.push(7u32);
        for (slot, ix) in spare(&mut list, 3).iter_mut().zip([0u32, 4, 2]) {
            slot.write(ix);
        }
        let mut seen = Vec::new();
        assert_eq!(take_shifted(&mut list, 3, 5, 100, |r| seen.push(r)), Ok(()));
        assert_eq!(list, [7, 100, 104, 102]);
        assert_eq!(seen, [100, 104, 102]);
        // An index at the size is refused and nothing of the call is taken.
        for (slot, ix) in spare(&mut list, 2).iter_mut().zip([1u32, 5]) {
            slot.write(ix);
        }
        assert_eq!(take_shifted(&mut list, 2, 5, 100, |_| {}), Err(5));
        assert_eq!(list, [7, 100, 104, 102]);
    }
}
