//! A move's delta, and a refresh's active indices, written straight into the rows of the first
//! layer's weights.
//!
//! [`FeatureSet::delta_into`] and [`FeatureSet::active_into`] hand each term lists to write its
//! indices into; a term is one run of the layer's storage in every network this project
//! writes, so the lists are [placed](IndexList::placed) in the row lists the accumulator
//! kernels read, with the run's shift: the block stores its indices as storage rows. No list
//! is copied or passed over between the plugins' answer and the kernels (Stockfish's
//! `append_changed_indices` and `append_active_indices` write the lists its `apply_combined` and
//! `update_accumulator_refresh_cache` read, `src/nnue/nnue_accumulator.cpp` at 762dd1da9).

use std::sync::Arc;

use plugin_api::{
    ActiveTarget, Board, Color, DeltaTarget, FeatureSet, IndexList, Move, PieceTable, Term,
};

use super::first_layer::{FirstLayer, RowLists, WeightType};
use super::network::Network;

/// Per perspective, the rows a move adds and subtracts, written by [`FeatureSet::delta_into`].
pub(crate) struct DeltaRows {
    /// The rows of White's and Black's perspectives.
    lists: [RowLists; 2],
    /// Per term: its storage and the shift from its own indices to the storage's rows.
    terms: Vec<(WeightType, u32)>,
    /// Per term: its [`PieceTable`], from which its changes are written without asking its
    /// block ([`DeltaTarget::by_piece_table`]), if it has one.
    tables: Vec<Option<Arc<PieceTable>>>,
    /// The rows each list was made with room for.
    room: usize,
    /// The rows handed out to the terms since the lists were emptied, in each list at most:
    /// while it is at most `room`, every list has room for what is handed out (one check per
    /// term instead of one per list).
    handed: usize,
    /// Per storage, the end of the terms' runs: every row a term can write lies below it
    /// ([`RowLists::cover`]).
    ends: [u32; 2],
}

impl DeltaRows {
    /// Row lists for the deltas of `set` over `net`'s first layer, when each term is one run of
    /// its storage (else `None`: the deltas then go through [`plugin_api::FeatureDelta`]).
    pub fn new(set: &FeatureSet, net: &Network) -> Option<DeltaRows> {
        let layer = net.w1();
        let terms = set
            .terms()
            .iter()
            .map(|t| {
                layer
                    .run_of(t.offset, t.size)
                    .map(|(ty, shift)| (ty, shift.wrapping_add(t.offset)))
            })
            .collect::<Option<Vec<_>>>()?;
        let mut ends = [0u32; 2];
        for (&(ty, shift), term) in terms.iter().zip(set.terms()) {
            let end = &mut ends[ty.slot()];
            *end = (*end).max(shift.wrapping_add(term.size));
        }
        let room = 2 * set.max_delta();
        let tables = set
            .terms()
            .iter()
            .map(|t| t.piece_table().cloned())
            .collect();
        Some(DeltaRows {
            lists: [RowLists::with_capacity(room), RowLists::with_capacity(room)],
            terms,
            tables,
            room,
            handed: 0,
            ends,
        })
    }

    /// Empties both perspectives' lists, their rows bounded by the terms' runs.
    pub fn clear(&mut self) {
        for list in &mut self.lists {
            list.clear();
            list.cover(self.ends);
        }
        self.handed = 0;
    }

    /// The rows of `perspective`.
    #[inline(always)]
    pub fn of(&self, perspective: Color) -> &RowLists {
        &self.lists[perspective.index()]
    }

    /// `rows` as the target of a refresh's [`FeatureSet::active_into`], with these terms' runs.
    pub fn active_rows<'r>(&'r self, rows: &'r mut RowLists) -> ActiveRows<'r> {
        rows.cover(self.ends);
        ActiveRows {
            rows,
            terms: &self.terms,
            tables: &self.tables,
        }
    }

    /// Lists in `out` the rows of `perspective` that belong to the terms in `mask` (bit t for
    /// term t): a hybrid update applies the second group's rows alone.
    pub fn select(
        &self,
        perspective: Color,
        set: &FeatureSet,
        mask: u64,
        layer: &FirstLayer,
        out: &mut RowLists,
    ) {
        out.clear();
        let rows = self.of(perspective);
        for (t, (term, &(ty, shift))) in set.terms().iter().zip(&self.terms).enumerate() {
            if mask & plugin_api::term_bit(t) == 0 {
                continue;
            }
            let own = |&row: &u32| {
                let local = row.wrapping_sub(shift);
                (local < term.size).then(|| term.offset + local)
            };
            rows.added(ty)
                .iter()
                .filter_map(own)
                .for_each(|i| out.add(layer, i));
            rows.removed(ty)
                .iter()
                .filter_map(own)
                .for_each(|i| out.sub(layer, i));
        }
    }
}

