//! The network of the thesis (§4.3) as a float model in tch, with the parametrization that the
//! quantized network of `host` (`thesis-layouts.md`) reproduces.
//!
//! ```text
//! stm indices ──▶ W1·x + b1 ──┐                                   (N → L1, shared: an embedding
//!                             ├─ concat ─▶ clip[0,1] ─▶ W2 ─▶ clip[0,1] ─▶ W3 ─▶ × 508 = score
//! opp indices ──▶ W1·x + b1 ──┘  (stm first)     (2·L1 → L2)      (L2 → 1)
//! ```
//!
//! The first layer is never a dense N-wide product: each perspective's accumulator is the sum of
//! the rows of `W1` at its active indices (`embedding_bag` in sum mode over the CSR indices of a
//! [`SparseBatch`]), plus `b1`. Both perspectives go through one `embedding_bag` call.
//!
//! ## Float ↔ integer mapping (thesis §4.4.1, `host::nnue`)
//!
//! | float parameter | quantized | range kept by clipping |
//! | --- | --- | --- |
//! | `W1`, `b1` (accumulator, activation 1.0 = 127) | `i16`: round(127·w) | ±32767/127 |
//! | `W2` | `i8`: round(64·w) | ±127/64 |
//! | `b2` | `i32`: round(64·127·b) (+32, see below) | i32 range |
//! | `W3` | `i8`: round(64·w) | ±127/64 |
//! | `b3` | `i32`: round(16·508·b) (+8) | i32 range |
//!
//! The float output layer is kept in units of [`OUTPUT_SCALE`] = 127·64/16 = 508 score units:
//! the model's score is `508 · (W3·h + b3)`. In score units the output weights are `508·W3` and
//! their quantization `508·W3 · 16/127 = 64·W3` is exactly the thesis's "output weights ×16/127,
//! output bias ×16"; the factor only gives the optimizer weights of order one (like Stockfish's
//! `nnue2score`), so the output weights share the hidden weights' range and step (1/64).
//!
//! The quantized pass floors twice (`>> 6` after the hidden layer, `>> 4` after the output); the
//! export adds half a step to `b2` (32) and `b3` (8) so that both become rounding to nearest and
//! the quantized output is unbiased.
//!
//! [`SparseBatch`]: crate::batch::SparseBatch

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::{Device, Kind, Tensor};

/// Score units per unit of the float output layer: `s_a · s_W / 16` = 127 · 64 / 16.
pub const OUTPUT_SCALE: f64 = 508.0;
/// Activation scale s_a: a float activation of 1.0 is 127 in the quantized network.
pub const ACTIVATION_SCALE: f64 = 127.0;
/// Hidden (and output) weight scale s_W.
pub const WEIGHT_SCALE: f64 = 64.0;
/// Largest float hidden or output weight: 127 / 64 (an `i8` after ×64).
pub const MAX_HIDDEN_WEIGHT: f64 = 127.0 / 64.0;
/// Largest float first-layer weight or bias: 32767 / 127 (an `i16` after ×127).
pub const MAX_L1_WEIGHT: f64 = 32767.0 / 127.0;
/// Largest float hidden bias: an `i32` after ×64·127.
pub const MAX_HIDDEN_BIAS: f64 = 2_147_483_647.0 / (64.0 * 127.0) * 0.999;
/// Largest float output bias: an `i32` after ×16·508.
pub const MAX_OUTPUT_BIAS: f64 = 2_147_483_647.0 / (16.0 * OUTPUT_SCALE) * 0.999;

/// Layer sizes: N → L1 (per perspective), 2·L1 → L2, L2 → 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// Number of input features (the feature set's size).
    pub n: usize,
    /// First-layer width per perspective.
    pub l1: usize,
    /// Hidden width.
    pub l2: usize,
}

/// The names of the parameters, in the order of [`Model::params`].
pub const PARAM_NAMES: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

/// The float network: six parameter tensors on one device.
#[derive(Debug)]
pub struct Model {
    /// Layer sizes.
    pub shape: Shape,
    /// First-layer weights, `[N, L1]` (row i is added while feature i is active).
    pub w1: Tensor,
    /// First-layer bias, `[L1]`.
    pub b1: Tensor,
    /// Hidden weights, `[L2, 2·L1]` (side to move's half first).
    pub w2: Tensor,
    /// Hidden bias, `[L2]`.
    pub b2: Tensor,
    /// Output weights, `[1, L2]`, in units of [`OUTPUT_SCALE`].
    pub w3: Tensor,
    /// Output bias, `[1]`, in units of [`OUTPUT_SCALE`].
    pub b3: Tensor,
}

