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
//! Stockfish's shape of today (`Arch::sfnnv16`) is the same model with its layer kinds: the
//! product of the halves clipped at 255 (accumulators ×255, factor 65025/65024), both hidden
//! layers' `[sqr ‖ plain]` activations concatenated into the output layer, and the skip
//! `(y[30] − y[31]) · 127/128`; every hidden layer's float activation is the same whatever its
//! shift, the shift choosing only its weight scale (`2^shift`). [`ArchScales`] holds the scales
//! of each shape.
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
//! | today: `W1`, `b1` | `i16` (`i8` rows): round(255·w) | ±32767/255 (±127/255) |
//! | today: `fc_0` weights, biases | `i8`: round(128·w); `i32`: round(128·127·b) (+64) | ±127/128 |
//! | today: output weights, bias | `i8`: round(16384/127·w); `i32`: round(16384·b) | ±127²/16384 |
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

mod cpu;
mod gradients;
mod init;
mod input;
mod scales;
mod stacks;
#[cfg(test)]
mod tests;

use nnue::{Activation, Arch, FtOutput, OutputRule, Plan, Shape, SkipRead};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::{Device, Kind, Tensor};

pub use cpu::{
    OutputGrad, Transform, TransformedGrad, first_layer, first_layer_gradients, transform,
};
pub use gradients::{Gradients, dense_rows};
pub use init::FirstLayerInit;
use init::uniform;
pub use input::SparseInput;
pub use scales::*;
use stacks::{StackOrder, Stacks, stack_of_each};

/// The names of the parameters of a network of `shape`, in the order of [`Model::params`]:
/// `w1`, `b1`, then `wK`, `bK` for layer K = 2, 3... (the thesis's `w1 b1 w2 b2 w3 b3`).
pub fn param_names(shape: &Shape) -> Vec<String> {
    let layers = shape.arch.layers(shape.l1).len();
    (1..=layers + 1)
        .flat_map(|k| [format!("w{k}"), format!("b{k}")])
        .collect()
}

/// The skip value of the first hidden layer's sums `y` `[B, outputs]` as `plan` reads it (the
/// difference scaled by `difference`, [`ArchScales::skip_difference`]), `[B]`.
pub(crate) fn skip_value(plan: &Plan, y: &Tensor, difference: f64) -> Option<Tensor> {
    match plan.skip {
        SkipRead::None => None,
        SkipRead::Sum(k) => Some(y.narrow(1, k as i64, 1).view([-1])),
        SkipRead::Difference(a, b) => {
            Some((y.select(1, a as i64) - y.select(1, b as i64)) * difference)
        }
    }
}

/// What the output layer reads of the hidden layers' activations `every`, as `plan` says: the
/// last's, or all of them side by side.
pub(crate) fn read_by_output(plan: &Plan, every: &[Tensor]) -> Tensor {
    match &every[plan.output.layers.clone()] {
        [one] => one.shallow_clone(),
        several => Tensor::cat(several, 1),
    }
}

/// Columns of W1 for `shape`: L1, one per PSQT bucket, and zeros up to a multiple of 16 (a row
/// of whole 64-byte lines: the first layer's kernels run 1.5× slower on 264-column rows than on
/// 256-column ones).
pub fn w1_columns(shape: &Shape) -> usize {
    match shape.arch.psqt_buckets {
        0 => shape.l1,
        p => (shape.l1 + p).next_multiple_of(16),
    }
}

/// The float network: its parameter tensors on one device.
#[derive(Debug)]
pub struct Model {
    /// Layer sizes.
    pub shape: Shape,
    /// The parameters in the order of [`param_names`]: W1 `[N, L1 + P]` (row i is added while
    /// feature i is active; its last P columns are the PSQT weights), b1 `[L1]`, then per layer
    /// of [`Arch::layers`] its weights `[stacks · outputs, inputs]` and biases
    /// `[stacks · outputs]` (stack after stack). The output layer is in units of the output
    /// rule's scale ([`Model::output_scale`]).
    params: Vec<Tensor>,
    /// Runs of W1 rows (first row, number of rows) exported as `i8`: [`clip`](Self::clip)
    /// keeps them within ±127 over the first layer's scale ([`ArchScales::max_narrow_l1_weight`]).
    pub narrow_rows: Vec<(i64, i64)>,
    /// How a training step runs: chosen from the device ([`Execution::for_device`]).
    execution: Execution,
    /// The float scales of the shape's layer kinds.
    scales: ArchScales,
    /// The walk over the layers after the first ([`Arch::plan`]).
    plan: Plan,
}

