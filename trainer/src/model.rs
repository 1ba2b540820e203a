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
//! ## Float ↔ integer mapping (thesis §4.4.1, `nnue`)
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
//! [`SparseBatch`]: crate::loader::batch::SparseBatch

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
/// Largest float first-layer weight of a block stored as `i8`: 127 / 127 (nnue-pytorch clamps
/// its threat weights the same way, to `±127 / ft_quantized_one`).
pub const MAX_NARROW_L1_WEIGHT: f64 = 127.0 / ACTIVATION_SCALE;
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
    /// Runs of W1 rows (first row, number of rows) exported as `i8`: [`clip`](Self::clip)
    /// keeps them within ±[`MAX_NARROW_L1_WEIGHT`].
    pub narrow_rows: Vec<(i64, i64)>,
}

/// The gradients of one training step, in the order of [`PARAM_NAMES`].
///
/// On the CPU the first layer's gradient is sparse: `w1_rows` lists the rows of W1 that the
/// batch's indices touch (ascending) and `tensors[0]` holds their gradients, one row each
/// (`[rows, L1]`); every other row's gradient is zero. A batch of a 22,528-input set touches a
/// fraction of W1, and the optimizer need not read a dense `[N, L1]` zero for the rest.
/// Elsewhere (autograd) `w1_rows` is `None` and `tensors[0]` is dense.
#[derive(Debug)]
pub struct Gradients {
    /// One tensor per parameter (W1's possibly row-compressed).
    pub tensors: [Tensor; 6],
    /// The W1 rows of `tensors[0]`'s rows, when compressed.
    pub w1_rows: Option<Vec<u32>>,
}

impl Gradients {
    /// W1's gradient as a dense `[n, l1]` tensor.
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

/// The result of [`Model::forward_train`]: the outputs, and what the gradient of the first
/// layer needs.
#[derive(Debug)]
pub struct Forward {
    /// `[B]` scores.
    pub out: Tensor,
    /// On the CPU, the first layer's clipped activations `[2·B, L1]` as a leaf tensor: its
    /// gradient is turned into the gradients of W1 and b1 by hand ([`Model::gradients`]);
    /// `None` where autograd does it.
    activations: Option<Tensor>,
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
        rng.set_stream(0x006d_6f64_656c);
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
            narrow_rows: Vec::new(),
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
    /// model's device): a `[B]` tensor, differentiable in every parameter (libtorch's
    /// `embedding_bag` for the first layer).
    pub fn forward(&self, input: &SparseInput) -> Tensor {
        self.head(&self.activations(input), input.len)
    }

    /// The clipped first-layer activations `[B, 2·L1]` (side to move's half first) of the
    /// positions of `input`, differentiable.
    pub fn activations(&self, input: &SparseInput) -> Tensor {
        let b = input.len as i64;
        let l1 = self.shape.l1 as i64;
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
        (bags.view([b, 2, l1]) + &self.b1)
            .clamp(0.0, 1.0)
            .view([b, 2 * l1])
    }

    /// [`forward`](Self::forward) for a training step. On the CPU the first layer (the sums of
    /// W1 rows, the bias, the clipped ReLU) runs outside autograd in [`first_layer`], and
    /// [`gradients`](Self::gradients) computes its gradients by hand after `backward`: libtorch's
    /// `embedding_bag` backward sorts all indices and its clamp backward takes four passes over
    /// the activations, together several times the cost of the rest of the step.
    pub fn forward_train(&self, input: &SparseInput) -> Forward {
        if self.device() != Device::Cpu {
            return Forward {
                out: self.forward(input),
                activations: None,
            };
        }
        let x = tch::no_grad(|| first_layer(&self.w1, &self.b1, input, self.shape.l1))
            .set_requires_grad(true);
        Forward {
            out: self.head(&x, input.len),
            activations: Some(x),
        }
    }

    /// The gradients of all parameters after `backward` of a loss computed from
    /// [`forward_train`](Self::forward_train)'s outputs, in the order of [`PARAM_NAMES`] (zeros
    /// for a parameter the loss does not reach). On the CPU, W1's gradient holds only the rows
    /// of the batch's indices (see [`Gradients`]).
    pub fn gradients(&self, forward: &Forward, input: &SparseInput) -> Gradients {
        let grad = |p: &Tensor| {
            let g = p.grad();
            if g.defined() {
                g.detach().copy()
            } else {
                p.zeros_like()
            }
        };
        let (w1, w1_rows, b1) = match &forward.activations {
            Some(x) => {
                let g = x.grad();
                if g.defined() {
                    let (rows, w1, b1) =
                        first_layer_gradients(&g, x, input, self.shape.n, self.shape.l1);
                    (w1, Some(rows), b1)
                } else {
                    (self.w1.zeros_like(), None, self.b1.zeros_like())
                }
            }
            None => (grad(&self.w1), None, grad(&self.b1)),
        };
        Gradients {
            tensors: [
                w1,
                b1,
                grad(&self.w2),
                grad(&self.b2),
                grad(&self.w3),
                grad(&self.b3),
            ],
            w1_rows,
        }
    }

