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

    /// Scales the whole gradient down to the norm `max` when its norm (all parameters as one
    /// vector; a row-compressed W1's zero rows add nothing) is above it: PyTorch's
    /// `clip_grad_norm_(parameters, max)` (`torch/nn/utils/clip_grad.py`: the factor
    /// `max / (norm + 1e-6)`, used when below 1), as nnue-pytorch's trainer applies it with
    /// `gradient_clip_val = 2.0` (`train.py` at 9f72946). Returns the norm before clipping.
    pub fn clip_norm(&mut self, max: f64) -> f64 {
        let squares: Vec<Tensor> = self
            .tensors
            .iter()
            .map(|g| g.square().sum(tch::Kind::Double))
            .collect();
        let norm = Tensor::stack(&squares, 0)
            .sum(tch::Kind::Double)
            .sqrt()
            .double_value(&[]);
        let factor = max / (norm + 1e-6);
        if factor < 1.0 {
            for g in &mut self.tensors {
                let _ = g.g_mul_scalar_(factor);
            }
        }
        norm
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_scales_the_whole_gradient_to_the_norm_as_clip_grad_norm() {
        // Norm √(3² + 4²) = 5 clipped to 2: every value × 2 / (5 + 1e-6).
        let mut grads = Gradients {
            tensors: vec![
                Tensor::from_slice(&[3.0f32]),
                Tensor::from_slice(&[0.0f32, 4.0]),
            ],
            w1_rows: None,
            w1_touched: None,
        };
        assert!((grads.clip_norm(2.0) - 5.0).abs() < 1e-9);
        let factor = 2.0 / (5.0 + 1e-6);
        assert!((grads.tensors[0].double_value(&[0]) - 3.0 * factor).abs() < 1e-6);
        assert!((grads.tensors[1].double_value(&[1]) - 4.0 * factor).abs() < 1e-6);
        // Below the limit nothing changes.
        let before = grads.tensors[1].double_value(&[1]);
        grads.clip_norm(10.0);
        assert_eq!(grads.tensors[1].double_value(&[1]), before);
    }
}