/// A term's changes by `mv` from its piece `table`, into rooms of `cap` rows of storage `ty` of
/// both perspectives' `lists`: for each perspective whose king stays, the rows (the indices
/// plus `shift`) of what the pieces taken off add, subtracted, and of what the pieces put on
/// add; the perspectives whose king moves are to be refreshed. Not inlined: the per-move loop
/// over the terms stays small.
///
/// # Safety
/// Every list of `ty` has room for `cap` more rows.
#[inline(never)]
unsafe fn pieces_delta(
    lists: &mut [RowLists; 2],
    table: &PieceTable,
    (ty, shift, cap): (WeightType, u32, usize),
    board: &Board,
    mv: &Move,
) -> [bool; 2] {
    let (places, rows) = table.changes(board, mv);
    let mut refresh = [false; 2];
    for (p, row) in rows.into_iter().enumerate() {
        let Some(row) = row else {
            refresh[p] = true;
            continue;
        };
        let list = &mut lists[p];
        // SAFETY: by the caller.
        let [add_room, sub_room] = unsafe { list.rooms_unchecked(ty, cap) };
        // A move puts on and takes off two pieces at most, one index each (the table's terms
        // have delta lists of two at least).
        let counts =
            [(add_room, places.added()), (sub_room, places.removed())].map(|(room, places)| {
                let room = &mut room[..2];
                let mut n = 0;
                for ix in places.into_iter().filter_map(|place| row.of(place)) {
                    room[n].write(ix.wrapping_add(shift));
                    n += 1;
                }
                n
            });
        // SAFETY: the rows just stored, of the term's indices (below its size: the table holds
        // what its block's `active` emitted), so inside its run, which `clear` covered.
        unsafe { list.took(ty, counts) };
    }
    refresh
}

impl DeltaTarget for DeltaRows {
    #[inline(always)]
    fn lists(&mut self, t: usize, term: &Term, cap: usize) -> [IndexList<'_>; 4] {
        let (ty, shift) = self.terms[t];
        self.handed += cap;
        assert!(
            self.handed <= self.room,
            "delta lists made for another feature set"
        );
        let [white, black] = &mut self.lists;
        // SAFETY: every list was made with room for `room` rows and holds at most the rows
        // handed out before (a term stores at most its `cap` in each, `wrote`'s contract), so
        // `cap` more fit.
        let [white_added, white_removed] = unsafe { white.rooms_unchecked(ty, cap) };
        let [black_added, black_removed] = unsafe { black.rooms_unchecked(ty, cap) };
        [white_added, black_added, white_removed, black_removed]
            .map(|room| IndexList::placed(room, shift, term.size))
    }

    /// The term's changes from its piece table, when it has one ([`pieces_delta`]).
    #[inline(always)]
    fn by_piece_table(
        &mut self,
        t: usize,
        term: &Term,
        board: &Board,
        mv: &Move,
    ) -> Option<[bool; 2]> {
        let table = self.tables[t].as_deref()?;
        let (ty, shift) = self.terms[t];
        let cap = term.max_delta as usize;
        self.handed += cap;
        assert!(
            self.handed <= self.room,
            "delta lists made for another feature set"
        );
        // SAFETY: `cap` rows handed out, as `lists` does.
        Some(unsafe { pieces_delta(&mut self.lists, table, (ty, shift, cap), board, mv) })
    }

    #[inline(always)]
    unsafe fn wrote(&mut self, t: usize, _: &Term, counts: [usize; 4], refresh: [bool; 2]) {
        let (ty, _) = self.terms[t];
        for p in 0..2 {
            if !refresh[p] {
                // SAFETY: the lists made by `lists` stored these counts (the caller's promise),
                // rows of the term's run, which `clear` covered.
                unsafe { self.lists[p].took(ty, [counts[p], counts[2 + p]]) };
            }
        }
    }
}

/// A refresh's rows: the active indices of the terms asked for, written into one row list as
/// rows of their storage ([`DeltaRows::active_rows`]).
pub(crate) struct ActiveRows<'r> {
    rows: &'r mut RowLists,
    /// Per term: its storage and the shift to its rows (those of [`DeltaRows`]).
    terms: &'r [(WeightType, u32)],
    /// Per term: its piece table, if it has one (those of [`DeltaRows`]).
    tables: &'r [Option<Arc<PieceTable>>],
}

impl ActiveTarget for ActiveRows<'_> {
    #[inline(always)]
    fn list(&mut self, t: usize, term: &Term, cap: usize) -> IndexList<'_> {
        let (ty, shift) = self.terms[t];
        let [room, _] = self.rows.rooms(ty, cap);
        IndexList::placed(room, shift, term.size)
    }

    /// The term's rows from its piece table, when it has one and the perspective its king.
    #[inline(always)]
    fn by_piece_table(&mut self, t: usize, term: &Term, board: &Board, perspective: Color) -> bool {
        let Some(table) = self.tables[t].as_deref() else {
            return false;
        };
        let (ty, shift) = self.terms[t];
        let [room, _] = self.rows.rooms(ty, term.max_active as usize);
        let (mut n, mut overflow) = (0, false);
        let listed = table.active(board, perspective, |ix| match room.get_mut(n) {
            Some(slot) => {
                slot.write(ix.wrapping_add(shift));
                n += 1;
            }
            None => overflow = true,
        });
        // More than the block's bound: its own `active` is asked, and refused as it should be.
        if !listed || overflow {
            return false;
        }
        // SAFETY: the rows just stored, of the term's indices (below its size: the table holds
        // what its block's `active` emitted), so inside its run, which `active_rows` covered.
        unsafe { self.rows.took(ty, [n, 0]) };
        true
    }

    #[inline(always)]
    unsafe fn wrote(&mut self, t: usize, _: &Term, n: usize) {
        let (ty, _) = self.terms[t];
        // SAFETY: the list made by `list` stored `n` rows (the caller's promise), rows of the
        // term's run, which `active_rows` covered.
        unsafe { self.rows.took(ty, [n, 0]) };
    }
}