    /// Resets the autograd gradients of the parameters.
    pub fn zero_grad(&mut self) {
        for p in self.params_mut() {
            p.zero_grad();
        }
    }

    /// The layers after the first: `x` holds the clipped first-layer activations of the B
    /// positions, side to move's first (`[2·B, L1]` or `[B, 2, L1]`).
    fn head(&self, x: &Tensor, len: usize) -> Tensor {
        let h = self.hidden(x, len);
        h.linear(&self.w3, Some(&self.b3)).view([len as i64]) * OUTPUT_SCALE
    }

    /// The clipped hidden activations `[B, L2]` of first-layer activations `x` (as
    /// [`activations`](Self::activations) gives them) of `len` positions.
    pub fn hidden(&self, x: &Tensor, len: usize) -> Tensor {
        let x = x.view([len as i64, 2 * self.shape.l1 as i64]);
        x.linear(&self.w2, Some(&self.b2)).clamp(0.0, 1.0)
    }

    /// Clips every parameter to the range its quantized form can hold (after each optimizer
    /// step): hidden and output weights to ±127/64, the first layer to the `i16` range (its
    /// [`narrow_rows`](Self::narrow_rows) to ±127 as `i8`).
    pub fn clip(&mut self) {
        tch::no_grad(|| {
            let _ = self.w1.clamp_(-MAX_L1_WEIGHT, MAX_L1_WEIGHT);
            for &(start, len) in &self.narrow_rows {
                let _ = self
                    .w1
                    .narrow(0, start, len)
                    .clamp_(-MAX_NARROW_L1_WEIGHT, MAX_NARROW_L1_WEIGHT);
            }
            let _ = self.b1.clamp_(-MAX_L1_WEIGHT, MAX_L1_WEIGHT);
            let _ = self.w2.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT);
            let _ = self.b2.clamp_(-MAX_HIDDEN_BIAS, MAX_HIDDEN_BIAS);
            let _ = self.w3.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT);
            let _ = self.b3.clamp_(-MAX_OUTPUT_BIAS, MAX_OUTPUT_BIAS);
        });
    }

    /// Sets the first-layer rows from `from` on to zero (the virtual features of a factorized
    /// training start at zero, so the model starts as the plain one).
    pub fn zero_first_layer_rows(&mut self, from: usize) {
        let rows = self.shape.n.saturating_sub(from) as i64;
        if rows > 0 {
            tch::no_grad(|| {
                let _ = self.w1.narrow(0, from as i64, rows).zero_();
            });
        }
    }

    /// The parameters as CPU `f32` vectors, in the order of [`PARAM_NAMES`].
    pub fn to_vecs(&self) -> [Vec<f32>; 6] {
        self.params().map(tensor_to_vec)
    }
}

/// A contiguous CPU `f32` tensor's values.
///
/// # Safety
/// The slice borrows the tensor's storage: nothing may write to it while the slice lives.
unsafe fn f32_slice(t: &Tensor) -> &[f32] {
    assert!(t.device() == Device::Cpu && t.kind() == Kind::Float && t.is_contiguous());
    let n = t.numel();
    if n == 0 {
        return &[];
    }
    // SAFETY: a contiguous CPU f32 tensor holds `numel` f32 values at `data_ptr`.
    unsafe { std::slice::from_raw_parts(t.data_ptr() as *const f32, n) }
}

/// A contiguous CPU `i64` tensor's values (same safety rule as [`f32_slice`]).
unsafe fn i64_slice(t: &Tensor) -> &[i64] {
    assert!(t.device() == Device::Cpu && t.kind() == Kind::Int64 && t.is_contiguous());
    let n = t.numel();
    if n == 0 {
        return &[];
    }
    // SAFETY: as above, for i64.
    unsafe { std::slice::from_raw_parts(t.data_ptr() as *const i64, n) }
}

