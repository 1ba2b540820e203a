//! The model's input: a batch's sparse indices as `embedding_bag` takes them.

use tch::{Device, Tensor};

/// The model's input: the CSR indices of both perspectives of B positions, as `embedding_bag`
/// takes them, interleaved: bag 2·i is position i's side-to-move view, bag 2·i + 1 its other
/// side's, so the `[2·B, L1]` accumulators are already the `[B, 2·L1]` concatenation.
#[derive(Debug)]
pub struct SparseInput {
    /// Number of positions B.
    pub len: usize,
    /// All indices (`i64`), bag after bag.
    pub indices: Tensor,
    /// Start of each of the 2·B bags in `indices` (`i64`).
    pub offsets: Tensor,
    /// Each position's number of pieces (kings and pawns included): picks its layer stack and
    /// PSQT bucket.
    pub pieces: Vec<u8>,
}

impl SparseInput {
    /// The input of a whole [`SparseBatch`](crate::loader::batch::SparseBatch), on the CPU.
    pub fn from_batch(batch: &crate::loader::batch::SparseBatch) -> SparseInput {
        let total = batch.indices[0].len() + batch.indices[1].len();
        let mut indices = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(2 * batch.len);
        for i in 0..batch.len {
            for p in 0..2 {
                offsets.push(indices.len() as i64);
                indices.extend(batch.position(p, i).iter().map(|&x| i64::from(x)));
            }
        }
        SparseInput {
            len: batch.len,
            indices: Tensor::from_slice(&indices),
            offsets: Tensor::from_slice(&offsets),
            pieces: batch.pieces.clone(),
        }
    }

    /// The same input on `device`.
    pub fn to_device(&self, device: Device) -> SparseInput {
        SparseInput {
            len: self.len,
            indices: self.indices.to_device(device),
            offsets: self.offsets.to_device(device),
            pieces: self.pieces.clone(),
        }
    }
}