/// The model's input: the CSR indices of both perspectives of B positions, as `embedding_bag`
/// takes them (one call for both: the side to move's bags first, then the other side's).
#[derive(Debug)]
pub struct SparseInput {
    /// Number of positions B.
    pub len: usize,
    /// All indices (`i64`), the side to move's of every position, then the other side's.
    pub indices: Tensor,
    /// Start of each of the 2·B bags in `indices` (`i64`).
    pub offsets: Tensor,
}

impl SparseInput {
    /// The input of a whole [`SparseBatch`](crate::batch::SparseBatch), on the CPU.
    pub fn from_batch(batch: &crate::batch::SparseBatch) -> SparseInput {
        let (a, b) = (&batch.indices[0], &batch.indices[1]);
        let mut indices = Vec::with_capacity(a.len() + b.len());
        indices.extend(a.iter().map(|&i| i64::from(i)));
        indices.extend(b.iter().map(|&i| i64::from(i)));
        let base = a.len() as i64;
        let mut offsets = Vec::with_capacity(2 * batch.len);
        offsets.extend(batch.offsets[0][..batch.len].iter().map(|&o| i64::from(o)));
        offsets.extend(
            batch.offsets[1][..batch.len]
                .iter()
                .map(|&o| base + i64::from(o)),
        );
        SparseInput {
            len: batch.len,
            indices: Tensor::from_slice(&indices),
            offsets: Tensor::from_slice(&offsets),
        }
    }

    /// The same input on `device`.
    pub fn to_device(&self, device: Device) -> SparseInput {
        SparseInput {
            len: self.len,
            indices: self.indices.to_device(device),
            offsets: self.offsets.to_device(device),
        }
    }
}

/// Draws a tensor of `shape` uniformly from `−bound..bound` with `rng` (on the CPU, so the
/// initial weights are the same on every device and every libtorch build).
fn uniform(rng: &mut ChaCha8Rng, shape: &[i64], bound: f64) -> Tensor {
    let n: i64 = shape.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|_| (rng.random::<f64>() * 2.0 - 1.0) as f32 * bound as f32)
        .collect();
    Tensor::from_slice(&values).view(shape)
}

impl Model {
    /// A freshly initialized model (PyTorch's `nn.Linear` rule: uniform in ±1/√fan-in, with the
    /// first layer's fan-in taken as 32 active features rather than N), seeded.
    pub fn new(shape: Shape, seed: u64, device: Device) -> Model {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(0x6d6f_6465_6c);
        let (n, l1, l2) = (shape.n as i64, shape.l1 as i64, shape.l2 as i64);
        let b1_bound = 1.0 / 32f64.sqrt();
        let b2_bound = 1.0 / ((2 * l1) as f64).sqrt();
        let b3_bound = 1.0 / (l2 as f64).sqrt();
        let tensors = [
            uniform(&mut rng, &[n, l1], b1_bound / 2.0),
            // Positive first-layer bias: most accumulators start inside the clipped ReLU's slope.
            uniform(&mut rng, &[l1], b1_bound / 2.0) + 0.5,
            uniform(&mut rng, &[l2, 2 * l1], b2_bound),
            uniform(&mut rng, &[l2], b2_bound),
            uniform(&mut rng, &[1, l2], b3_bound),
            Tensor::zeros([1], (Kind::Float, Device::Cpu)),
        ];
        Self::from_tensors(shape, tensors, device)
    }

    /// A model from its six tensors in the order of [`PARAM_NAMES`] (any device), moved to
    /// `device` as leaf tensors that require gradients.
    pub fn from_tensors(shape: Shape, tensors: [Tensor; 6], device: Device) -> Model {
        let [w1, b1, w2, b2, w3, b3] = tensors.map(|t| {
            t.to_kind(Kind::Float)
                .to_device(device)
                .detach()
                .set_requires_grad(true)
        });
        Model {
            shape,
            w1,
            b1,
            w2,
            b2,
            w3,
            b3,
        }
    }

    /// The expected tensor shapes, in the order of [`PARAM_NAMES`].
    pub fn param_shapes(shape: Shape) -> [Vec<i64>; 6] {
        let (n, l1, l2) = (shape.n as i64, shape.l1 as i64, shape.l2 as i64);
        [
            vec![n, l1],
            vec![l1],
            vec![l2, 2 * l1],
            vec![l2],
            vec![1, l2],
            vec![1],
        ]
    }

    /// The parameters, in the order of [`PARAM_NAMES`].
    pub fn params(&self) -> [&Tensor; 6] {
        [&self.w1, &self.b1, &self.w2, &self.b2, &self.w3, &self.b3]
    }

    /// The parameters, mutable, in the order of [`PARAM_NAMES`].
    pub fn params_mut(&mut self) -> [&mut Tensor; 6] {
        [
            &mut self.w1,
            &mut self.b1,
            &mut self.w2,
            &mut self.b2,
            &mut self.w3,
            &mut self.b3,
        ]
    }