/// A fresh contiguous CPU `f32` tensor of `shape` (zeroed if `zeroed`, else uninitialized for
/// `fill` to overwrite entirely), filled by `fill` through a mutable view of its values.
fn new_f32(shape: &[i64], zeroed: bool, fill: impl FnOnce(&mut [f32])) -> Tensor {
    let options = (Kind::Float, Device::Cpu);
    let t = if zeroed {
        Tensor::zeros(shape, options)
    } else {
        Tensor::empty(shape, options)
    };
    let n = t.numel();
    if n > 0 {
        // SAFETY: a fresh contiguous CPU f32 tensor of n values that nothing else references;
        // the view lives only during `fill`.
        let values = unsafe { std::slice::from_raw_parts_mut(t.data_ptr() as *mut f32, n) };
        fill(values);
    }
    t
}

fn cpu_threads() -> usize {
    tch::get_num_threads().max(1) as usize
}

/// The clipped first-layer activations of every bag (CPU): `clamp(b1 + Σ W1[i], 0, 1)`,
/// `[2·B, L1]`. Bags are split among the libtorch threads; each bag's sum runs in index order,
/// so the result does not depend on the number of threads.
pub fn first_layer(w1: &Tensor, b1: &Tensor, input: &SparseInput, l1: usize) -> Tensor {
    let (w1c, b1c) = (w1.detach().contiguous(), b1.detach().contiguous());
    let (idx_t, off_t) = (input.indices.contiguous(), input.offsets.contiguous());
    // SAFETY: read-only views of tensors alive until the end of the function; nothing writes to
    // them meanwhile (no optimizer step runs during a forward pass).
    let (w, b, idx, off) = unsafe {
        (
            f32_slice(&w1c),
            f32_slice(&b1c),
            i64_slice(&idx_t),
            i64_slice(&off_t),
        )
    };
    let bags = off.len();
    let per = bags.div_ceil(cpu_threads()).max(1);
    // Every row is written (bias, sums, clip): no zeroing needed.
    new_f32(&[bags as i64, l1 as i64], false, |dst| {
        std::thread::scope(|scope| {
            for (c, chunk) in dst.chunks_mut(per * l1).enumerate() {
                scope.spawn(move || kernels::forward(chunk, c * per, w, b, idx, off, l1));
            }
        });
    })
}

/// Bags per block of the b1 gradient's partial sums (a fixed partition, so the sum's order does
/// not depend on the number of threads).
const B1_BLOCK: usize = 256;

/// The gradients of W1 and b1 from the gradient `grad` of the clipped activations `x` of
/// [`first_layer`] (CPU): the clipped ReLU passes the gradient where `0 < x < 1`, then bag j's
/// masked gradient is added to W1's row of each of its indices and to b1. W1's gradient comes
/// row-compressed: the rows the indices touch (ascending, of the `n`) and their gradients
/// (`[rows, l1]`), every other row being zero (see [`Gradients`]).
///
/// Three parallel passes: the masked gradients and b1's partial sums over fixed blocks of bags;
/// the touched rows split into one range per libtorch thread, each thread scanning all bags and
/// adding into its own rows (in bag order); the partial sums of b1 added in block order. The
/// result does not depend on the number of threads.
pub fn first_layer_gradients(
    grad: &Tensor,
    x: &Tensor,
    input: &SparseInput,
    n: usize,
    l1: usize,
) -> (Vec<u32>, Tensor, Tensor) {
    let (grad_t, x_t) = (
        grad.detach().to_kind(Kind::Float).contiguous(),
        x.detach().contiguous(),
    );
    let (idx_t, off_t) = (input.indices.contiguous(), input.offsets.contiguous());
    // SAFETY: read-only views of tensors alive until the end of the function.
    let (g, xs, idx, off) = unsafe {
        (
            f32_slice(&grad_t),
            f32_slice(&x_t),
            i64_slice(&idx_t),
            i64_slice(&off_t),
        )
    };
    let bags = off.len();
    let threads = cpu_threads();
    // 1. Masked gradients (every value written) and b1's partial sums per block of bags.
    let blocks = bags.div_ceil(B1_BLOCK);
    let mut partial = vec![0f32; blocks * l1];
    let blocks_per = blocks.div_ceil(threads).max(1);
    let masked_t = new_f32(&[bags as i64, l1 as i64], false, |masked| {
        std::thread::scope(|scope| {
            for (t, (m, p)) in masked
                .chunks_mut(blocks_per * B1_BLOCK * l1)
                .zip(partial.chunks_mut(blocks_per * l1))
                .enumerate()
            {
                let first = t * blocks_per * B1_BLOCK;
                let len = m.len();
                let (g, xs) = (
                    &g[first * l1..first * l1 + len],
                    &xs[first * l1..first * l1 + len],
                );
                scope.spawn(move || {
                    kernels::mask(m, g, xs);
                    for (block, sum) in m.chunks(B1_BLOCK * l1).zip(p.chunks_mut(l1)) {
                        kernels::sum_rows(sum, block, l1);
                    }
                });
            }
        });
    });
    // SAFETY: a contiguous CPU f32 tensor alive until the end of the function, read only.
    let masked = unsafe { f32_slice(&masked_t) };
    // 2. The touched rows of W1 (ascending) and each one's place in the compact gradient.
    let mut slot = vec![u32::MAX; n];
    for &i in idx {
        slot[i as usize] = 0;
    }
    let mut rows = Vec::new();
    for (i, s) in slot.iter_mut().enumerate() {
        if *s == 0 {
            *s = rows.len() as u32;
            rows.push(i as u32);
        }
    }
    let slot = &slot;
    // 3. Their gradients, one range of rows per thread.
    let touched = rows.len();
    let rows_per = touched.div_ceil(threads.min(touched.max(1))).max(1);
    let w1_grad = new_f32(&[touched as i64, l1 as i64], true, |dst| {
        std::thread::scope(|scope| {
            for (t, chunk) in dst.chunks_mut(rows_per * l1).enumerate() {
                let lo = t * rows_per;
                scope.spawn(move || kernels::scatter(chunk, lo, masked, idx, off, l1, slot));
            }
        });
    });
    // 4. b1.
    let mut b1 = vec![0f32; l1];
    kernels::sum_rows(&mut b1, &partial, l1);
    (rows, w1_grad, Tensor::from_slice(&b1))
}