/// How the model's training steps run, chosen from the device of its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    /// On the CPU: the first layer and what it hands on made outside autograd by the
    /// hand-written kernels ([`first_layer`], [`transform`]), W1's gradient row-compressed, the
    /// positions grouped by layer stack.
    CpuKernels,
    /// Elsewhere (a GPU): libtorch's autograd throughout, W1's gradient dense (sparse Adam then
    /// gathers the rows the batch touches, [`Gradients::touch_rows`]), every stack's outputs
    /// computed for all positions and each position's gathered (nnue-pytorch's `LayerStacks`).
    Autograd,
}

impl Execution {
    /// The execution of a model whose parameters live on `device`.
    pub fn for_device(device: Device) -> Execution {
        match device {
            Device::Cpu => Execution::CpuKernels,
            _ => Execution::Autograd,
        }
    }
}

/// The result of [`Model::forward_train`]: the outputs, and what the gradient of the first
/// layer needs.
#[derive(Debug)]
pub struct ModelForward {
    /// `[B]` scores.
    pub out: Tensor,
    /// On the CPU, the leaf tensors whose gradients are turned into the gradients of W1 and b1
    /// by hand ([`Model::gradients`]); `None` where autograd does it.
    leaves: Option<Leaves>,
}

/// The leaves of a CPU training step's graph, computed outside autograd.
#[derive(Debug)]
enum Leaves {
    /// The first layer's outputs handed on as they are ([`Model::hands_on_as_is`]): the
    /// clipped first-layer activations `[2·B, L1]`.
    Activations(Tensor),
    /// Otherwise: the first layer's outputs `x` (`[2·B, L1 + P]`, no gradient), what it hands to
    /// the hidden layers as one leaf per layer stack (the rows of the positions of stack k, in
    /// [`StackOrder`]), and the PSQT sums `[B, 2, P]` as a leaf (when P > 0).
    Split {
        x: Tensor,
        order: StackOrder,
        stacks: Vec<Tensor>,
        psqt: Option<Tensor>,
    },
}

impl Model {
    /// A freshly initialized model, its first layer started as [`FirstLayerInit::ActiveFanIn`]
    /// ([`with_init`](Self::with_init) for another start).
    pub fn new(shape: Shape, seed: u64, device: Device) -> Model {
        Self::with_init(shape, FirstLayerInit::ActiveFanIn, &[], seed, device)
    }

