//! A position's active indices of a feature set, term by term, written where their reader
//! wants them.
//!
//! [`FeatureSet::active_into`] calls each term's block once (a product combines its factors'
//! lists first) and hands the term's indices, local to the term, to an [`ActiveTarget`]: the
//! evaluator's row lists shift them straight to the rows of the network's weights, so that a
//! refresh copies no list between the plugins' answer and the kernels (the refresh's half of
//! what [`crate::DeltaTarget`] does for a move).

use std::mem::MaybeUninit;

use abi_stable::std_types::RResult;

use crate::block::IndexList;
use crate::feature_set::{
    block_error, combined_active, index_past_term, term_bit, FeatureSet, Term,
};
use crate::loader::BlockError;
use crate::types::{Board, Color};

/// Where [`FeatureSet::active_into`] writes a position's indices, term by term.
///
/// For each term the set asks for [`room`](Self::room), lets the term write its indices there
/// (local to the term: below its size), then hands them over with [`wrote`](Self::wrote).
pub trait ActiveTarget {
    /// Room for at least `cap` indices of term `t` after what the list holds.
    fn room(&mut self, t: usize, term: &Term, cap: usize) -> &mut [MaybeUninit<u32>];

    /// Takes the `n` indices term `t` just wrote at the start of its room. Returns an index at
    /// or above the term's size, if there is one (none is taken then).
    fn wrote(&mut self, t: usize, term: &Term, n: usize) -> Result<(), u32>;
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
            if mask & term_bit(t) == 0 {
                continue;
            }
            let cap = term.max_active as usize;
            let n = if term.is_product() {
                scratch.clear();
                combined_active(&term.factors, board, perspective, scratch)?;
                // The factors' bounds bound their combinations by the term's.
                let room = &mut target.room(t, term, cap)[..scratch.len()];
                for (slot, &ix) in room.iter_mut().zip(scratch.iter()) {
                    slot.write(ix);
                }
                scratch.len()
            } else {
                let block = &term.factors[0];
                let mut list = IndexList::in_spare(&mut target.room(t, term, cap)[..cap]);
                if let RResult::RErr(e) = (block.descriptor.active)(board, perspective, &mut list) {
                    return Err(block_error(block, e));
                }
                list.len()
            };
            if let Err(ix) = target.wrote(t, term, n) {
                return Err(index_past_term(term, "emitted", ix));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockDescriptor, FeatureBlock, MoveDelta};
    use crate::loader::PluginRegistry;
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
    struct Edge;
    impl FeatureBlock for Edge {
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

    /// Each term's indices as handed over, by term.
    #[derive(Default)]
    struct Collect {
        list: Vec<u32>,
        taken: Vec<(usize, Vec<u32>)>,
    }
    impl ActiveTarget for Collect {
        fn room(&mut self, _t: usize, _term: &Term, cap: usize) -> &mut [MaybeUninit<u32>] {
            self.list.clear();
            self.list.reserve(cap);
            &mut self.list.spare_capacity_mut()[..cap]
        }
        fn wrote(&mut self, t: usize, term: &Term, n: usize) -> Result<(), u32> {
            // SAFETY: the term wrote its first `n` entries of the room.
            unsafe { self.list.set_len(n) };
            if let Some(&ix) = self.list.iter().find(|&&ix| ix >= term.size) {
                return Err(ix);
            }
            self.taken.push((t, self.list.clone()));
            Ok(())
        }
    }

    fn registry() -> PluginRegistry {
        let mut r = PluginRegistry::new();
        let blocks = [BlockDescriptor::of::<Two>(), BlockDescriptor::of::<Edge>()];
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
