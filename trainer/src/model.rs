//! The float model of a network of any [`Arch`] in tch, with the parametrization that the
//! quantized network of `nnue` reproduces.
//!
//! The thesis's shape (§4.3, `Arch::thesis`):
//!
//! ```text
//! stm indices ──▶ W1·x + b1 ──┐                                   (N → L1, shared: an embedding
//!                             ├─ concat ─▶ clip[0,1] ─▶ W2 ─▶ clip[0,1] ─▶ W3 ─▶ × 508 = score
//! opp indices ──▶ W1·x + b1 ──┘  (stm first)     (2·L1 → L2)      (L2 → 1)
//! ```
//!
//! Stockfish's shape (`Arch::sfnnv5`, nnue-pytorch `model.py` at 5225117 followed):
//!
//! ```text
//! W1 has L1 + P columns: L1 accumulator columns and P PSQT buckets' columns
//! a = clip[0,1](W1[:, :L1]·x + b1) per perspective; pairwise: a_j · a_{j+L1/2} · 127/128
//! stack k = (pieces − 1)·stacks/32: L1 → 15 (+1 skip) → [sqr·127/128 ‖ plain] clip[0,1]
//!           → 32 → clip[0,1] → 1
//! score = 600 · (out + skip + (psqt_stm[b] − psqt_opp[b]) / 2)
//! ```
//!
//! The first layer is never a dense N-wide product: each perspective's accumulator is the sum of
//! the rows of `W1` at its active indices (`embedding_bag` in sum mode over the CSR indices of a
//! [`SparseBatch`]), plus `b1`. Both perspectives go through one `embedding_bag` call. The PSQT
//! weights are W1's last P columns (as in nnue-pytorch): a feature's row carries both, so the
//! sparse gradient, Adam's sparse rows and the factorizers' folding treat them together.
//!
//! ## Float ↔ integer mapping (thesis §4.4.1, `nnue`, nnue-pytorch `serialize.py`)
//!
//! | float parameter | quantized | range kept by clipping |
//! | --- | --- | --- |
//! | `W1`, `b1` (accumulator, activation 1.0 = 127) | `i16`: round(127·w) | ±32767/127 |
//! | PSQT columns of `W1` | `i32`: round(9600·w) | ±32767/127 |
//! | hidden weights | `i8`: round(64·w) | ±127/64 |
//! | hidden biases | `i32`: round(64·127·b) (+32, see below) | i32 range |
//! | output weights, thesis rule | `i8`: round(64·w) | ±127/64 |
//! | output bias, thesis rule | `i32`: round(16·508·b) (+8) | i32 range |
//! | output weights, Stockfish rule | `i8`: round(9600/127·w) | ±127²/9600 |
//! | output bias, Stockfish rule | `i32`: round(9600·b) | i32 range |
//!
//! The thesis's float output layer is kept in units of [`OUTPUT_SCALE`] = 127·64/16 = 508 score
//! units: the model's score is `508 · (W3·h + b3)`. In score units the output weights are `508·W3`
//! and their quantization `508·W3 · 16/127 = 64·W3` is exactly the thesis's "output weights
//! ×16/127, output bias ×16"; the factor only gives the optimizer weights of order one (like
//! Stockfish's `nnue2score`, [`STOCKFISH_OUTPUT_SCALE`] = 600, the Stockfish rule's factor).
//!
//! The quantized pass floors (`>> 6` after a hidden layer, `>> 4` after the thesis's output);
//! the export adds half a step to the hidden biases (32) and the thesis's output bias (8) so
//! that each becomes rounding to nearest and the quantized output is unbiased (nnue-pytorch
//! rounds without it; Stockfish's `/ 16` truncates toward zero and gets no offset).
//!
//! [`SparseBatch`]: crate::loader::batch::SparseBatch

use nnue::{Activation, Arch, FtOutput, OutputRule};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::{Device, Kind, Tensor};

/// Score units per unit of the thesis's float output layer: `s_a · s_W / 16` = 127 · 64 / 16.
pub const OUTPUT_SCALE: f64 = 508.0;
/// Score units per unit of the float output under Stockfish's rule: nnue-pytorch's
/// `nnue2score`.
pub const STOCKFISH_OUTPUT_SCALE: f64 = 600.0;
/// Activation scale s_a: a float activation of 1.0 is 127 in the quantized network.
pub const ACTIVATION_SCALE: f64 = 127.0;
/// Hidden (and the thesis's output) weight scale s_W.
pub const WEIGHT_SCALE: f64 = 64.0;
/// Scale of the PSQT weights and of Stockfish's output bias: 600 · 16 (nnue-pytorch's
/// `nnue2score · weight_scale_out`).
pub const PSQT_SCALE: f64 = nnue::shape::OUTPUT_ONE as f64;
/// Scale of the output weights under Stockfish's rule: 9600 / 127.
pub const STOCKFISH_OUTPUT_WEIGHT_SCALE: f64 = PSQT_SCALE / ACTIVATION_SCALE;
/// Largest float hidden or output weight: 127 / 64 (an `i8` after ×64).
pub const MAX_HIDDEN_WEIGHT: f64 = 127.0 / 64.0;
/// Largest float output weight under Stockfish's rule: 127² / 9600 (an `i8` after ×9600/127).
pub const MAX_STOCKFISH_OUTPUT_WEIGHT: f64 = 127.0 / STOCKFISH_OUTPUT_WEIGHT_SCALE;
/// Largest float first-layer weight or bias: 32767 / 127 (an `i16` after ×127).
pub const MAX_L1_WEIGHT: f64 = 32767.0 / 127.0;
/// Largest float first-layer weight of a block stored as `i8`: 127 / 127 (nnue-pytorch clamps
/// its threat weights the same way, to `±127 / ft_quantized_one`).
pub const MAX_NARROW_L1_WEIGHT: f64 = 127.0 / ACTIVATION_SCALE;
/// Largest float hidden bias: an `i32` after ×64·127.
pub const MAX_HIDDEN_BIAS: f64 = 2_147_483_647.0 / (64.0 * 127.0) * 0.999;
/// Largest float output bias: an `i32` after ×16·508.
pub const MAX_OUTPUT_BIAS: f64 = 2_147_483_647.0 / (16.0 * OUTPUT_SCALE) * 0.999;
/// Largest float output bias under Stockfish's rule: an `i32` after ×9600.
pub const MAX_STOCKFISH_OUTPUT_BIAS: f64 = 2_147_483_647.0 / PSQT_SCALE * 0.999;
/// The piece values (pawn, knight, bishop, rook, queen; Stockfish's internal units) the PSQT
/// weights start from: nnue-pytorch's `halfka_psqts` (`halfka_v2_hm.py`).
pub const PSQT_PIECE_VALUES: [f64; 5] = [126.0, 781.0, 825.0, 1276.0, 2538.0];