    /// A freshly initialized model, seeded: the first layer started as `init` says (the rows
    /// of each term of the feature set in `term_rows`), the layers after it by PyTorch's
    /// `nn.Linear` rule (uniform in ±1/√fan-in). Every layer stack starts as the first
    /// (nnue-pytorch's `_init_layers`), and so does every PSQT bucket: at zero until
    /// [`init_psqt`](Self::init_psqt) sets piece values.
    pub fn with_init(
        shape: Shape,
        init: FirstLayerInit,
        term_rows: &[u32],
        seed: u64,
        device: Device,
    ) -> Model {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(0x006d_6f64_656c);
        let arch = &shape.arch;
        let (n, l1) = (shape.n as i64, shape.l1 as i64);
        let (w1, b1) = init.draw(&mut rng, (n, l1), term_rows);
        let mut tensors = vec![w1, b1];
        let extra = (w1_columns(&shape) - shape.l1) as i64;
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
            scales: ArchScales::of(&shape.arch),
            plan: shape.arch.plan(shape.l1),
            shape,
            params,
            narrow_rows: Vec::new(),
            execution: Execution::for_device(device),
        }
    }

    /// The expected tensor shapes, in the order of [`param_names`].
    pub fn param_shapes(shape: &Shape) -> Vec<Vec<i64>> {
        let arch = &shape.arch;
        let stacks = arch.stacks as i64;
        let mut out = vec![
            vec![shape.n as i64, w1_columns(shape) as i64],
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
        &self.shape.arch
    }

    /// Score units per unit of the float output: [`OUTPUT_SCALE`] under the thesis's rule,
    /// [`STOCKFISH_OUTPUT_SCALE`] under Stockfish's.
    pub fn output_scale(&self) -> f64 {
        match self.shape.arch.output {
            OutputRule::Thesis => OUTPUT_SCALE,
            OutputRule::Stockfish | OutputRule::StockfishScaled => STOCKFISH_OUTPUT_SCALE,
        }
    }

    /// Whether the first layer's outputs go to the layers after it as they are: one layer
    /// stack, the clipped ReLU of both accumulators, no PSQT columns (the thesis's shape among
    /// others). Its training step then needs no [`transform`] and takes the gradient of those
    /// outputs directly.
    pub fn hands_on_as_is(&self) -> bool {
        let arch = &self.shape.arch;
        arch.stacks == 1 && arch.ft_output == FtOutput::ClippedRelu && arch.psqt_buckets == 0
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

    /// How training steps run ([`Execution::for_device`] of the parameters' device).
    pub fn execution(&self) -> Execution {
        self.execution
    }

    /// Runs training steps the way given: [`Execution::Autograd`] runs on any device, so the
    /// path a GPU takes can be run, and tested, on the CPU ([`Execution::CpuKernels`] needs the
    /// CPU).
    pub fn set_execution(&mut self, execution: Execution) {
        self.execution = execution;
    }

    /// Sets every PSQT bucket's weights to `values` (one per input feature, in score units):
    /// nnue-pytorch's `_init_psqt`, which starts the PSQT term as the material balance.
    pub fn init_psqt(&mut self, values: &[f64]) {
        let p = self.shape.arch.psqt_buckets as i64;
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
        let (l1, cols) = (self.shape.l1 as i64, w1_columns(&self.shape) as i64);
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
    /// Where the first layer's outputs are not handed on as they are
    /// ([`hands_on_as_is`](Self::hands_on_as_is)), what it hands on (the pairwise products, or
    /// both clipped accumulators without the PSQT columns) is also made outside autograd,
    /// already grouped by layer stack ([`transform`]), one leaf per stack: libtorch's narrow,
    /// product, concatenation and index backward passes over `[B, 2·L1]` tensors otherwise take
    /// a third of the step.
    pub fn forward_train(&self, input: &SparseInput) -> ModelForward {
        if self.execution == Execution::Autograd {
            return ModelForward {
                out: self.forward(input),
                leaves: None,
            };
        }
        let x = tch::no_grad(|| first_layer(self.w1(), self.b1(), input));
        if self.hands_on_as_is() {
            let x = x.set_requires_grad(true);
            return ModelForward {
                out: self.head(&x, input),
                leaves: Some(Leaves::Activations(x)),
            };
        }
        let order = StackOrder::new(&self.shape.arch, &input.pieces);
        let shape = Transform {
            l1: self.shape.l1,
            cols: w1_columns(&self.shape),
            psqt: self.shape.arch.psqt_buckets,
            product: self.product(),
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
            self.shape.arch.psqt_buckets as i64,
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
        ModelForward {
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
    pub fn gradients(&self, forward: &ModelForward, input: &SparseInput) -> Gradients {
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
                    product: self.product(),
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
        let (l1, cols) = (self.shape.l1 as i64, w1_columns(&self.shape) as i64);
        let x = x.view([len, 2, cols]);
        let out = self.by_stack(&self.ft_output(&x), input, |x, s| self.stack(x, s).0);
        let out = match self.shape.arch.psqt_buckets {
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
            .map(|&n| self.shape.arch.psqt_bucket_of(u32::from(n)) as i64)
            .collect();
        let bucket = Tensor::from_slice(&bucket)
            .view([len, 1])
            .to_device(psqt.device());
        diff.gather(1, &bucket, false).view([len]) * 0.5
    }

    /// What the first layer hands to the hidden layers, from its outputs `x` (`[B, 2, L1 + P]`):
    /// both clipped accumulators (`[B, 2·L1]`), or the pairwise products of each one's halves
    /// times 127/128 (`[B, L1]`, nnue-pytorch's factor for Stockfish's `>> 7`).
    pub(crate) fn ft_output(&self, x: &Tensor) -> Tensor {
        let (len, l1) = (x.size()[0], self.shape.l1 as i64);
        // Without PSQT columns the outputs are the accumulators (no narrowing, whose backward
        // would allocate and copy a `[B, 2, L1]` gradient).
        let acc = match x.size()[2] == l1 {
            true => x.shallow_clone(),
            false => x.narrow(2, 0, l1),
        };
        match self.shape.arch.ft_output {
            FtOutput::ClippedRelu => acc.reshape([len, 2 * l1]),
            FtOutput::Pairwise | FtOutput::Pairwise255 => {
                let half = l1 / 2;
                (acc.narrow(2, 0, half) * acc.narrow(2, half, half)).reshape([len, l1])
                    * self.scales.product
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
        if self.shape.arch.stacks == 1 {
            return f(x, Stacks::One(0));
        }
        if self.execution == Execution::Autograd {
            let stack = Tensor::from_slice(&stack_of_each(&self.shape.arch, &input.pieces));
            let stack = stack.to_device(x.device());
            return f(x, Stacks::PerRow(&stack));
        }
        let order = StackOrder::new(&self.shape.arch, &input.pieces);
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
            Stacks::One(_) if self.shape.arch.stacks == 1 => h.linear(w, Some(b)),
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
                    .view([-1, self.shape.arch.stacks as i64, outputs]);
                let at = stack.view([-1, 1, 1]).expand([-1, 1, outputs], false);
                all.gather(1, &at, false).view([-1, outputs])
            }
        }
    }

    /// The layer stacks `stacks` on the rows of `x` (what the first layer hands on): the output
    /// `[rows]` (the skip term added) and the first hidden layer's activations.
    fn stack(&self, x: &Tensor, stacks: Stacks) -> (Tensor, Tensor) {
        let plan = &self.plan;
        let mut h = x.shallow_clone();
        let mut skip = None;
        let mut every = Vec::with_capacity(plan.hidden.len());
        for (i, step) in plan.hidden.iter().enumerate() {
            let y = self.stack_layer(&h, i, step.outputs as i64, stacks);
            if i == 0 {
                skip = skip_value(plan, &y, self.scales.skip_difference);
            }
            h = activate(step.activation, &y.narrow(1, 0, step.width as i64));
            every.push(h.shallow_clone());
        }
        let first = every[0].shallow_clone();
        let h = read_by_output(plan, &every);
        let out = self
            .stack_layer(&h, plan.hidden.len(), 1, stacks)
            .view([-1]);
        let out = match skip {
            Some(s) => out + s,
            None => out,
        };
        (out, first)
    }

    /// The first hidden layer's activations `[B, width]` (each position through its own stack)
    /// of the first layer's outputs `x` (as [`activations`](Self::activations) gives them) of
    /// the positions of `input`.
    pub fn hidden(&self, x: &Tensor, input: &SparseInput) -> Tensor {
        let len = input.len as i64;
        let x = x.view([len, 2, w1_columns(&self.shape) as i64]);
        self.by_stack(&self.ft_output(&x), input, |x, s| self.stack(x, s).1)
    }

    /// Clips every parameter to the range its quantized form can hold (after each optimizer
    /// step, [`ArchScales`]): each hidden layer's weights to ±127 over its weight scale, the
    /// output weights to the output rule's range, the first layer to the `i16` range (its
    /// [`narrow_rows`](Self::narrow_rows) to ±127 as `i8`).
    pub fn clip(&mut self) {
        let l1 = self.shape.l1 as i64;
        let layers = self.shape.arch.hidden.len() + 1;
        let (max_l1, max_narrow) = (
            self.scales.max_l1_weight(),
            self.scales.max_narrow_l1_weight(),
        );
        let maxima: Vec<(f64, f64)> = (0..layers).map(|i| self.scales.layer_max(i)).collect();
        let narrow_rows = self.narrow_rows.clone();
        tch::no_grad(|| {
            let w1 = &mut self.params[0];
            let _ = w1.clamp_(-max_l1, max_l1);
            for &(start, len) in &narrow_rows {
                let _ = w1
                    .narrow(0, start, len)
                    .narrow(1, 0, l1)
                    .clamp_(-max_narrow, max_narrow);
            }
            let _ = self.params[1].clamp_(-max_l1, max_l1);
            for (i, &(max_w, max_b)) in maxima.iter().enumerate() {
                let _ = self.params[2 + 2 * i].clamp_(-max_w, max_w);
                let _ = self.params[3 + 2 * i].clamp_(-max_b, max_b);
            }
        });
    }

    /// The pairwise product's float factor, where the first layer hands on products.
    fn product(&self) -> Option<f32> {
        self.shape
            .arch
            .ft_output
            .is_pairwise()
            .then_some(self.scales.product as f32)
    }

    /// The float scales of this model's shape.
    pub fn scales(&self) -> &ArchScales {
        &self.scales
    }

    /// The walk over the layers after the first ([`Arch::plan`] at the model's L1).
    pub fn plan(&self) -> &Plan {
        &self.plan
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

/// A hidden layer's activation in float (the same for every shift, see [`ArchScales`]): the
/// clipped ReLU `clamp(y, 0, 1)`, or `[clamp(y² · 127/128, 0, 1) ‖ clamp(y, 0, 1)]`.
pub fn activate(activation: Activation, y: &Tensor) -> Tensor {
    match activation {
        Activation::ClippedRelu => y.clamp(0.0, 1.0),
        Activation::SqrClippedRelu => {
            Tensor::cat(&[y.square() * PRODUCT_SCALE, y.shallow_clone()], 1).clamp(0.0, 1.0)
        }
    }
}
