//! Sparse training batches, encoded through the same feature plugins the engine uses.
//!
//! A batch stores, for each perspective, the sorted unique active indices of every position in
//! compressed-sparse-row form (`indices` plus `offsets`, as an embedding bag takes them), never a
//! dense N-wide bitset. Positions are stored side-to-move first: perspective 0 is the side to
//! move's view, perspective 1 the other side's (the order of the network's concatenation).

use plugin_api::{BlockError, Board, FeatureSet};

/// Active indices of many positions, both perspectives, CSR layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseBatch {
    /// Number of positions.
    pub len: usize,
    /// Indices of all positions, per perspective (0 = side to move, 1 = other side).
    pub indices: [Vec<u32>; 2],
    /// `offsets[p][i]..offsets[p][i + 1]` are position i's indices in `indices[p]`.
    pub offsets: [Vec<u32>; 2],
    /// 0 if White was to move, 1 if Black (the network's input is side-to-move relative).
    pub stm: Vec<u8>,
}

impl SparseBatch {
    /// An empty batch with room for `positions` positions of `set`.
    pub fn with_capacity(set: &FeatureSet, positions: usize) -> Self {
        let per = set.max_active() * positions;
        SparseBatch {
            len: 0,
            indices: [Vec::with_capacity(per), Vec::with_capacity(per)],
            offsets: [vec![0], vec![0]],
            stm: Vec::with_capacity(positions),
        }
    }

    /// Appends one position; `scratch` is reused between calls to avoid allocation.
    pub fn push(
        &mut self,
        set: &FeatureSet,
        board: &Board,
        scratch: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        if self.offsets[0].is_empty() {
            self.offsets = [vec![0], vec![0]];
        }
        for (slot, perspective) in [board.turn, board.turn.other()].into_iter().enumerate() {
            scratch.clear();
            set.active(board, perspective, scratch)?;
            scratch.sort_unstable();
            scratch.dedup();
            self.indices[slot].extend_from_slice(scratch);
            self.offsets[slot].push(self.indices[slot].len() as u32);
        }
        self.stm.push(board.turn as u8);
        self.len += 1;
        Ok(())
    }

    /// Position `i`'s indices from perspective slot `p` (0 = side to move).
    pub fn position(&self, p: usize, i: usize) -> &[u32] {
        let (a, b) = (self.offsets[p][i] as usize, self.offsets[p][i + 1] as usize);
        &self.indices[p][a..b]
    }
}
