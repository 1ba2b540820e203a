//! A position's active indices of a feature set, term by term, written where their reader
//! wants them.
//!
//! [`FeatureSet::active_into`] calls each term's block once (a product combines its factors'
//! lists first) into a list that an [`ActiveTarget`] places ([`IndexList::placed`]): the
//! evaluator's row lists have the indices stored as the rows of the network's weights, so that
//! a refresh copies no list between the plugins' answer and the kernels (the refresh's half of
//! what [`crate::DeltaTarget`] does for a move).

use abi_stable::std_types::RResult;

use crate::block::IndexList;
use crate::feature_set::{
    block_error, combined_active, index_past_term, lists_replaced, term_bit, FeatureSet, Term,
};
use crate::registry::BlockError;
use crate::types::{Board, Color};

/// Where [`FeatureSet::active_into`] writes a position's indices, term by term.
///
/// For each term the set asks for a [`list`](Self::list), lets the term write its indices
/// there, then hands them over with [`wrote`](Self::wrote).
pub trait ActiveTarget {
    /// A list for term `t` with room for at least `cap` indices after what the target holds,
    /// [placed](IndexList::placed) where the target wants the term's indices and refusing those
    /// at or above the term's size.
    fn list(&mut self, t: usize, term: &Term, cap: usize) -> IndexList<'_>;

    /// Takes the `n` indices that term `t`'s list just stored.
    ///
    /// # Safety
    /// `n` is the length of the list [`list`](Self::list) last made for term `t`.
    unsafe fn wrote(&mut self, t: usize, term: &Term, n: usize);

    /// Writes term `t`'s indices of `board` from `perspective` itself, from the term's
    /// [`PieceTable`](crate::PieceTable), instead of having its block asked; returns whether it
    /// did (never, by default).
    #[inline(always)]
    fn by_piece_table(&mut self, t: usize, term: &Term, board: &Board, perspective: Color) -> bool {
        let _ = (t, term, board, perspective);
        false
    }
}

