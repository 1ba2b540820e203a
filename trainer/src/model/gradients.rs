//! One training step's gradients, W1's row-compressed on the CPU.

use tch::Tensor;

use super::input::SparseInput;

/// The gradients of one training step, in the order of [`param_names`](super::param_names).
///
/// On the CPU the first layer's gradient is sparse: `w1_rows` lists the rows of W1 that the
/// batch's indices touch (ascending) and `tensors[0]` holds their gradients, one row each
/// (`[rows, L1 + P]`); every other row's gradient is zero. A batch of a 22,528-input set touches
/// a fraction of W1, and the optimizer need not read a dense `[N, L1]` zero for the rest.
/// Elsewhere (autograd) `w1_rows` is `None` and `tensors[0]` is dense.
#[derive(Debug)]
pub struct Gradients {
    /// One tensor per parameter (W1's possibly row-compressed).
    pub tensors: Vec<Tensor>,
    /// The W1 rows of `tensors[0]`'s rows, when compressed.
    pub w1_rows: Option<Vec<u32>>,
    /// With a dense W1 gradient (autograd's, off the CPU), the rows the batch's indices touch:
    /// sorted, distinct, on the gradient's device. Set only for sparse Adam
    /// ([`Gradients::touch_rows`]).
    pub w1_touched: Option<Tensor>,
}

impl Gradients {
    /// Records the W1 rows that `input` touches, for sparse Adam, where W1's gradient is dense
    /// (a row-compressed one lists its rows already).
    pub fn touch_rows(&mut self, input: &SparseInput) {
        if self.w1_rows.is_none() {
            let indices = input.indices.to_device(self.tensors[0].device());
            self.w1_touched = Some(indices.internal_unique(true, false).0);
        }
    }

    /// W1's gradient as a dense `[n, L1 + P]` tensor.
    pub fn dense_w1(&self, n: usize) -> Tensor {
        match &self.w1_rows {
            None => self.tensors[0].shallow_clone(),
            Some(rows) => dense_rows(&self.tensors[0], rows, n),
        }
    }
}

/// The `[n, cols]` tensor whose rows `rows` (one per row of `values`) are `values` and whose
/// other rows are zero: a row-compressed gradient made dense.
pub fn dense_rows(values: &Tensor, rows: &[u32], n: usize) -> Tensor {
    let index: Vec<i64> = rows.iter().map(|&r| i64::from(r)).collect();
    let index = Tensor::from_slice(&index).to_device(values.device());
    let cols = values.size()[1];
    Tensor::zeros([n as i64, cols], (values.kind(), values.device())).index_copy(0, &index, values)
}