    /// The device the parameters live on.
    pub fn device(&self) -> Device {
        self.w1.device()
    }

    /// The scores (side to move's view, score units) of the positions of `input` (on the
    /// model's device): a `[B]` tensor.
    pub fn forward(&self, input: &SparseInput) -> Tensor {
        let b = input.len as i64;
        let (bags, _, _, _) = Tensor::embedding_bag(
            &self.w1,
            &input.indices,
            &input.offsets,
            false,
            0,
            false,
            None::<Tensor>,
            false,
        );
        let acc = bags + &self.b1;
        let x = Tensor::cat(&[acc.narrow(0, 0, b), acc.narrow(0, b, b)], 1).clamp(0.0, 1.0);
        let h = x.linear(&self.w2, Some(&self.b2)).clamp(0.0, 1.0);
        h.linear(&self.w3, Some(&self.b3)).view([b]) * OUTPUT_SCALE
    }

    /// Clips every parameter to the range its quantized form can hold (after each optimizer
    /// step): hidden and output weights to ±127/64, the first layer to the `i16` range.
    pub fn clip(&mut self) {
        tch::no_grad(|| {
            let _ = self.w1.clamp_(-MAX_L1_WEIGHT, MAX_L1_WEIGHT);
            let _ = self.b1.clamp_(-MAX_L1_WEIGHT, MAX_L1_WEIGHT);
            let _ = self.w2.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT);
            let _ = self.b2.clamp_(-MAX_HIDDEN_BIAS, MAX_HIDDEN_BIAS);
            let _ = self.w3.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT);
            let _ = self.b3.clamp_(-MAX_OUTPUT_BIAS, MAX_OUTPUT_BIAS);
        });
    }

    /// The parameters as CPU `f32` vectors, in the order of [`PARAM_NAMES`].
    pub fn to_vecs(&self) -> [Vec<f32>; 6] {
        self.params().map(tensor_to_vec)
    }
}

/// A tensor's values as a flat CPU `f32` vector.
pub fn tensor_to_vec(t: &Tensor) -> Vec<f32> {
    let flat = t
        .detach()
        .to_device(Device::Cpu)
        .to_kind(Kind::Float)
        .contiguous()
        .view([-1]);
    let n = flat.numel();
    let mut out = vec![0f32; n];
    flat.copy_data(&mut out, n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Shape {
        Shape { n: 10, l1: 4, l2: 3 }
    }

    #[test]
    fn forward_is_the_embedding_sum_of_each_perspective() {
        let m = Model::new(tiny(), 1, Device::Cpu);
        // Two positions: (stm {1, 3}, opp {2}) and (stm {}, opp {0, 9}).
        let input = SparseInput {
            len: 2,
            indices: Tensor::from_slice(&[1i64, 3, 2, 0, 9]),
            offsets: Tensor::from_slice(&[0i64, 2, 2, 3]),
        };
        let out = tensor_to_vec(&m.forward(&input));
        let [w1, b1, w2, b2, w3, b3] = m.to_vecs();
        let (l1, l2) = (4, 3);
        let acc = |idx: &[usize]| -> Vec<f32> {
            (0..l1)
                .map(|k| b1[k] + idx.iter().map(|&i| w1[i * l1 + k]).sum::<f32>())
                .collect()
        };
        let reference = |stm: &[usize], opp: &[usize]| -> f32 {
            let x: Vec<f32> = acc(stm)
                .into_iter()
                .chain(acc(opp))
                .map(|v| v.clamp(0.0, 1.0))
                .collect();
            let mut o = b3[0];
            for j in 0..l2 {
                let s: f32 = b2[j] + (0..2 * l1).map(|k| w2[j * 2 * l1 + k] * x[k]).sum::<f32>();
                o += w3[j] * s.clamp(0.0, 1.0);
            }
            o * OUTPUT_SCALE as f32
        };
        assert!((out[0] - reference(&[1, 3], &[2])).abs() < 1e-3);
        assert!((out[1] - reference(&[], &[0, 9])).abs() < 1e-3);
    }

    #[test]
    fn same_seed_same_weights_and_clipping_bounds_them() {
        let a = Model::new(tiny(), 7, Device::Cpu).to_vecs();
        let b = Model::new(tiny(), 7, Device::Cpu).to_vecs();
        let c = Model::new(tiny(), 8, Device::Cpu).to_vecs();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut m = Model::new(tiny(), 7, Device::Cpu);
        tch::no_grad(|| {
            let _ = m.w2.fill_(5.0);
            let _ = m.w3.fill_(-5.0);
        });
        m.clip();
        let v = m.to_vecs();
        assert!(v[2].iter().all(|&w| w == MAX_HIDDEN_WEIGHT as f32));
        assert!(v[4].iter().all(|&w| w == -MAX_HIDDEN_WEIGHT as f32));
    }
}