impl FeatureSet {
    /// Writes the active indices of `board` from `perspective` of the terms in `mask` (bit t
    /// for term t, see [`term_bit`]) into `target`, term by term, local to each term. One call
    /// per block; a product's combinations go through `scratch` first. A block that overflows
    /// its declared bound, or emits an index at or above its size, is an error naming it.
    pub fn active_into(
        &self,
        board: &Board,
        perspective: Color,
        mask: u64,
        target: &mut impl ActiveTarget,
        scratch: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        for (t, term) in self.terms().iter().enumerate() {
            if mask & term_bit(t) == 0 || target.by_piece_table(t, term, board, perspective) {
                continue;
            }
            let cap = term.max_active as usize;
            let mut list = target.list(t, term, cap);
            let buffer = list.buffer();
            if term.is_product() {
                scratch.clear();
                combined_active(&term.factors, board, perspective, scratch)?;
                scratch.iter().for_each(|&ix| list.push(ix));
                assert!(
                    !list.overflowed(),
                    "the factors' bounds bound their combinations by the term's"
                );
            } else {
                let block = &term.factors[0];
                if let RResult::RErr(e) = (block.descriptor.active)(board, perspective, &mut list) {
                    return Err(block_error(block, e));
                }
            }
            if list.buffer() != buffer {
                return Err(lists_replaced(&term.factors[0]));
            }
            if let Some(ix) = list.stray() {
                return Err(index_past_term(term, "emitted", ix));
            }
            let n = list.len();
            // SAFETY: `n` is the length of the list just made for term t.
            unsafe { target.wrote(t, term, n) };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockDescriptor, FeatureBlock, MoveDelta};
    use crate::registry::PluginRegistry;
    use crate::testing::start_board;
    use crate::types::Move;

    /// Size 8: index 1 and the perspective's index (2 or 3).
    struct Two;
    impl FeatureBlock for Two {
        const NAME: &'static str = "two";
        const DESCRIPTION: &'static str = "two indices";
        const SIZE: u32 = 8;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 2;
        fn active(_board: &Board, perspective: Color, out: &mut IndexList<'_>) {
            out.push(1);
            out.push(2 + perspective.index() as u32);
        }
        fn delta(_board: &Board, _mv: &Move, _out: &mut MoveDelta<'_>) {}
    }

    /// Size 4, and index 4 for Black: one past its end.
    struct PastTheEnd;
    impl FeatureBlock for PastTheEnd {
        const NAME: &'static str = "edge";
        const DESCRIPTION: &'static str = "one index, past the end for Black";
        const SIZE: u32 = 4;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 1;
        fn active(_board: &Board, perspective: Color, out: &mut IndexList<'_>) {
            out.push(3 + perspective.index() as u32);
        }
        fn delta(_board: &Board, _mv: &Move, _out: &mut MoveDelta<'_>) {}
    }

    /// Puts a list of its own in place of the host's.
    struct Swaps;
    impl FeatureBlock for Swaps {
        const NAME: &'static str = "swaps";
        const DESCRIPTION: &'static str = "replaces the list it was given";
        const SIZE: u32 = 4;
        const MAX_DELTA: u32 = 1;
        const MAX_ACTIVE: u32 = 1;
        fn active(_board: &Board, _perspective: Color, out: &mut IndexList<'_>) {
            *out = IndexList::new(Box::leak(Box::new([0; 64])));
            out.push(0);
        }
        fn delta(_board: &Board, _mv: &Move, _out: &mut MoveDelta<'_>) {}
    }

    /// Each term's indices as handed over, by term.
    #[derive(Default)]
    struct Collect {
        list: Vec<u32>,
        taken: Vec<(usize, Vec<u32>)>,
    }
    impl ActiveTarget for Collect {
        fn list(&mut self, _t: usize, term: &Term, cap: usize) -> IndexList<'_> {
            self.list.clear();
            self.list.reserve(cap);
            IndexList::placed(&mut self.list.spare_capacity_mut()[..cap], 0, term.size)
        }
        unsafe fn wrote(&mut self, t: usize, _term: &Term, n: usize) {
            // SAFETY: the term's list stored its first `n` entries (the caller's promise).
            unsafe { self.list.set_len(n) };
            self.taken.push((t, self.list.clone()));
        }
    }

    fn registry() -> PluginRegistry {
        let mut r = PluginRegistry::new();
        let blocks = [
            BlockDescriptor::of::<Two>(),
            BlockDescriptor::of::<PastTheEnd>(),
            BlockDescriptor::of::<Swaps>(),
        ];
        r.register(&blocks, "linked", "test 0").unwrap();
        r
    }

    #[test]
    fn each_term_hands_over_its_own_indices_and_a_product_its_combinations() {
        let set = registry().feature_set("two+two*two").unwrap();
        let (board, mut scratch) = (start_board(), Vec::new());
        let mut target = Collect::default();
        set.active_into(&board, Color::Black, u64::MAX, &mut target, &mut scratch)
            .unwrap();
        // Local to each term: the product's pairs (i, j) are i · 8 + j.
        assert_eq!(target.taken, [(0, vec![1, 3]), (1, vec![9, 11, 25, 27])]);
        // A mask leaves the other terms out.
        let mut target = Collect::default();
        set.active_into(&board, Color::White, 0b10, &mut target, &mut scratch)
            .unwrap();
        assert_eq!(target.taken, [(1, vec![9, 10, 17, 18])]);
    }

    #[test]
    fn a_block_that_replaces_its_list_is_an_error_naming_it() {
        let set = registry().feature_set("two+swaps").unwrap();
        let (board, mut scratch) = (start_board(), Vec::new());
        let mut target = Collect::default();
        let err = set
            .active_into(&board, Color::White, u64::MAX, &mut target, &mut scratch)
            .unwrap_err();
        assert_eq!(err.block, "swaps");
        assert!(err.message.contains("replaced the index lists"), "{err:?}");
    }

    #[test]
    fn an_index_past_the_term_is_an_error_naming_it() {
        let set = registry().feature_set("two+edge").unwrap();
        let (board, mut scratch) = (start_board(), Vec::new());
        let mut target = Collect::default();
        set.active_into(&board, Color::White, u64::MAX, &mut target, &mut scratch)
            .unwrap();
        let err = set
            .active_into(&board, Color::Black, u64::MAX, &mut target, &mut scratch)
            .unwrap_err();
        assert_eq!(err.block, "edge");
        assert!(
            err.message.contains("emitted index 4 >= its size 4"),
            "{err:?}"
        );
    }
}
