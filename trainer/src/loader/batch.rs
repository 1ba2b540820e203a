//! Sparse training batches, encoded through the same feature plugins the engine uses.
//!
//! Positions are encoded in the training layout ([`FeatureSet::active_training`]): the real
//! indices, then the virtual features of factorized terms.
//!
//! A batch stores, for each perspective, the sorted unique active indices of every position in
//! compressed-sparse-row form (`indices` plus `offsets`, as an embedding bag takes them), never a
//! dense N-wide bitset. Positions are stored side-to-move first: perspective 0 is the side to
//! move's view, perspective 1 the other side's (the order of the network's concatenation).
//! Beside the indices, each position carries its labels: score and game result (both from the
//! side to move's view) and ply.

use plugin_api::{BlockError, Board, FeatureSet};

use crate::data::Sample;

/// The value of [`SparseBatch::result`] for a position whose game result is unknown (the text
/// formats carry none).
pub const NO_RESULT: i8 = i8::MIN;

/// Active indices and labels of many positions, both perspectives, CSR layout.
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
    /// Search score, side to move's view (0 for positions pushed without labels).
    pub score: Vec<i16>,
    /// Game result, side to move's view: 1 win, 0 draw, −1 loss, [`NO_RESULT`] if unknown.
    pub result: Vec<i8>,
    /// Plies since the start of the game.
    pub ply: Vec<u16>,
    /// Pieces on the board (kings and pawns included): a position's layer stack and PSQT
    /// bucket.
    pub pieces: Vec<u8>,
}

impl SparseBatch {
    /// An empty batch with room for `positions` positions of `set`.
    pub fn with_capacity(set: &FeatureSet, positions: usize) -> Self {
        let per = set.max_active() * positions;
        let mut offsets = [
            Vec::with_capacity(positions + 1),
            Vec::with_capacity(positions + 1),
        ];
        offsets[0].push(0);
        offsets[1].push(0);
        SparseBatch {
            len: 0,
            indices: [Vec::with_capacity(per), Vec::with_capacity(per)],
            offsets,
            stm: Vec::with_capacity(positions),
            score: Vec::with_capacity(positions),
            result: Vec::with_capacity(positions),
            ply: Vec::with_capacity(positions),
            pieces: Vec::with_capacity(positions),
        }
    }

    fn push_indices(
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
            set.active_training(board, perspective, scratch)?;
            scratch.sort_unstable();
            scratch.dedup();
            self.indices[slot].extend_from_slice(scratch);
            self.offsets[slot].push(self.indices[slot].len() as u32);
        }
        self.stm.push(board.turn as u8);
        self.pieces
            .push((board.by_color[0] | board.by_color[1]).count_ones() as u8);
        self.len += 1;
        Ok(())
    }

    /// Appends one position without labels (score 0, result unknown, ply 0); `scratch` is
    /// reused between calls to avoid allocation.
    pub fn push(
        &mut self,
        set: &FeatureSet,
        board: &Board,
        scratch: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        self.push_indices(set, board, scratch)?;
        self.score.push(0);
        self.result.push(NO_RESULT);
        self.ply.push(0);
        Ok(())
    }

    /// Appends one training sample with its labels.
    pub fn push_sample(
        &mut self,
        set: &FeatureSet,
        sample: &Sample,
        scratch: &mut Vec<u32>,
    ) -> Result<(), BlockError> {
        self.push_indices(set, &sample.board, scratch)?;
        self.score.push(sample.score);
        self.result.push(sample.result.unwrap_or(NO_RESULT));
        self.ply.push(sample.ply);
        Ok(())
    }

    /// Appends all positions of `other` (used to join batch parts encoded in parallel).
    pub fn append(&mut self, other: &SparseBatch) {
        for p in 0..2 {
            if self.offsets[p].is_empty() {
                self.offsets[p].push(0);
            }
            let base = self.indices[p].len() as u32;
            self.indices[p].extend_from_slice(&other.indices[p]);
            self.offsets[p].extend(other.offsets[p].iter().skip(1).map(|o| o + base));
        }
        self.stm.extend_from_slice(&other.stm);
        self.score.extend_from_slice(&other.score);
        self.result.extend_from_slice(&other.result);
        self.ply.extend_from_slice(&other.ply);
        self.pieces.extend_from_slice(&other.pieces);
        self.len += other.len;
    }

    /// The positions of `parts` in order, in one batch allocated to its exact size (parts
    /// encoded in parallel are joined this way; a batch waiting in a queue holds no spare
    /// capacity).
    pub fn concat(parts: &[SparseBatch]) -> SparseBatch {
        let positions: usize = parts.iter().map(|p| p.len).sum();
        let indices = |k: usize| parts.iter().map(|p| p.indices[k].len()).sum::<usize>();
        let offsets = || {
            let mut v = Vec::with_capacity(positions + 1);
            v.push(0);
            v
        };
        let mut batch = SparseBatch {
            len: 0,
            indices: [
                Vec::with_capacity(indices(0)),
                Vec::with_capacity(indices(1)),
            ],
            offsets: [offsets(), offsets()],
            stm: Vec::with_capacity(positions),
            score: Vec::with_capacity(positions),
            result: Vec::with_capacity(positions),
            ply: Vec::with_capacity(positions),
            pieces: Vec::with_capacity(positions),
        };
        for p in parts {
            batch.append(p);
        }
        batch
    }

    /// Position `i`'s indices from perspective slot `p` (0 = side to move).
    pub fn position(&self, p: usize, i: usize) -> &[u32] {
        let (a, b) = (self.offsets[p][i] as usize, self.offsets[p][i + 1] as usize);
        &self.indices[p][a..b]
    }

    /// Bytes held by the batch's vectors (their lengths, not capacities).
    pub fn bytes(&self) -> usize {
        4 * (self.indices[0].len()
            + self.indices[1].len()
            + self.offsets[0].len()
            + self.offsets[1].len())
            + self.len * (1 + 2 + 1 + 2 + 1)
    }
}