/// The loops of the CPU first layer, compiled for AVX-512, AVX2 and the baseline and chosen at
/// run time (the arithmetic and its order are the same in all three, so are the results).
mod kernels {
    #[inline(always)]
    fn add(row: &mut [f32], src: &[f32]) {
        for (a, v) in row.iter_mut().zip(src) {
            *a += *v;
        }
    }

    #[inline(always)]
    fn forward_impl(
        dst: &mut [f32],
        first: usize,
        w: &[f32],
        b: &[f32],
        idx: &[i64],
        off: &[i64],
        l1: usize,
    ) {
        for (k, row) in dst.chunks_mut(l1).enumerate() {
            let j = first + k;
            let end = off.get(j + 1).map_or(idx.len(), |&e| e as usize);
            row.copy_from_slice(b);
            for &i in &idx[off[j] as usize..end] {
                let i = i as usize;
                add(row, &w[i * l1..(i + 1) * l1]);
            }
            for a in row.iter_mut() {
                *a = a.clamp(0.0, 1.0);
            }
        }
    }

    #[inline(always)]
    fn mask_impl(dst: &mut [f32], g: &[f32], x: &[f32]) {
        for ((d, &gv), &xv) in dst.iter_mut().zip(g).zip(x) {
            *d = if xv > 0.0 && xv < 1.0 { gv } else { 0.0 };
        }
    }

    #[inline(always)]
    fn sum_rows_impl(sum: &mut [f32], rows: &[f32], l1: usize) {
        for r in rows.chunks(l1) {
            add(sum, r);
        }
    }

    #[inline(always)]
    fn scatter_impl(
        rows: &mut [f32],
        lo: usize,
        g: &[f32],
        idx: &[i64],
        off: &[i64],
        l1: usize,
        slot: &[u32],
    ) {
        let hi = lo + rows.len() / l1;
        for (j, &start) in off.iter().enumerate() {
            let end = off.get(j + 1).map_or(idx.len(), |&e| e as usize);
            let gj = &g[j * l1..(j + 1) * l1];
            for &i in &idx[start as usize..end] {
                let s = slot[i as usize] as usize;
                if s >= lo && s < hi {
                    add(&mut rows[(s - lo) * l1..(s - lo + 1) * l1], gj);
                }
            }
        }
    }