/// The model's size: N, L1 and the shape after the first layer.
///
/// The thesis's shape is written as `{n, l1, l2}` alone (as before shapes were data, so the
/// stored configurations and the experiment cache's keys of thesis runs are unchanged); any
/// other adds `arch`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// Number of input features (the feature set's size).
    pub n: usize,
    /// First-layer width per perspective.
    pub l1: usize,
    /// The thesis's hidden width (the first hidden layer's width for another shape).
    pub l2: usize,
    /// The shape after the first layer; `None` for the thesis's (`Arch::thesis(l2)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<Arch>,
}

impl Shape {
    /// The thesis's shape N → L1 → L2 → 1.
    pub fn thesis(n: usize, l1: usize, l2: usize) -> Shape {
        Shape {
            n,
            l1,
            l2,
            arch: None,
        }
    }

    /// The shape N → L1 → `arch` (kept as `None` when it is the thesis's).
    pub fn new(n: usize, l1: usize, arch: Arch) -> Shape {
        let l2 = arch.hidden.first().map_or(0, |h| h.width);
        Shape {
            n,
            l1,
            l2,
            arch: (!arch.is_thesis()).then_some(arch),
        }
    }

    /// The shape after the first layer.
    pub fn arch(&self) -> Arch {
        self.arch.clone().unwrap_or_else(|| Arch::thesis(self.l2))
    }

    /// PSQT buckets (0: none).
    pub fn psqt_buckets(&self) -> usize {
        self.arch.as_ref().map_or(0, |a| a.psqt_buckets)
    }

    /// Columns of W1: L1, one per PSQT bucket, and zeros up to a multiple of 16 (a row of
    /// whole 64-byte lines: the first layer's kernels run 1.5× slower on 264-column rows than
    /// on 256-column ones).
    pub fn w1_columns(&self) -> usize {
        match self.psqt_buckets() {
            0 => self.l1,
            p => (self.l1 + p).next_multiple_of(16),
        }
    }

    /// This shape with `n` input features.
    pub fn with_n(&self, n: usize) -> Shape {
        Shape { n, ..self.clone() }
    }
}

impl std::fmt::Display for Shape {
    /// `768 -> 512 -> 32 -> 1` for the thesis's shape, else `N -> L1, ` and the [`Arch`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.arch {
            None => write!(f, "{} -> {} -> {} -> 1", self.n, self.l1, self.l2),
            Some(a) => write!(f, "{} -> {}, {a}", self.n, self.l1),
        }
    }
}