    macro_rules! dispatch {
        ($name:ident, $imp:ident, ($($arg:ident: $ty:ty),*)) => {
            /// Runs the loop with the widest vector instructions this CPU has.
            pub fn $name($($arg: $ty),*) {
                #[cfg(target_arch = "x86_64")]
                {
                    #[target_feature(enable = "avx512f")]
                    fn wide($($arg: $ty),*) {
                        $imp($($arg),*)
                    }
                    #[target_feature(enable = "avx2")]
                    fn medium($($arg: $ty),*) {
                        $imp($($arg),*)
                    }
                    if std::arch::is_x86_feature_detected!("avx512f") {
                        // SAFETY: the CPU has AVX-512F.
                        return unsafe { wide($($arg),*) };
                    }
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2.
                        return unsafe { medium($($arg),*) };
                    }
                }
                $imp($($arg),*)
            }
        };
    }

    dispatch!(forward, forward_impl, (dst: &mut [f32], first: usize, w: &[f32], b: &[f32], idx: &[i64], off: &[i64], l1: usize));
    dispatch!(mask, mask_impl, (dst: &mut [f32], g: &[f32], x: &[f32]));
    dispatch!(sum_rows, sum_rows_impl, (sum: &mut [f32], rows: &[f32], l1: usize));
    dispatch!(scatter, scatter_impl, (rows: &mut [f32], lo: usize, g: &[f32], idx: &[i64], off: &[i64], l1: usize, slot: &[u32]));
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
        Shape {
            n: 10,
            l1: 4,
            l2: 3,
        }
    }

    #[test]
    fn forward_is_the_embedding_sum_of_each_perspective() {
        let m = Model::new(tiny(), 1, Device::Cpu);
        // Two positions: (stm {1, 3}, opp {2}) and (stm {}, opp {0, 9}), bags interleaved.
        let input = SparseInput {
            len: 2,
            indices: Tensor::from_slice(&[1i64, 3, 2, 0, 9]),
            offsets: Tensor::from_slice(&[0i64, 2, 3, 3]),
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
            let _ = m.w1.fill_(-3.0);
        });
        // Rows 2..5 are stored as i8: they stay within ±1 (127 after ×127); the others within
        // the i16 range.
        m.narrow_rows = vec![(2, 3)];
        m.clip();
        let v = m.to_vecs();
        assert!(v[2].iter().all(|&w| w == MAX_HIDDEN_WEIGHT as f32));
        assert!(v[4].iter().all(|&w| w == -MAX_HIDDEN_WEIGHT as f32));
        let l1 = tiny().l1;
        for (k, &w) in v[0].iter().enumerate() {
            let expected = if (2..5).contains(&(k / l1)) {
                -1.0
            } else {
                -3.0
            };
            assert_eq!(w, expected, "W1 value {k}");
        }
    }

    #[test]
    fn hand_scattered_first_layer_gradient_equals_autograd() {
        let shape = Shape {
            n: 40,
            l1: 32,
            l2: 8,
        };
        let m = Model::new(shape, 3, Device::Cpu);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut indices = Vec::new();
        let mut offsets = Vec::new();
        for _ in 0..2 * 50 {
            offsets.push(indices.len() as i64);
            for _ in 0..rng.random_range(0..6) {
                indices.push(rng.random_range(0..40i64));
            }
        }
        let input = SparseInput {
            len: 50,
            indices: Tensor::from_slice(&indices),
            offsets: Tensor::from_slice(&offsets),
        };
        let target =
            Tensor::from_slice(&(0..50).map(|i| i as f32 * 7.0 - 150.0).collect::<Vec<_>>());
        let loss = |out: &Tensor| (out - &target).square().mean(Kind::Float);
        let fwd = m.forward_train(&input);
        loss(&fwd.out).backward();
        assert!(fwd.activations.is_some());
        let manual = m.gradients(&fwd, &input);
        let mut m = m;
        m.zero_grad();
        let out = m.forward(&input);
        loss(&out).backward();
        let auto = m.gradients(
            &Forward {
                out,
                activations: None,
            },
            &input,
        );
        assert!(manual.w1_rows.is_some() && auto.w1_rows.is_none());
        let dense = |g: &Gradients| {
            let mut t = g.tensors.each_ref().map(|t| t.shallow_clone());
            t[0] = g.dense_w1(40);
            t
        };
        let (manual, auto) = (dense(&manual), dense(&auto));
        for (a, b) in manual.iter().zip(&auto) {
            let (a, b) = (tensor_to_vec(a), tensor_to_vec(b));
            let scale = b.iter().fold(1e-6f32, |s, v| s.max(v.abs()));
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() <= 1e-4 * scale, "{x} vs {y}");
            }
        }
        assert!(tensor_to_vec(&manual[0]).iter().any(|&g| g != 0.0));
    }
}