/// The names of the parameters of a network of `shape`, in the order of [`Model::params`]:
/// `w1`, `b1`, then `wK`, `bK` for layer K = 2, 3... (the thesis's `w1 b1 w2 b2 w3 b3`).
pub fn param_names(shape: &Shape) -> Vec<String> {
    let layers = shape.arch().layers(shape.l1).len();
    (1..=layers + 1)
        .flat_map(|k| [format!("w{k}"), format!("b{k}")])
        .collect()
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

/// The float network: its parameter tensors on one device.
#[derive(Debug)]
pub struct Model {
    /// Layer sizes.
    pub shape: Shape,
    /// `arch` of [`Shape`], resolved once.
    arch: Arch,
    /// The parameters in the order of [`param_names`]: W1 `[N, L1 + P]` (row i is added while
    /// feature i is active; its last P columns are the PSQT weights), b1 `[L1]`, then per layer
    /// of [`Arch::layers`] its weights `[stacks · outputs, inputs]` and biases
    /// `[stacks · outputs]` (stack after stack). The output layer is in units of the output
    /// rule's scale ([`Model::output_scale`]).
    params: Vec<Tensor>,
    /// Runs of W1 rows (first row, number of rows) exported as `i8`: [`clip`](Self::clip)
    /// keeps them within ±[`MAX_NARROW_L1_WEIGHT`].
    pub narrow_rows: Vec<(i64, i64)>,
}

/// The gradients of one training step, in the order of [`param_names`].
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

/// The result of [`Model::forward_train`]: the outputs, and what the gradient of the first
/// layer needs.
#[derive(Debug)]
pub struct Forward {
    /// `[B]` scores.
    pub out: Tensor,
    /// On the CPU, the leaf tensors whose gradients are turned into the gradients of W1 and b1
    /// by hand ([`Model::gradients`]); `None` where autograd does it.
    leaves: Option<Leaves>,
}

/// The leaves of a CPU training step's graph, computed outside autograd.
#[derive(Debug)]
enum Leaves {
    /// The thesis's shape: the clipped first-layer activations `[2·B, L1]`.
    Activations(Tensor),
    /// Any other: the first layer's outputs `x` (`[2·B, L1 + P]`, no gradient), what it hands to
    /// the hidden layers as one leaf per layer stack (the rows of the positions of stack k, in
    /// [`StackOrder`]), and the PSQT sums `[B, 2, P]` as a leaf (when P > 0).
    Split {
        x: Tensor,
        order: StackOrder,
        stacks: Vec<Tensor>,
        psqt: Option<Tensor>,
    },
}

/// Which layer stack the rows of a tensor go through.
#[derive(Clone, Copy)]
enum Stacks<'a> {
    /// All through stack k.
    One(usize),
    /// Row r through stack `stack[r]` (`[rows]`, on the rows' device).
    PerRow(&'a Tensor),
}

/// A batch's positions grouped by layer stack: `order[r]` is the position at row r of the
/// grouped rows, `back[i]` the row of position i, `counts[k]` the positions of stack k.
#[derive(Debug)]
struct StackOrder {
    order: Vec<i64>,
    back: Vec<i64>,
    counts: Vec<i64>,
}

/// The layer stack of each position, from its number of pieces (`i64`: a tensor's indices).
fn stack_of_each(arch: &Arch, pieces: &[u8]) -> Vec<i64> {
    pieces
        .iter()
        .map(|&n| arch.stack_of(u32::from(n)) as i64)
        .collect()
}

impl StackOrder {
    fn new(arch: &Arch, pieces: &[u8]) -> StackOrder {
        let stack = stack_of_each(arch, pieces);
        let mut order: Vec<i64> = (0..stack.len() as i64).collect();
        order.sort_by_key(|&i| stack[i as usize]);
        let mut back = vec![0i64; order.len()];
        for (at, &i) in order.iter().enumerate() {
            back[i as usize] = at as i64;
        }
        let mut counts = vec![0i64; arch.stacks];
        for &k in &stack {
            counts[k as usize] += 1;
        }
        StackOrder {
            order,
            back,
            counts,
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
    /// first layer's fan-in taken as 32 active features rather than N), seeded. Every layer
    /// stack starts as the first (nnue-pytorch's `_init_layers`), and so does every PSQT
    /// bucket: at zero until [`init_psqt`](Self::init_psqt) sets piece values.
    pub fn new(shape: Shape, seed: u64, device: Device) -> Model {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(0x006d_6f64_656c);
        let arch = shape.arch();
        let (n, l1) = (shape.n as i64, shape.l1 as i64);
        let b1_bound = 1.0 / 32f64.sqrt();
        let mut tensors = vec![
            uniform(&mut rng, &[n, l1], b1_bound / 2.0),
            // Positive first-layer bias: most accumulators start inside the clipped ReLU's slope.
            uniform(&mut rng, &[l1], b1_bound / 2.0) + 0.5,
        ];
        let extra = (shape.w1_columns() - shape.l1) as i64;
        if extra > 0 {
            let zeros = Tensor::zeros([n, extra], (Kind::Float, Device::Cpu));
            tensors[0] = Tensor::cat(&[&tensors[0], &zeros], 1);
        }
        let layers = arch.layers(shape.l1);
        let stacks = arch.stacks as i64;
        for (i, &(inputs, outputs)) in layers.iter().enumerate() {
            let bound = 1.0 / (inputs as f64).sqrt();
            let (inputs, outputs) = (inputs as i64, outputs as i64);
            let w = uniform(&mut rng, &[outputs, inputs], bound);
            let b = if i + 1 == layers.len() {
                Tensor::zeros([outputs], (Kind::Float, Device::Cpu))
            } else {
                uniform(&mut rng, &[outputs], bound)
            };
            tensors.push(w.repeat([stacks, 1]));
            tensors.push(b.repeat([stacks]));
        }
        Self::from_tensors(shape, tensors, device)
    }

    /// A model from its tensors in the order of [`param_names`] (any device), moved to `device`
    /// as leaf tensors that require gradients.
    pub fn from_tensors(shape: Shape, tensors: Vec<Tensor>, device: Device) -> Model {
        let params = tensors
            .into_iter()
            .map(|t| {
                t.to_kind(Kind::Float)
                    .to_device(device)
                    .detach()
                    .set_requires_grad(true)
            })
            .collect();
        Model {
            arch: shape.arch(),
            shape,
            params,
            narrow_rows: Vec::new(),
        }
    }

    /// The expected tensor shapes, in the order of [`param_names`].
    pub fn param_shapes(shape: &Shape) -> Vec<Vec<i64>> {
        let arch = shape.arch();
        let stacks = arch.stacks as i64;
        let mut out = vec![
            vec![shape.n as i64, shape.w1_columns() as i64],
            vec![shape.l1 as i64],
        ];
        for (inputs, outputs) in arch.layers(shape.l1) {
            out.push(vec![stacks * outputs as i64, inputs as i64]);
            out.push(vec![stacks * outputs as i64]);
        }
        out
    }

    /// The shape after the first layer.
    pub fn arch(&self) -> &Arch {
        &self.arch
    }

    /// Score units per unit of the float output: [`OUTPUT_SCALE`] under the thesis's rule,
    /// [`STOCKFISH_OUTPUT_SCALE`] under Stockfish's.
    pub fn output_scale(&self) -> f64 {
        match self.arch.output {
            OutputRule::Thesis => OUTPUT_SCALE,
            OutputRule::Stockfish => STOCKFISH_OUTPUT_SCALE,
        }
    }

    /// The parameters, in the order of [`param_names`].
    pub fn params(&self) -> Vec<&Tensor> {
        self.params.iter().collect()
    }

    /// The parameters, mutable, in the order of [`param_names`].
    pub fn params_mut(&mut self) -> Vec<&mut Tensor> {
        self.params.iter_mut().collect()
    }

    /// W1, `[N, L1 + P]`.
    pub fn w1(&self) -> &Tensor {
        &self.params[0]
    }

    /// b1, `[L1]`.
    pub fn b1(&self) -> &Tensor {
        &self.params[1]
    }

    /// Layer `i`'s (0: the first hidden layer) weights and biases, all stacks.
    pub fn layer(&self, i: usize) -> (&Tensor, &Tensor) {
        (&self.params[2 + 2 * i], &self.params[3 + 2 * i])
    }

    /// The device the parameters live on.
    pub fn device(&self) -> Device {
        self.params[0].device()
    }

    /// Sets every PSQT bucket's weights to `values` (one per input feature, in score units):
    /// nnue-pytorch's `_init_psqt`, which starts the PSQT term as the material balance.
    pub fn init_psqt(&mut self, values: &[f64]) {
        let p = self.arch.psqt_buckets as i64;
        if p == 0 {
            return;
        }
        let scale = self.output_scale();
        let column: Vec<f32> = values.iter().map(|&v| (v / scale) as f32).collect();
        let column = Tensor::from_slice(&column)
            .view([-1, 1])
            .repeat([1, p])
            .to_device(self.device());
        let l1 = self.shape.l1 as i64;
        tch::no_grad(|| {
            self.params[0].narrow(1, l1, p).copy_(&column);
        });
    }

    /// The scores (side to move's view, score units) of the positions of `input` (on the
    /// model's device): a `[B]` tensor, differentiable in every parameter (libtorch's
    /// `embedding_bag` for the first layer).
    pub fn forward(&self, input: &SparseInput) -> Tensor {
        self.head(&self.activations(input), input)
    }

    /// The first layer's outputs `[B, 2·(L1 + P)]` of the positions of `input` (side to move's
    /// half first): the clipped accumulators, then the P raw PSQT sums of each perspective;
    /// differentiable.
    pub fn activations(&self, input: &SparseInput) -> Tensor {
        let b = input.len as i64;
        let (l1, cols) = (self.shape.l1 as i64, self.shape.w1_columns() as i64);
        let (bags, _, _, _) = Tensor::embedding_bag(
            self.w1(),
            &input.indices,
            &input.offsets,
            false,
            0,
            false,
            None::<Tensor>,
            false,
        );
        let bags = bags.view([b, 2, cols]);
        if cols == l1 {
            return (bags + self.b1()).clamp(0.0, 1.0).view([b, 2 * l1]);
        }
        let acc = (bags.narrow(2, 0, l1) + self.b1()).clamp(0.0, 1.0);
        Tensor::cat(&[acc, bags.narrow(2, l1, cols - l1)], 2).view([b, 2 * cols])
    }

    /// [`forward`](Self::forward) for a training step. On the CPU the first layer (the sums of
    /// W1 rows, the bias, the clipped ReLU) runs outside autograd in [`first_layer`], and
    /// [`gradients`](Self::gradients) computes its gradients by hand after `backward`: libtorch's
    /// `embedding_bag` backward sorts all indices and its clamp backward takes four passes over
    /// the activations, together several times the cost of the rest of the step.
    ///
    /// For the shapes after the thesis's, what the first layer hands on (the pairwise products or
    /// both clipped accumulators) is also made outside autograd, already grouped by layer stack
    /// ([`kernels::transform`]), one leaf per stack: libtorch's narrow, product, concatenation and
    /// index backward passes over `[B, 2·L1]` tensors otherwise take a third of the step.
    pub fn forward_train(&self, input: &SparseInput) -> Forward {
        if self.device() != Device::Cpu {
            return Forward {
                out: self.forward(input),
                leaves: None,
            };
        }
        let x = tch::no_grad(|| first_layer(self.w1(), self.b1(), input));
        if self.arch.is_thesis() {
            let x = x.set_requires_grad(true);
            return Forward {
                out: self.head(&x, input),
                leaves: Some(Leaves::Activations(x)),
            };
        }
        let order = StackOrder::new(&self.arch, &input.pieces);
        let shape = Transform {
            l1: self.shape.l1,
            cols: self.shape.w1_columns(),
            psqt: self.arch.psqt_buckets,
            pairwise: self.arch.ft_output == FtOutput::Pairwise,
        };
        let grouped = transform(&x, &order.order, &shape);
        let mut stacks = Vec::new();
        let mut outs = Vec::new();
        let mut start = 0;
        for (k, &count) in order.counts.iter().enumerate() {
            let leaf = grouped.narrow(0, start, count).set_requires_grad(true);
            start += count;
            if count > 0 {
                outs.push(self.stack(&leaf, Stacks::One(k)).0);
            }
            stacks.push(leaf);
        }
        let back = Tensor::from_slice(&order.back);
        let out = Tensor::cat(&outs, 0).index_select(0, &back);
        let (len, l1, p) = (
            input.len as i64,
            shape.l1 as i64,
            self.arch.psqt_buckets as i64,
        );
        let psqt = (p > 0).then(|| {
            x.view([len, 2, shape.cols as i64])
                .narrow(2, l1, p)
                .contiguous()
                .set_requires_grad(true)
        });
        let out = match &psqt {
            Some(psqt) => out + self.psqt_term(psqt, input),
            None => out,
        };
        Forward {
            out: out * self.output_scale(),
            leaves: Some(Leaves::Split {
                x,
                order,
                stacks,
                psqt,
            }),
        }
    }

    /// The gradients of all parameters after `backward` of a loss computed from
    /// [`forward_train`](Self::forward_train)'s outputs, in the order of [`param_names`] (zeros
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
        let (w1, w1_rows, b1) = match &forward.leaves {
            Some(Leaves::Activations(x)) => {
                let g = x.grad();
                if g.defined() {
                    let (rows, w1, b1) = first_layer_gradients(
                        &OutputGrad::Direct(&g),
                        x,
                        input,
                        self.shape.n,
                        self.shape.l1,
                    );
                    (w1, Some(rows), b1)
                } else {
                    (self.w1().zeros_like(), None, self.b1().zeros_like())
                }
            }
            Some(Leaves::Split {
                x,
                order,
                stacks,
                psqt,
            }) => {
                let grad_of = |t: &Tensor| {
                    let g = t.grad();
                    if g.defined() { g } else { t.zeros_like() }
                };
                let g_stacks: Vec<Tensor> = stacks.iter().map(grad_of).collect();
                let g_psqt = psqt.as_ref().map(grad_of);
                let source = OutputGrad::Transformed {
                    g_stacks: &g_stacks,
                    back: &order.back,
                    g_psqt: g_psqt.as_ref(),
                    pairwise: self.arch.ft_output == FtOutput::Pairwise,
                };
                let (rows, w1, b1) =
                    first_layer_gradients(&source, x, input, self.shape.n, self.shape.l1);
                (w1, Some(rows), b1)
            }
            None => (grad(self.w1()), None, grad(self.b1())),
        };
        let mut tensors = vec![w1, b1];
        tensors.extend(self.params[2..].iter().map(grad));
        Gradients {
            tensors,
            w1_rows,
            w1_touched: None,
        }
    }

    /// Resets the autograd gradients of the parameters.
    pub fn zero_grad(&mut self) {
        for p in self.params_mut() {
            p.zero_grad();
        }
    }

    /// The layers after the first: `x` holds the first layer's outputs of the positions of
    /// `input`, side to move's first (`[2·B, L1 + P]` or `[B, 2·(L1 + P)]`).
    fn head(&self, x: &Tensor, input: &SparseInput) -> Tensor {
        let len = input.len as i64;
        if self.arch.is_thesis() {
            let h = self.hidden(x, input);
            let (w3, b3) = self.layer(1);
            return h.linear(w3, Some(b3)).view([len]) * OUTPUT_SCALE;
        }
        let (l1, cols) = (self.shape.l1 as i64, self.shape.w1_columns() as i64);
        let x = x.view([len, 2, cols]);
        let out = self.by_stack(&self.ft_output(&x), input, |x, s| self.stack(x, s).0);
        let out = match self.arch.psqt_buckets {
            0 => out,
            p => out + self.psqt_term(&x.narrow(2, l1, p as i64), input),
        };
        out * self.output_scale()
    }

    /// The PSQT term `(psqt_stm[b] − psqt_opp[b]) / 2` `[B]` of the PSQT sums `psqt`
    /// (`[B, 2, P]`), b being each position's bucket.
    fn psqt_term(&self, psqt: &Tensor, input: &SparseInput) -> Tensor {
        let len = input.len as i64;
        let diff = psqt.select(1, 0) - psqt.select(1, 1);
        let bucket: Vec<i64> = input
            .pieces
            .iter()
            .map(|&n| self.arch.psqt_bucket_of(u32::from(n)) as i64)
            .collect();
        let bucket = Tensor::from_slice(&bucket)
            .view([len, 1])
            .to_device(psqt.device());
        diff.gather(1, &bucket, false).view([len]) * 0.5
    }

    /// What the first layer hands to the hidden layers, from its outputs `x` (`[B, 2, L1 + P]`):
    /// both clipped accumulators (`[B, 2·L1]`), or the pairwise products of each one's halves
    /// times 127/128 (`[B, L1]`, nnue-pytorch's factor for Stockfish's `>> 7`).
    fn ft_output(&self, x: &Tensor) -> Tensor {
        let (len, l1) = (x.size()[0], self.shape.l1 as i64);
        let acc = x.narrow(2, 0, l1);
        match self.arch.ft_output {
            FtOutput::ClippedRelu => acc.reshape([len, 2 * l1]),
            FtOutput::Pairwise => {
                let half = l1 / 2;
                (acc.narrow(2, 0, half) * acc.narrow(2, half, half)).reshape([len, l1])
                    * (127.0 / 128.0)
            }
        }
    }

    /// `f(rows, stacks)` on the rows of `x` (`[B, ...]`) through each position's layer stack, in
    /// the positions' order. On the CPU `f` runs once per stack on that stack's rows (one small
    /// product per stack instead of every stack on every position). Elsewhere it runs once on
    /// all rows with [`Stacks::PerRow`], as nnue-pytorch's `LayerStacks` does: every stack's
    /// outputs, then each row's gathered. A GPU takes a few larger products far better than
    /// eight rounds of small ones with their sorting, splitting and joining.
    fn by_stack(
        &self,
        x: &Tensor,
        input: &SparseInput,
        f: impl Fn(&Tensor, Stacks) -> Tensor,
    ) -> Tensor {
        if self.arch.stacks == 1 {
            return f(x, Stacks::One(0));
        }
        if x.device() != Device::Cpu {
            let stack = Tensor::from_slice(&stack_of_each(&self.arch, &input.pieces));
            let stack = stack.to_device(x.device());
            return f(x, Stacks::PerRow(&stack));
        }
        let order = StackOrder::new(&self.arch, &input.pieces);
        let device = x.device();
        let sorted = x.index_select(0, &Tensor::from_slice(&order.order).to_device(device));
        let mut parts = Vec::new();
        let mut start = 0i64;
        for (k, &count) in order.counts.iter().enumerate() {
            if count > 0 {
                parts.push(f(&sorted.narrow(0, start, count), Stacks::One(k)));
                start += count;
            }
        }
        Tensor::cat(&parts, 0).index_select(0, &Tensor::from_slice(&order.back).to_device(device))
    }

    /// Layer `i` of the stacks `stacks` on the rows of `h`: `[rows, outputs]`.
    fn stack_layer(&self, h: &Tensor, i: usize, outputs: i64, stacks: Stacks) -> Tensor {
        let (w, b) = self.layer(i);
        match stacks {
            Stacks::One(k) => {
                let from = k as i64 * outputs;
                h.linear(
                    &w.narrow(0, from, outputs),
                    Some(&b.narrow(0, from, outputs)),
                )
            }
            Stacks::PerRow(stack) => {
                let all = h
                    .linear(w, Some(b))
                    .view([-1, self.arch.stacks as i64, outputs]);
                let at = stack.view([-1, 1, 1]).expand([-1, 1, outputs], false);
                all.gather(1, &at, false).view([-1, outputs])
            }
        }
    }

    /// The layer stacks `stacks` on the rows of `x` (what the first layer hands on): the output
    /// `[rows]` (the skip output added) and the first hidden layer's activations.
    fn stack(&self, x: &Tensor, stacks: Stacks) -> (Tensor, Tensor) {
        let layers = self.arch.layers(self.shape.l1);
        let mut h = x.shallow_clone();
        let mut skip = None;
        let mut first = None;
        for (i, hidden) in self.arch.hidden.iter().enumerate() {
            let outputs = layers[i].1 as i64;
            let mut y = self.stack_layer(&h, i, outputs, stacks);
            if i == 0 && self.arch.skip {
                let width = hidden.width as i64;
                skip = Some(y.narrow(1, width, 1).view([-1]));
                y = y.narrow(1, 0, width);
            }
            h = match hidden.activation {
                Activation::ClippedRelu => y.clamp(0.0, 1.0),
                Activation::SqrClippedRelu => {
                    Tensor::cat(&[y.square() * (127.0 / 128.0), y], 1).clamp(0.0, 1.0)
                }
            };
            if i == 0 {
                first = Some(h.shallow_clone());
            }
        }
        let out = self
            .stack_layer(&h, self.arch.hidden.len(), 1, stacks)
            .view([-1]);
        let out = match skip {
            Some(s) => out + s,
            None => out,
        };
        (out, first.expect("at least one hidden layer"))
    }

    /// The first hidden layer's activations `[B, width]` (each position through its own stack)
    /// of the first layer's outputs `x` (as [`activations`](Self::activations) gives them) of
    /// the positions of `input`.
    pub fn hidden(&self, x: &Tensor, input: &SparseInput) -> Tensor {
        let len = input.len as i64;
        if self.arch.is_thesis() {
            let x = x.view([len, 2 * self.shape.l1 as i64]);
            let (w2, b2) = self.layer(0);
            return x.linear(w2, Some(b2)).clamp(0.0, 1.0);
        }
        let x = x.view([len, 2, self.shape.w1_columns() as i64]);
        self.by_stack(&self.ft_output(&x), input, |x, s| self.stack(x, s).1)
    }

    /// Clips every parameter to the range its quantized form can hold (after each optimizer
    /// step): hidden weights to ±127/64, output weights to the output rule's range, the first
    /// layer to the `i16` range (its [`narrow_rows`](Self::narrow_rows) to ±127 as `i8`).
    pub fn clip(&mut self) {
        let l1 = self.shape.l1 as i64;
        let layers = self.arch.hidden.len() + 1;
        let (max_out_w, max_out_b) = match self.arch.output {
            OutputRule::Thesis => (MAX_HIDDEN_WEIGHT, MAX_OUTPUT_BIAS),
            OutputRule::Stockfish => (MAX_STOCKFISH_OUTPUT_WEIGHT, MAX_STOCKFISH_OUTPUT_BIAS),
        };
        let narrow_rows = self.narrow_rows.clone();
        tch::no_grad(|| {
            let w1 = &mut self.params[0];
            let _ = w1.clamp_(-MAX_L1_WEIGHT, MAX_L1_WEIGHT);
            for &(start, len) in &narrow_rows {
                let _ = w1
                    .narrow(0, start, len)
                    .narrow(1, 0, l1)
                    .clamp_(-MAX_NARROW_L1_WEIGHT, MAX_NARROW_L1_WEIGHT);
            }
            let _ = self.params[1].clamp_(-MAX_L1_WEIGHT, MAX_L1_WEIGHT);
            for i in 0..layers {
                let (max_w, max_b) = if i + 1 == layers {
                    (max_out_w, max_out_b)
                } else {
                    (MAX_HIDDEN_WEIGHT, MAX_HIDDEN_BIAS)
                };
                let _ = self.params[2 + 2 * i].clamp_(-max_w, max_w);
                let _ = self.params[3 + 2 * i].clamp_(-max_b, max_b);
            }
        });
    }

    /// Sets the first-layer rows from `from` on to zero (the virtual features of a factorized
    /// training start at zero, so the model starts as the plain one).
    pub fn zero_first_layer_rows(&mut self, from: usize) {
        let rows = self.shape.n.saturating_sub(from) as i64;
        if rows > 0 {
            tch::no_grad(|| {
                let _ = self.params[0].narrow(0, from as i64, rows).zero_();
            });
        }
    }

    /// The parameters as CPU `f32` vectors, in the order of [`param_names`].
    pub fn to_vecs(&self) -> Vec<Vec<f32>> {
        self.params.iter().map(tensor_to_vec).collect()
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

/// The first layer's outputs of every bag (CPU), `[2·B, L1 + P]`: the clipped accumulators
/// `clamp(b1 + Σ W1[i][..L1], 0, 1)`, then the raw PSQT sums `Σ W1[i][L1..]`. Bags are split among the libtorch threads; each bag's sum runs in index order,
/// so the result does not depend on the number of threads.
pub fn first_layer(w1: &Tensor, b1: &Tensor, input: &SparseInput) -> Tensor {
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
    let cols = w1c.size()[1] as usize;
    let per = bags.div_ceil(cpu_threads()).max(1);
    // Every row is written (bias, sums, clip): no zeroing needed.
    new_f32(&[bags as i64, cols as i64], false, |dst| {
        std::thread::scope(|scope| {
            for (c, chunk) in dst.chunks_mut(per * cols).enumerate() {
                scope.spawn(move || kernels::forward(chunk, c * per, w, b, idx, off, cols));
            }
        });
    })
}

/// How the first layer's outputs become what it hands to the hidden layers (for
/// [`transform`] and its gradient).
#[derive(Clone, Copy, Debug)]
pub struct Transform {
    /// Accumulator columns.
    pub l1: usize,
    /// Columns of the first layer's outputs: L1, the PSQT buckets, padding.
    pub cols: usize,
    /// PSQT buckets.
    pub psqt: usize,
    /// The pairwise product (else both clipped accumulators).
    pub pairwise: bool,
}

impl Transform {
    /// Values per position handed on: L1 for the pairwise product, else 2·L1.
    pub fn width(&self) -> usize {
        if self.pairwise { self.l1 } else { 2 * self.l1 }
    }
}

/// What the first layer hands to the hidden layers (CPU, `[B, width]`), from its outputs `x`
/// (`[2·B, L1 + P]` of [`first_layer`]), row r being position `order[r]`: both clipped
/// accumulators side to move's first, or each one's pairwise products
/// `x_j · x_{j+L1/2} · 127/128`.
pub fn transform(x: &Tensor, order: &[i64], shape: &Transform) -> Tensor {
    let x_t = x.contiguous();
    // SAFETY: a read-only view of a tensor alive until the end of the function.
    let xs = unsafe { f32_slice(&x_t) };
    let width = shape.width();
    let per = order.len().div_ceil(cpu_threads()).max(1);
    new_f32(&[order.len() as i64, width as i64], false, |dst| {
        std::thread::scope(|scope| {
            for (c, chunk) in dst.chunks_mut(per * width).enumerate() {
                let order = &order[c * per..];
                scope.spawn(move || kernels::transform(chunk, order, xs, shape));
            }
        });
    })
}

/// The gradient [`first_layer_gradients`] starts from.
pub enum OutputGrad<'a> {
    /// The gradient of the first layer's outputs themselves (`[2·B, L1 + P]`).
    Direct(&'a Tensor),
    /// The gradient of what [`transform`] made (its rows, position i at row `back[i]`, given
    /// as one tensor per layer stack, `[count_k, width]`) and of the PSQT sums (`[B, 2, P]`).
    Transformed {
        /// The gradient of the transform's rows, stack after stack.
        g_stacks: &'a [Tensor],
        /// The row of each position.
        back: &'a [i64],
        /// The gradient of the PSQT sums, when the shape has them.
        g_psqt: Option<&'a Tensor>,
        /// Whether the transform was the pairwise product.
        pairwise: bool,
    },
}

/// [`OutputGrad::Transformed`] as slices, for the kernels.
#[derive(Clone, Copy)]
pub struct TransformedGrad<'a> {
    rows: &'a [&'a [f32]],
    back: &'a [i64],
    g_psqt: &'a [f32],
    shape: Transform,
}

/// Bags per block of the b1 gradient's partial sums (a fixed partition, so the sum's order does
/// not depend on the number of threads).
const B1_BLOCK: usize = 256;

/// The gradients of W1 and b1 from the gradient `grad` of the clipped activations `x` of
/// [`first_layer`] (CPU): the clipped ReLU passes the gradient where `0 < x < 1` (the PSQT
/// columns pass it all), then bag j's masked gradient is added to W1's row of each of its
/// indices and to b1 (its first L1 columns). W1's gradient comes row-compressed: the rows the
/// indices touch (ascending, of the `n`) and their gradients (`[rows, L1 + P]`), every other row
/// being zero (see [`Gradients`]).
///
/// Three parallel passes: the masked gradients and b1's partial sums over fixed blocks of bags;
/// the touched rows split into one range per libtorch thread, each thread scanning all bags and
/// adding into its own rows (in bag order); the partial sums of b1 added in block order. The
/// result does not depend on the number of threads.
pub fn first_layer_gradients(
    source: &OutputGrad,
    x: &Tensor,
    input: &SparseInput,
    n: usize,
    l1: usize,
) -> (Vec<u32>, Tensor, Tensor) {
    let contiguous = |t: &Tensor| t.detach().to_kind(Kind::Float).contiguous();
    let x_t = contiguous(x);
    let (grad_t, stacks_t, psqt_t) = match source {
        OutputGrad::Direct(g) => (contiguous(g), Vec::new(), None),
        OutputGrad::Transformed {
            g_stacks, g_psqt, ..
        } => (
            Tensor::empty([0], (Kind::Float, Device::Cpu)),
            g_stacks.iter().map(contiguous).collect(),
            g_psqt.map(contiguous),
        ),
    };
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
    let cols = x_t.size()[1] as usize;
    // The transform's gradient rows in grouped order, each a slice of its stack's tensor.
    let rows: Vec<&[f32]> = stacks_t
        .iter()
        .flat_map(|t| {
            let width = t.size().get(1).copied().unwrap_or(1).max(1) as usize;
            // SAFETY: as above.
            unsafe { f32_slice(t) }.chunks(width)
        })
        .collect();
    let transformed = match source {
        OutputGrad::Direct(_) => None,
        OutputGrad::Transformed { back, pairwise, .. } => Some(TransformedGrad {
            rows: &rows,
            back,
            // SAFETY: as above.
            g_psqt: psqt_t.as_ref().map_or(&[], |t| unsafe { f32_slice(t) }),
            shape: Transform {
                l1,
                cols,
                psqt: psqt_t.as_ref().map_or(0, |t| t.size()[2] as usize),
                pairwise: *pairwise,
            },
        }),
    };
    let threads = cpu_threads();
    // 1. Masked gradients (every value written) and b1's partial sums per block of bags.
    let blocks = bags.div_ceil(B1_BLOCK);
    let mut partial = vec![0f32; blocks * cols];
    let blocks_per = blocks.div_ceil(threads).max(1);
    let masked_t = new_f32(&[bags as i64, cols as i64], false, |masked| {
        std::thread::scope(|scope| {
            for (t, (m, p)) in masked
                .chunks_mut(blocks_per * B1_BLOCK * cols)
                .zip(partial.chunks_mut(blocks_per * cols))
                .enumerate()
            {
                let first = t * blocks_per * B1_BLOCK;
                let len = m.len();
                let xs = &xs[first * cols..first * cols + len];
                let transformed = transformed.as_ref();
                scope.spawn(move || {
                    match transformed {
                        None => {
                            kernels::mask(m, &g[first * cols..first * cols + len], xs, l1, cols)
                        }
                        Some(t) => kernels::mask_transformed(m, first, xs, t),
                    }
                    for (block, sum) in m.chunks(B1_BLOCK * cols).zip(p.chunks_mut(cols)) {
                        kernels::sum_rows(sum, block, cols);
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
    let w1_grad = new_f32(&[touched as i64, cols as i64], true, |dst| {
        std::thread::scope(|scope| {
            for (t, chunk) in dst.chunks_mut(rows_per * cols).enumerate() {
                let lo = t * rows_per;
                scope.spawn(move || kernels::scatter(chunk, lo, masked, idx, off, cols, slot));
            }
        });
    });
    // 4. b1.
    let mut sums = vec![0f32; cols];
    kernels::sum_rows(&mut sums, &partial, cols);
    (rows, w1_grad, Tensor::from_slice(&sums[..l1]))
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
        cols: usize,
    ) {
        // The bias covers the accumulator's L1 columns; the PSQT columns after them start at 0.
        let l1 = b.len();
        for (k, row) in dst.chunks_mut(cols).enumerate() {
            let j = first + k;
            let end = off.get(j + 1).map_or(idx.len(), |&e| e as usize);
            row[..l1].copy_from_slice(b);
            row[l1..].fill(0.0);
            for &i in &idx[off[j] as usize..end] {
                let i = i as usize;
                add(row, &w[i * cols..(i + 1) * cols]);
            }
            for a in row[..l1].iter_mut() {
                *a = a.clamp(0.0, 1.0);
            }
        }
    }

    #[inline(always)]
    fn mask_impl(dst: &mut [f32], g: &[f32], x: &[f32], l1: usize, cols: usize) {
        for ((d, g), x) in dst.chunks_mut(cols).zip(g.chunks(cols)).zip(x.chunks(cols)) {
            for ((d, &gv), &xv) in d[..l1].iter_mut().zip(&g[..l1]).zip(&x[..l1]) {
                *d = if xv > 0.0 && xv < 1.0 { gv } else { 0.0 };
            }
            d[l1..].copy_from_slice(&g[l1..]);
        }
    }

    /// The pairwise factor: Stockfish's `>> 7` of a product of two values of 127 (nnue-pytorch's
    /// 127/128).
    const PAIRWISE: f32 = 127.0 / 128.0;

    #[inline(always)]
    fn transform_impl(dst: &mut [f32], order: &[i64], x: &[f32], t: &super::Transform) {
        let (l1, cols, width) = (t.l1, t.cols, t.width());
        let half = l1 / 2;
        for (row, &i) in dst.chunks_mut(width).zip(order) {
            for p in 0..2 {
                let xr = &x[(2 * i as usize + p) * cols..][..l1];
                if t.pairwise {
                    let out = &mut row[p * half..(p + 1) * half];
                    for ((o, &a), &b) in out.iter_mut().zip(&xr[..half]).zip(&xr[half..]) {
                        *o = a * b * PAIRWISE;
                    }
                } else {
                    row[p * l1..(p + 1) * l1].copy_from_slice(xr);
                }
            }
        }
    }

    #[inline(always)]
    fn mask_transformed_impl(dst: &mut [f32], first: usize, x: &[f32], t: &super::TransformedGrad) {
        let (l1, cols) = (t.shape.l1, t.shape.cols);
        let (half, buckets) = (l1 / 2, t.shape.psqt);
        let pass = |v: f32| v > 0.0 && v < 1.0;
        for (k, (d, xr)) in dst.chunks_mut(cols).zip(x.chunks(cols)).enumerate() {
            let bag = first + k;
            let (i, p) = (bag / 2, bag % 2);
            let g_row = t.rows[t.back[i] as usize];
            if t.shape.pairwise {
                let g = &g_row[p * half..][..half];
                let (da, db) = d[..l1].split_at_mut(half);
                let (xa, xb) = xr[..l1].split_at(half);
                for ((((da, db), &a), &b), &g) in da.iter_mut().zip(db).zip(xa).zip(xb).zip(g) {
                    let g = g * PAIRWISE;
                    *da = if pass(a) { g * b } else { 0.0 };
                    *db = if pass(b) { g * a } else { 0.0 };
                }
            } else {
                let g = &g_row[p * l1..][..l1];
                for ((d, &gv), &xv) in d[..l1].iter_mut().zip(g).zip(&xr[..l1]) {
                    *d = if pass(xv) { gv } else { 0.0 };
                }
            }
            let psqt = &t.g_psqt[bag * buckets..(bag + 1) * buckets];
            d[l1..l1 + buckets].copy_from_slice(psqt);
            d[l1 + buckets..].fill(0.0);
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

    dispatch!(forward, forward_impl, (dst: &mut [f32], first: usize, w: &[f32], b: &[f32], idx: &[i64], off: &[i64], cols: usize));
    dispatch!(mask, mask_impl, (dst: &mut [f32], g: &[f32], x: &[f32], l1: usize, cols: usize));
    dispatch!(transform, transform_impl, (dst: &mut [f32], order: &[i64], x: &[f32], t: &super::Transform));
    dispatch!(mask_transformed, mask_transformed_impl, (dst: &mut [f32], first: usize, x: &[f32], t: &super::TransformedGrad));
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
        Shape::thesis(10, 4, 3)
    }

    #[test]
    fn forward_is_the_embedding_sum_of_each_perspective() {
        let m = Model::new(tiny(), 1, Device::Cpu);
        // Two positions: (stm {1, 3}, opp {2}) and (stm {}, opp {0, 9}), bags interleaved.
        let input = SparseInput {
            len: 2,
            indices: Tensor::from_slice(&[1i64, 3, 2, 0, 9]),
            offsets: Tensor::from_slice(&[0i64, 2, 3, 3]),
            pieces: vec![3, 2],
        };
        let out = tensor_to_vec(&m.forward(&input));
        let [w1, b1, w2, b2, w3, b3]: [Vec<f32>; 6] = m.to_vecs().try_into().unwrap();
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
            let _ = m.params[2].fill_(5.0);
            let _ = m.params[4].fill_(-5.0);
            let _ = m.params[0].fill_(-3.0);
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

    /// A small shape with every part of Stockfish's: PSQT, stacks, pairwise, squared ReLU, skip.
    fn small_stockfish_like(n: usize) -> Shape {
        let arch = Arch {
            ft_output: FtOutput::Pairwise,
            psqt_buckets: 3,
            stacks: 4,
            bucket_rule: nnue::BucketRule::PieceCount,
            hidden: vec![
                nnue::Hidden {
                    width: 5,
                    activation: Activation::SqrClippedRelu,
                },
                nnue::Hidden {
                    width: 4,
                    activation: Activation::ClippedRelu,
                },
            ],
            skip: true,
            output: OutputRule::Stockfish,
        };
        Shape::new(n, 64, arch)
    }

    #[test]
    fn hand_scattered_first_layer_gradient_equals_autograd() {
        gradients_agree(Shape::thesis(40, 32, 8));
        gradients_agree(small_stockfish_like(40));
        // Both clipped accumulators handed on, with PSQT and stacks.
        let mut arch = small_stockfish_like(40).arch();
        arch.ft_output = FtOutput::ClippedRelu;
        arch.skip = false;
        gradients_agree(Shape::new(40, 32, arch));
    }

    fn gradients_agree(shape: Shape) {
        let mut m = Model::new(shape.clone(), 3, Device::Cpu);
        m.init_psqt(
            &(0..40)
                .map(|i| f64::from(i) * 10.0 - 200.0)
                .collect::<Vec<_>>(),
        );
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
            pieces: (0..50).map(|_| rng.random_range(2..=32u8)).collect(),
        };
        let target =
            Tensor::from_slice(&(0..50).map(|i| i as f32 * 7.0 - 150.0).collect::<Vec<_>>());
        let loss = |out: &Tensor| (out - &target).square().mean(Kind::Float);
        let fwd = m.forward_train(&input);
        loss(&fwd.out).backward();
        assert!(fwd.leaves.is_some());
        let manual = m.gradients(&fwd, &input);
        let mut m = m;
        m.zero_grad();
        let out = m.forward(&input);
        loss(&out).backward();
        let auto = m.gradients(&Forward { out, leaves: None }, &input);
        assert!(manual.w1_rows.is_some() && auto.w1_rows.is_none());
        let dense = |g: &Gradients| {
            let mut t: Vec<Tensor> = g.tensors.iter().map(|t| t.shallow_clone()).collect();
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
        assert_eq!(manual.len(), param_names(&shape).len());
    }

    #[test]
    fn stacks_gathered_per_row_equal_stacks_grouped() {
        // Off the CPU each row's stack is gathered from every stack's outputs
        // (`Stacks::PerRow`); on the CPU rows are grouped by stack. Same values and gradients.
        for shape in [small_stockfish_like(40), {
            let mut arch = small_stockfish_like(40).arch();
            arch.ft_output = FtOutput::ClippedRelu;
            arch.skip = false;
            Shape::new(40, 32, arch)
        }] {
            let mut m = Model::new(shape.clone(), 5, Device::Cpu);
            // The stacks start equal (nnue-pytorch's initialisation): make them differ.
            tch::manual_seed(6);
            tch::no_grad(|| {
                for p in &mut m.params[2..] {
                    let _ = p.g_add_(&(p.randn_like() * 0.1));
                }
            });
            let mut rng = ChaCha8Rng::seed_from_u64(4);
            let rows = 300;
            let width = m
                .ft_output(&Tensor::zeros(
                    [1, 2, shape.w1_columns() as i64],
                    (Kind::Float, Device::Cpu),
                ))
                .size()[1];
            let x = Tensor::from_slice(
                &(0..rows * width)
                    .map(|_| rng.random::<f32>())
                    .collect::<Vec<_>>(),
            )
            .view([rows, width]);
            let input = SparseInput {
                len: rows as usize,
                indices: Tensor::zeros([0], (Kind::Int64, Device::Cpu)),
                offsets: Tensor::zeros([2 * rows], (Kind::Int64, Device::Cpu)),
                pieces: (0..rows).map(|_| rng.random_range(2..=32u8)).collect(),
            };
            let stack = stack_of_each(&m.arch, &input.pieces);
            let stacks = m.arch.stacks as i64;
            assert!((0..stacks).all(|k| stack.contains(&k)), "every stack used");
            let stack = Tensor::from_slice(&stack);
            let run = |gathered: bool| {
                for p in &m.params {
                    let mut g = p.grad();
                    if g.defined() {
                        let _ = g.zero_();
                    }
                }
                let (out, first) = if gathered {
                    m.stack(&x, Stacks::PerRow(&stack))
                } else {
                    (
                        m.by_stack(&x, &input, |x, s| m.stack(x, s).0),
                        m.by_stack(&x, &input, |x, s| m.stack(x, s).1),
                    )
                };
                (out.square().sum(Kind::Float) + first.sum(Kind::Float)).backward();
                let grads: Vec<Vec<f32>> = m.params[2..]
                    .iter()
                    .map(|p| tensor_to_vec(&p.grad()))
                    .collect();
                (tensor_to_vec(&out), tensor_to_vec(&first), grads)
            };
            let (grouped, gathered) = (run(false), run(true));
            let close = |a: &[f32], b: &[f32]| {
                let scale = b.iter().fold(1e-6f32, |s, v| s.max(v.abs()));
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-5 * scale)
            };
            assert!(close(&gathered.0, &grouped.0), "outputs");
            assert!(close(&gathered.1, &grouped.1), "first hidden activations");
            for (i, (a, b)) in gathered.2.iter().zip(&grouped.2).enumerate() {
                assert!(close(a, b), "gradient of parameter {}", i + 2);
                assert!(b.iter().any(|&g| g != 0.0));
            }
        }
    }
}
