//! Adam, written out so that its whole state (moments and step count) is plain tensors that a
//! checkpoint saves and restores exactly. Same update as PyTorch's `torch.optim.Adam` without
//! weight decay:
//!
//! ```text
//! m ← β1·m + (1 − β1)·g        v ← β2·v + (1 − β2)·g²
//! p ← p − lr / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)
//! ```
//!
//! With a weight decay λ it is AdamW (PyTorch's `torch.optim.AdamW`, bullet's default optimizer
//! with λ = 0.01): each parameter first shrinks by `p ← p · (1 − lr·λ)`, decoupled from the
//! moments, then takes Adam's step.
//!
//! With [`AdamConfig::ranger`] it is nnue-pytorch's default optimizer, RangerLite as its
//! `rangerlite` mode runs it (`model/optimizers/ranger_lite.py` and `rangerlite_wrapper.py` at
//! 9f72946: positive-negative momentum with `pnm_momentum` 1, lookahead every 5 steps with
//! α 0.5, no norm loss, no weight decay, ε 1e-7). Two first moments take turns, step t updating
//! the one of its parity with β1²; the step uses both:
//!
//! ```text
//! v ← β2·v + (1 − β2)·g²                       m_t ← β1²·m_t + (1 − β1²)·g   (m_t: m if t odd, n if even)
//! p ← p − lr / (1 − β1^(2⌈t/2⌉)) · (2·m_t − m_other) / √5 / (√v / √(1 − β2^t) + ε)
//! every 5th step: p ← ½·p + ½·slow, slow ← p
//! ```
//!
//! Validation and export use the slow weights, as nnue-pytorch's `eval()` swaps them in.

use tch::Tensor;

use crate::model::{Gradients, dense_rows};

/// The learning-rate factor of each of `params` parameters (in the order of
/// [`crate::model::param_names`]) of a network with first-layer width `l1`: 1, except for the
/// first hidden layer's weights W2, which learn at
/// `min(1, width / l1)` (`width`: [`crate::train::settings::TrainSettings::hidden_lr_width`];
/// `None`, the rule of runs checkpointed before it existed: 1).
///
/// Why: Adam moves every weight by about `lr` per step whatever its gradient's size, and a
/// hidden unit's inputs (clipped first-layer activations, 2·L1 of them, about 0.5 each) are all
/// ≥ 0, so its weight gradients share one sign and a step shifts its pre-activation by up to
/// `lr · Σx ≈ lr · L1`: 0.25 at L1 = 512, 1.0 at L1 = 2048, the whole clipped range. The first
/// steps then push hidden units below 0 (dead) or above 1 (saturated) on every position, where
/// no gradient reaches them again; measured on Stockfish-labelled data (nnue-pytorch's
/// `small.binpack`, lr 5e-4, batches of 16384), after one epoch 59 % of the 32 hidden units were
/// dead at L1 = 512, 91 % at 1024, and at 2048 all 32 were dead (84 %) or saturated (16 %): a
/// constant network. Scaling W2's rate by 1/L1 (as µP does for Adam) keeps the shift per step
/// what it is at L1 = `width` for every wider network.
pub fn layer_rates(params: usize, l1: usize, width: Option<u64>) -> Vec<f64> {
    let w2 = width.map_or(1.0, |w| (w as f64 / l1.max(1) as f64).min(1.0));
    (0..params).map(|i| if i == 2 { w2 } else { 1.0 }).collect()
}

/// Adam's hyperparameters (PyTorch's defaults for β1, β2, ε).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdamConfig {
    /// β1.
    pub beta1: f64,
    /// β2.
    pub beta2: f64,
    /// ε.
    pub eps: f64,
    /// Sparse Adam for the first layer (PyTorch's `SparseAdam`, TensorFlow's `LazyAdam`): only
    /// the rows of W1 that a batch's indices touch are updated (their moments and weights), so
    /// a step costs the touched rows, not N. Plain Adam also moves the untouched rows (their
    /// moments decay and keep pushing them). Off, it is not written, so the stored form (and
    /// the experiment cache's keys) of plain Adam stay what they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sparse_first_layer: bool,
    /// AdamW's decoupled weight decay λ (0: plain Adam, and not written, as above). Every
    /// parameter decays every step, the rows sparse Adam leaves alone included.
    #[serde(default, skip_serializing_if = "crate::checked::is_zero")]
    pub weight_decay: f64,
    /// The largest norm of a step's whole gradient (all parameters as one vector): a larger one
    /// is scaled down to it (PyTorch's `clip_grad_norm_`, nnue-pytorch's `gradient_clip_val`
    /// 2.0). `None`: no clipping (not written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_grad_norm: Option<f64>,
    /// nnue-pytorch's RangerLite instead of Adam (module docs; off is not written).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ranger: bool,
}

/// RangerLite's `pnm_momentum` (nnue-pytorch's default, Ranger21's value).
const PNM_MOMENTUM: f64 = 1.0;
/// RangerLite's lookahead merges every this many steps.
const LOOKAHEAD_STEPS: u64 = 5;
/// RangerLite's lookahead blend α: `p ← α·p + (1 − α)·slow`.
const LOOKAHEAD_ALPHA: f64 = 0.5;
/// RangerLite's ε.
pub const RANGER_EPS: f64 = 1e-7;

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            sparse_first_layer: false,
            weight_decay: 0.0,
            max_grad_norm: None,
            ranger: false,
        }
    }
}

/// Adam's state for a list of parameters.
#[derive(Debug)]
pub struct Adam {
    /// Hyperparameters.
    pub config: AdamConfig,
    /// Steps taken (t).
    pub step: u64,
    /// First moments, one per parameter.
    pub m: Vec<Tensor>,
    /// Second moments, one per parameter.
    pub v: Vec<Tensor>,
    /// RangerLite's second first moment (of even steps), one per parameter; empty for Adam.
    pub n: Vec<Tensor>,
    /// RangerLite's slow (lookahead) weights, one per parameter; empty for Adam.
    pub slow: Vec<Tensor>,
    /// The stochastic weight average of the weights validated at the end of each epoch since
    /// the run's `swa_from` ([`Adam::average_in`]); empty before it, or without it.
    pub average: Vec<Tensor>,
}

impl Adam {
    /// Fresh state (zero moments; RangerLite's slow weights are the parameters) for `params`.
    pub fn new(config: AdamConfig, params: &[&Tensor]) -> Adam {
        let ranger = |f: &dyn Fn(&Tensor) -> Tensor| match config.ranger {
            true => params.iter().map(|p| f(p)).collect(),
            false => Vec::new(),
        };
        Adam {
            config,
            step: 0,
            m: params.iter().map(|p| p.zeros_like()).collect(),
            v: params.iter().map(|p| p.zeros_like()).collect(),
            n: ranger(&|p| p.zeros_like()),
            slow: ranger(&|p| tch::no_grad(|| p.detach().copy())),
            average: Vec::new(),
        }
    }

    /// Adds `params` (the weights an epoch ends with, as validated) to the stochastic weight
    /// average of `before` earlier epochs' weights, with equal weights: PyTorch's
    /// `AveragedModel.update_parameters`, `avg ← avg + (p − avg) / (n + 1)`, which
    /// nnue-pytorch's `ExplicitSWA` (`trainer/callbacks.py` at 9f72946) calls at the end of each
    /// epoch from `swa_start_epoch`.
    pub fn average_in(&mut self, params: &[&Tensor], before: u64) {
        tch::no_grad(|| {
            if before == 0 || self.average.is_empty() {
                self.average = params.iter().map(|p| p.detach().copy()).collect();
                return;
            }
            for (avg, p) in self.average.iter_mut().zip(params) {
                let _ = avg.g_add_(&((*p - &*avg) / (before + 1) as f64));
            }
        });
    }

    /// Swaps the parameters with the stochastic weight average (for validation and export, and
    /// back); nothing without one.
    pub fn swap_average(&mut self, params: &mut [&mut Tensor]) {
        swap_tensors(params, &mut self.average);
    }

    /// Swaps the parameters with RangerLite's slow weights (for validation and export, and
    /// back); nothing for Adam.
    pub fn swap_slow(&mut self, params: &mut [&mut Tensor]) {
        swap_tensors(params, &mut self.slow);
    }

    /// One update of `params` with their gradients `grads` (same order) and learning rate `lr`.
    pub fn step(&mut self, params: &mut [&mut Tensor], grads: &[Tensor], lr: f64) {
        let scales = vec![1.0; grads.len()];
        self.step_scaled(params, grads, lr, &scales);
    }

    /// One update of `params` (in the order of [`crate::model::param_names`]) with a training
    /// step's gradients, parameter `i` at the learning rate `lr · scales[i]`. A row-compressed
    /// W1 gradient updates every row (the others with a zero gradient, exactly as the dense
    /// gradient would) or, with [`AdamConfig::sparse_first_layer`], the touched rows only.
    pub fn step_gradients(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &Gradients,
        lr: f64,
        scales: &[f64],
    ) {
        if self.config.ranger {
            let w1 = grads.dense_w1(params[0].size()[0] as usize);
            let tensors: Vec<&Tensor> = std::iter::once(&w1).chain(&grads.tensors[1..]).collect();
            self.ranger_step(params, &tensors, lr, scales);
            return;
        }
        let w1_rows = match (&grads.w1_rows, &grads.w1_touched) {
            (Some(rows), _) => Some(W1Rows::Listed(rows)),
            (None, Some(rows)) if self.config.sparse_first_layer => Some(W1Rows::Touched(rows)),
            _ => None,
        };
        self.step_with(params, &grads.tensors, w1_rows, lr, scales);
    }

    /// RangerLite's update (module docs) of `params` with dense gradients, with libtorch's
    /// operations on any device.
    fn ranger_step(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &[&Tensor],
        lr: f64,
        scales: &[f64],
    ) {
        self.step += 1;
        let c = self.config;
        let t = self.step;
        let bc2_sqrt = (1.0 - c.beta2.powi(t as i32)).sqrt();
        let effective = t.div_ceil(2) * 2;
        let bc1 = 1.0 - c.beta1.powi(effective as i32);
        let noise_norm = ((1.0 + PNM_MOMENTUM).powi(2) + PNM_MOMENTUM.powi(2)).sqrt();
        let beta1_sq = c.beta1 * c.beta1;
        tch::no_grad(|| {
            for (i, (p, g)) in params.iter_mut().zip(grads).enumerate() {
                let v = &mut self.v[i];
                let _ = v.g_mul_scalar_(c.beta2);
                let _ = v.addcmul_(&(*g * (1.0 - c.beta2)), g);
                let denom = v.sqrt() / bc2_sqrt + c.eps;
                let (own, other) = match t % 2 {
                    1 => (&mut self.m[i], &self.n[i]),
                    _ => (&mut self.n[i], &self.m[i]),
                };
                let _ = own.g_mul_scalar_(beta1_sq);
                let _ = own.g_add_(&(*g * (1.0 - beta1_sq)));
                let pnm = (&*own * (1.0 + PNM_MOMENTUM) - other * PNM_MOMENTUM) / noise_norm;
                let _ = p.addcdiv_(&(pnm * (-lr * scales[i] / bc1)), &denom);
            }
            if t.is_multiple_of(LOOKAHEAD_STEPS) {
                for (p, slow) in params.iter_mut().zip(&mut self.slow) {
                    let _ = p.g_mul_scalar_(LOOKAHEAD_ALPHA);
                    let _ = p.g_add_(&(&*slow * (1.0 - LOOKAHEAD_ALPHA)));
                    slow.copy_(p);
                }
            }
        });
    }

    /// [`step`](Self::step) with parameter `i` at the learning rate `lr · scales[i]`.
    pub fn step_scaled(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &[Tensor],
        lr: f64,
        scales: &[f64],
    ) {
        if self.config.ranger {
            let grads: Vec<&Tensor> = grads.iter().collect();
            self.ranger_step(params, &grads, lr, scales);
            return;
        }
        self.step_with(params, grads, None, lr, scales);
    }

    /// The update; `w1_rows`, if given, says which rows of parameter 0 `grads[0]` holds, or which
    /// rows sparse Adam updates.
    fn step_with(
        &mut self,
        params: &mut [&mut Tensor],
        grads: &[Tensor],
        w1_rows: Option<W1Rows>,
        lr: f64,
        scales: &[f64],
    ) {
        self.step += 1;
        let c = self.config;
        let t = self.step as i32;
        let bc1 = 1.0 - c.beta1.powi(t);
        let bc2 = 1.0 - c.beta2.powi(t);
        let step_size = lr / bc1;
        let bc2_sqrt = bc2.sqrt();
        tch::no_grad(|| {
            for (i, ((((p, m), v), g), scale)) in params
                .iter_mut()
                .zip(&mut self.m)
                .zip(&mut self.v)
                .zip(grads)
                .zip(scales)
                .enumerate()
            {
                if c.weight_decay > 0.0 {
                    let _ = p.g_mul_scalar_(1.0 - lr * scale * c.weight_decay);
                }
                let k = FusedConstants::new(c, -step_size * scale, bc2_sqrt);
                let dense;
                let g = match w1_rows.filter(|_| i == 0) {
                    Some(W1Rows::Touched(rows)) => {
                        touched_rows_step(p, m, v, rows, g, c, (-step_size * scale, bc2_sqrt));
                        continue;
                    }
                    Some(W1Rows::Listed(rows)) => {
                        if rows_step(p, m, v, rows, g, k, !c.sparse_first_layer) {
                            continue;
                        }
                        // Not a layout the row kernel takes (a GPU tensor): expand it.
                        dense = dense_rows(g, rows, p.size()[0] as usize);
                        &dense
                    }
                    None => g,
                };
                if fused_step(p, m, v, g, k) {
                    continue;
                }
                libtorch_step(p, m, v, g, c, -step_size * scale, bc2_sqrt);
            }
        });
    }
}

/// Swaps each parameter with the tensor of `others` in its place (none where `others` is
/// empty): the tensors themselves, so twice is nothing.
fn swap_tensors(params: &mut [&mut Tensor], others: &mut [Tensor]) {
    for (p, o) in params.iter_mut().zip(others) {
        std::mem::swap(&mut **p, o);
    }
}

/// Which rows of W1 a step's gradient concerns.
#[derive(Clone, Copy)]
enum W1Rows<'a> {
    /// The rows of a row-compressed gradient (CPU), ascending.
    Listed(&'a [u32]),
    /// The rows sparse Adam updates from a dense gradient: sorted, distinct, on its device.
    Touched(&'a Tensor),
}

/// Adam's update with libtorch's operations, in place, on any device (`step` =
/// `−lr·scale / (1 − β1^t)`): where the fused CPU kernels do not apply.
fn libtorch_step(
    p: &mut Tensor,
    m: &mut Tensor,
    v: &mut Tensor,
    g: &Tensor,
    c: AdamConfig,
    step: f64,
    bc2_sqrt: f64,
) {
    let _ = m.g_mul_scalar_(c.beta1);
    let _ = m.g_add_(&(g * (1.0 - c.beta1)));
    let _ = v.g_mul_scalar_(c.beta2);
    let _ = v.addcmul_(&(g * (1.0 - c.beta2)), g);
    let denom = v.sqrt() / bc2_sqrt + c.eps;
    let _ = p.addcdiv_(&(&*m * step), &denom);
}

/// Sparse Adam's update of the rows `rows` of `p` from the dense gradient `g`, on any device:
/// [`libtorch_step`] on the gathered rows, scattered back (`step` and `bc2_sqrt` as there).
fn touched_rows_step(
    p: &mut Tensor,
    m: &mut Tensor,
    v: &mut Tensor,
    rows: &Tensor,
    g: &Tensor,
    c: AdamConfig,
    (step, bc2_sqrt): (f64, f64),
) {
    let g = g.index_select(0, rows);
    let mut mr = m.index_select(0, rows);
    let mut vr = v.index_select(0, rows);
    let mut pr = p.index_select(0, rows);
    libtorch_step(&mut pr, &mut mr, &mut vr, &g, c, step, bc2_sqrt);
    let _ = m.index_copy_(0, rows, &mr);
    let _ = v.index_copy_(0, rows, &vr);
    let _ = p.index_copy_(0, rows, &pr);
}

/// Parameters smaller than this take libtorch's path (the threads would cost more than they save).
const FUSED_MIN: usize = 1 << 14;

/// Adam's update of one CPU `f32` parameter in one pass over its four arrays, split among the
/// libtorch threads, instead of libtorch's eight element-wise operations and their temporaries
/// (for first layers of 20k–100k inputs the step otherwise dominates training: libtorch's
/// vectorised square root alone took a fifth of a `halfka_v2_hm` training step). The arithmetic
/// and its order are libtorch's except for the square root, which is the correctly rounded one
/// (libtorch's differs from it by an ulp now and then), so the result agrees with libtorch's to
/// an ulp or so (a test checks it). Returns false, touching nothing, for tensors it does not
/// handle (GPU, small, other kinds).
fn fused_step(
    p: &mut Tensor,
    m: &mut Tensor,
    v: &mut Tensor,
    g: &Tensor,
    k: FusedConstants,
) -> bool {
    let n = p.numel();
    if n < FUSED_MIN
        || ![&*p, &*m, &*v, g]
            .iter()
            .all(|t| usable(t) && t.numel() == n)
    {
        return false;
    }
    let threads = (tch::get_num_threads().max(1) as usize)
        .min(n / FUSED_MIN)
        .max(1);
    let chunk = n.div_ceil(threads);
    // SAFETY: distinct contiguous CPU f32 tensors of n values (p, m and v are separate
    // allocations of the model and the optimizer, g a fresh gradient), alive for the call, and
    // nothing else reads or writes them meanwhile.
    unsafe {
        let (p, m, v, g) = (f32_mut(p, n), f32_mut(m, n), f32_mut(v, n), f32_ref(g, n));
        std::thread::scope(|scope| {
            for (((p, m), v), g) in p
                .chunks_mut(chunk)
                .zip(m.chunks_mut(chunk))
                .zip(v.chunks_mut(chunk))
                .zip(g.chunks(chunk))
            {
                scope.spawn(move || k.apply(p, m, v, g));
            }
        });
    }
    true
}

/// Whether the fused kernels can take `t`: a contiguous CPU `f32` tensor.
fn usable(t: &Tensor) -> bool {
    t.device() == tch::Device::Cpu && t.kind() == tch::Kind::Float && t.is_contiguous()
}

/// Adam's update of a row-compressed gradient: `g` holds the gradients of `rows` (ascending) of
/// `p`, a `[n, l1]` CPU `f32` parameter. With `all_rows` every row is updated, the others with
/// a zero gradient (the arithmetic of [`fused_step`] on the dense gradient, to the bit);
/// without, only `rows` (sparse Adam). Returns false, touching nothing, for tensors it does not
/// handle.
fn rows_step(
    p: &mut Tensor,
    m: &mut Tensor,
    v: &mut Tensor,
    rows: &[u32],
    g: &Tensor,
    k: FusedConstants,
    all_rows: bool,
) -> bool {
    let size = p.size();
    let [n, l1] = size[..] else {
        return false;
    };
    let (n, l1) = (n as usize, l1 as usize);
    let shapes_fit = m.size() == size
        && v.size() == size
        && g.size() == [rows.len() as i64, l1 as i64]
        && rows.last().is_none_or(|&r| (r as usize) < n);
    if !shapes_fit || ![&*p, &*m, &*v, g].iter().all(|t| usable(t)) {
        return false;
    }
    let threads = (tch::get_num_threads().max(1) as usize).max(1);
    let zeros = vec![0f32; l1];
    // SAFETY: distinct contiguous CPU f32 tensors of the sizes checked above, alive for the
    // call, and nothing else reads or writes them meanwhile.
    unsafe {
        let (p, m, v) = (f32_mut(p, n * l1), f32_mut(m, n * l1), f32_mut(v, n * l1));
        let g = f32_ref(g, rows.len() * l1);
        let zeros = &zeros;
        if all_rows {
            // Ranges of rows; each finds its first touched row by binary search.
            let per = n.div_ceil(threads).max(1);
            std::thread::scope(|scope| {
                for (t, ((p, m), v)) in p
                    .chunks_mut(per * l1)
                    .zip(m.chunks_mut(per * l1))
                    .zip(v.chunks_mut(per * l1))
                    .enumerate()
                {
                    let lo = t * per;
                    scope.spawn(move || {
                        let mut next = rows.partition_point(|&r| (r as usize) < lo);
                        for (local, ((p, m), v)) in p
                            .chunks_mut(l1)
                            .zip(m.chunks_mut(l1))
                            .zip(v.chunks_mut(l1))
                            .enumerate()
                        {
                            let row = lo + local;
                            let grad = if rows.get(next).is_some_and(|&r| r as usize == row) {
                                next += 1;
                                &g[(next - 1) * l1..next * l1]
                            } else {
                                zeros.as_slice()
                            };
                            k.apply(p, m, v, grad);
                        }
                    });
                }
            });
        } else {
            // The touched rows only, split among the threads.
            let per = rows.len().div_ceil(threads).max(1);
            let (p, m, v) = (
                SharedRows(p.as_mut_ptr()),
                SharedRows(m.as_mut_ptr()),
                SharedRows(v.as_mut_ptr()),
            );
            std::thread::scope(|scope| {
                for (chunk, grads) in rows.chunks(per).zip(g.chunks(per * l1)) {
                    let (p, m, v) = (&p, &m, &v);
                    scope.spawn(move || {
                        for (&row, grad) in chunk.iter().zip(grads.chunks(l1)) {
                            let at = row as usize * l1;
                            // SAFETY: rows are distinct, so no two threads touch one row.
                            let (p, m, v) = (p.row(at, l1), m.row(at, l1), v.row(at, l1));
                            k.apply(p, m, v, grad);
                        }
                    });
                }
            });
        }
    }
    true
}

/// A parameter's storage shared by threads that update distinct rows of it.
struct SharedRows(*mut f32);

// SAFETY: only used by `rows_step`, whose threads touch disjoint rows.
unsafe impl Sync for SharedRows {}

impl SharedRows {
    /// The `len` values from `at`.
    ///
    /// # Safety
    /// In bounds, and no other live reference to them.
    #[allow(clippy::mut_from_ref)]
    unsafe fn row(&self, at: usize, len: usize) -> &mut [f32] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(at), len) }
    }
}

/// # Safety
/// `t` is a contiguous CPU f32 tensor of `n` values that nothing else accesses meanwhile.
unsafe fn f32_mut(t: &mut Tensor, n: usize) -> &mut [f32] {
    unsafe { std::slice::from_raw_parts_mut(t.data_ptr() as *mut f32, n) }
}

/// # Safety
/// `t` is a contiguous CPU f32 tensor of `n` values that nothing writes meanwhile.
unsafe fn f32_ref(t: &Tensor, n: usize) -> &[f32] {
    unsafe { std::slice::from_raw_parts(t.data_ptr() as *const f32, n) }
}

/// The scalars of one fused step, rounded to f32 as libtorch rounds them.
#[derive(Clone, Copy)]
struct FusedConstants {
    beta1: f32,
    one_minus_beta1: f32,
    beta2: f32,
    one_minus_beta2: f32,
    bc2_sqrt: f32,
    eps: f32,
    neg_step: f32,
}

impl FusedConstants {
    /// The scalars of a step with learning rate `-neg_step` (bias correction included) and
    /// `√(1 − β2^t)` = `bc2_sqrt`: libtorch computes float tensors' scalar operations in f32,
    /// the scalars rounded first.
    fn new(c: AdamConfig, neg_step: f64, bc2_sqrt: f64) -> Self {
        FusedConstants {
            beta1: c.beta1 as f32,
            one_minus_beta1: (1.0 - c.beta1) as f32,
            beta2: c.beta2 as f32,
            one_minus_beta2: (1.0 - c.beta2) as f32,
            bc2_sqrt: bc2_sqrt as f32,
            eps: c.eps as f32,
            neg_step: neg_step as f32,
        }
    }

    /// The update of one parameter's elements.
    fn apply(self, p: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { self.apply_fma(p, m, v, g) };
        }
        self.apply_portable(p, m, v, g);
    }

    /// [`apply`](Self::apply) with the hardware's fused multiply-add and vector square root (the
    /// same results: `mul_add` and `sqrt` are exact either way, only faster here).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn apply_fma(self, p: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32]) {
        self.apply_portable(p, m, v, g);
    }

    /// `m ← m·β1 + g·(1−β1)` (`mul_`, `add_`), `v ← v·β2 + (g·(1−β2))·g` (`mul_`, then
    /// `addcmul_`, which libtorch computes as a fused multiply-add) and
    /// `p ← p + (m·(−step)) / (√v / √bc2 + ε)` (`sqrt`, `div`, `add`, `mul`, `addcdiv_`).
    #[inline(always)]
    fn apply_portable(self, p: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32]) {
        for (((p, m), v), &g) in p.iter_mut().zip(m).zip(v).zip(g) {
            *m = *m * self.beta1 + g * self.one_minus_beta1;
            *v = (g * self.one_minus_beta2).mul_add(g, *v * self.beta2);
            let denom = v.sqrt() / self.bc2_sqrt + self.eps;
            *p += (*m * self.neg_step) / denom;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wide_hidden_layers_learn_slower() {
        assert_eq!(
            layer_rates(6, 2048, Some(128)),
            [1.0, 1.0, 0.0625, 1.0, 1.0, 1.0]
        );
        assert_eq!(layer_rates(6, 128, Some(128)), [1.0; 6]);
        assert_eq!(layer_rates(6, 64, Some(128)), [1.0; 6]);
        assert_eq!(
            layer_rates(6, 2048, None),
            [1.0; 6],
            "checkpoints from before the rule"
        );
    }

    #[test]
    fn weight_decay_is_adamws_decoupled_shrink() {
        // torch.optim.AdamW(lr=0.1, weight_decay=0.01) on p = 1 with the gradient 0.5 twice:
        // p ← p·(1 − 0.001), then Adam's bias-corrected step of 0.1·m̂/(√v̂ + ε) = 0.1·0.5/0.5.
        let config = AdamConfig {
            weight_decay: 0.01,
            ..AdamConfig::default()
        };
        let mut p = Tensor::from_slice(&[1.0f64]);
        let mut adam = Adam::new(config, &[&p]);
        let g = Tensor::from_slice(&[0.5f64]);
        adam.step(&mut [&mut p], std::slice::from_ref(&g), 0.1);
        let first = p.double_value(&[0]);
        assert!(
            (first - (0.999 - 0.1 * 0.5 / (0.5 + 1e-8))).abs() < 1e-12,
            "{first}"
        );
        adam.step(&mut [&mut p], std::slice::from_ref(&g), 0.1);
        let second = p.double_value(&[0]);
        assert!(
            (second - (first * 0.999 - 0.1 * 0.5 / (0.5 + 1e-8))).abs() < 1e-12,
            "{second}"
        );
        // Without decay the same steps are Adam's: 1 − 0.1 − 0.1.
        let mut q = Tensor::from_slice(&[1.0f64]);
        let mut adam = Adam::new(AdamConfig::default(), &[&q]);
        adam.step(&mut [&mut q], std::slice::from_ref(&g), 0.1);
        adam.step(&mut [&mut q], std::slice::from_ref(&g), 0.1);
        assert!((q.double_value(&[0]) - 0.8).abs() < 1e-7);
    }

    #[test]
    fn the_weight_average_is_averagedmodels_equal_average() {
        // AveragedModel.update_parameters with the default avg_fn: after p = 1, 2, 6 the average
        // is (1 + 2 + 6) / 3 = 3, one update at a time.
        let mut adam = Adam::new(AdamConfig::default(), &[]);
        for (before, value) in [(0u64, 1.0f64), (1, 2.0), (2, 6.0)] {
            let p = Tensor::from_slice(&[value]);
            adam.average_in(&[&p], before);
        }
        assert!((adam.average[0].double_value(&[0]) - 3.0).abs() < 1e-12);
        // Swapped in and out.
        let mut p = Tensor::from_slice(&[5.0f64]);
        adam.swap_average(&mut [&mut p]);
        assert_eq!(p.double_value(&[0]), 3.0);
        adam.swap_average(&mut [&mut p]);
        assert_eq!(p.double_value(&[0]), 5.0);
    }

    #[test]
    fn ranger_is_rangerlites_update() {
        // RangerLite (lr 0.1, betas 0.9/0.999, eps 1e-7, pnm 1, lookahead 5 × 0.5) on p = 1
        // with the gradient 0.5 every step, worked out from ranger_lite.py's arithmetic.
        let config = AdamConfig {
            ranger: true,
            eps: RANGER_EPS,
            ..AdamConfig::default()
        };
        let mut p = Tensor::from_slice(&[1.0f64]);
        let mut adam = Adam::new(config, &[&p]);
        let g = Tensor::from_slice(&[0.5f64]);
        let (b1, b2, eps, lr) = (0.9f64, 0.999f64, 1e-7, 0.1);
        let (mut m, mut n, mut v, mut q, slow) = (0.0f64, 0.0f64, 0.0f64, 1.0f64, 1.0f64);
        for t in 1..=5u64 {
            adam.step(&mut [&mut p], std::slice::from_ref(&g), lr);
            v = b2 * v + (1.0 - b2) * 0.25;
            let denom = v.sqrt() / (1.0 - b2.powi(t as i32)).sqrt() + eps;
            let (own, other) = if t % 2 == 1 { (&mut m, n) } else { (&mut n, m) };
            *own = b1 * b1 * *own + (1.0 - b1 * b1) * 0.5;
            let pnm = (2.0 * *own - other) / 5f64.sqrt();
            let bc1 = 1.0 - b1.powi((t.div_ceil(2) * 2) as i32);
            q -= lr / bc1 * pnm / denom;
            if t == 5 {
                q = 0.5 * q + 0.5 * slow;
            }
            let got = p.double_value(&[0]);
            assert!((got - q).abs() < 1e-12, "step {t}: {got} vs {q}");
        }
        // After the merge the slow weights are the parameters; before it they were the start.
        assert!((adam.slow[0].double_value(&[0]) - q).abs() < 1e-12);
        let mut params = [&mut p];
        adam.swap_slow(&mut params);
        assert!((params[0].double_value(&[0]) - q).abs() < 1e-12);
    }

    #[test]
    fn the_fused_step_follows_libtorchs_to_an_ulp() {
        let n = 3 * FUSED_MIN + 17;
        let init = |seed: i64| {
            Tensor::randn([n as i64], (tch::Kind::Float, tch::Device::Cpu)) * (seed as f64)
        };
        tch::manual_seed(7);
        let p0 = init(1);
        let grads: Vec<Tensor> = (0..3).map(|_| init(1) * 1e-3).collect();
        let run = |fused: bool| {
            let mut p = p0.copy();
            let mut adam = Adam::new(AdamConfig::default(), &[&p]);
            for g in &grads {
                if fused {
                    adam.step_scaled(&mut [&mut p], std::slice::from_ref(g), 1e-3, &[0.5]);
                } else {
                    // libtorch's path: the same update with the fused one bypassed.
                    adam.step += 1;
                    let c = adam.config;
                    let t = adam.step as i32;
                    let (bc1, bc2) = (1.0 - c.beta1.powi(t), 1.0 - c.beta2.powi(t));
                    let (m, v) = (&mut adam.m[0], &mut adam.v[0]);
                    libtorch_step(&mut p, m, v, g, c, -1e-3 / bc1 * 0.5, bc2.sqrt());
                }
            }
            p
        };
        let (fused, plain) = (run(true), run(false));
        // The moments are libtorch's to the bit; the square root may differ by an ulp, and the
        // parameters then by about as much.
        let rel = ((&fused - &plain).abs() / (plain.abs() + 1e-12))
            .max()
            .double_value(&[]);
        assert!(rel < 1e-6, "relative difference {rel}");
        assert!(!fused.equal(&p0), "the parameters moved");
    }

    #[test]
    fn row_compressed_gradients_update_as_dense_ones_or_only_their_rows() {
        let (n, l1) = (300i64, 64i64);
        tch::manual_seed(11);
        let opts = (tch::Kind::Float, tch::Device::Cpu);
        let p0 = Tensor::randn([n, l1], opts);
        // Row 3 has a gradient at every step; rows 4, 100 and 299 only at the first.
        let touched: [Vec<u32>; 3] = [vec![3, 4, 100, 299], vec![3], vec![3, 200]];
        let steps: Vec<Gradients> = touched
            .iter()
            .map(|rows| Gradients {
                tensors: vec![
                    Tensor::randn([rows.len() as i64, l1], opts) * 1e-2,
                    Tensor::zeros([1], opts),
                    Tensor::zeros([1], opts),
                    Tensor::zeros([1], opts),
                    Tensor::zeros([1], opts),
                    Tensor::zeros([1], opts),
                ],
                w1_rows: Some(rows.clone()),
                w1_touched: None,
            })
            .collect();
        // The gradient W1 has off the CPU: dense, with the touched rows as a tensor.
        let dense_touched = |g: &Gradients| Gradients {
            tensors: [g.dense_w1(n as usize)]
                .into_iter()
                .chain(g.tensors[1..].iter().map(|t| t.shallow_clone()))
                .collect(),
            w1_rows: None,
            w1_touched: g.w1_rows.as_ref().map(|rows| {
                Tensor::from_slice(&rows.iter().map(|&r| i64::from(r)).collect::<Vec<_>>())
            }),
        };
        #[derive(Clone, Copy, PartialEq)]
        enum Form {
            Dense,
            Compressed,
            DenseTouched,
        }
        let run = |sparse: bool, form: Form| {
            let mut p = p0.copy();
            let config = AdamConfig {
                sparse_first_layer: sparse,
                ..AdamConfig::default()
            };
            let mut others: Vec<Tensor> = (0..5).map(|_| Tensor::zeros([1], opts)).collect();
            let mut adam = Adam::new(
                config,
                &[
                    &p, &others[0], &others[1], &others[2], &others[3], &others[4],
                ],
            );
            for g in &steps {
                let [o0, o1, o2, o3, o4] = &mut others[..] else {
                    unreachable!()
                };
                let mut params = [&mut p, o0, o1, o2, o3, o4];
                if form == Form::Compressed {
                    adam.step_gradients(&mut params, g, 1e-3, &[1.0; 6]);
                } else if form == Form::DenseTouched {
                    adam.step_gradients(&mut params, &dense_touched(g), 1e-3, &[1.0; 6]);
                } else {
                    let mut dense: Vec<Tensor> =
                        g.tensors.iter().map(|t| t.shallow_clone()).collect();
                    dense[0] = g.dense_w1(n as usize);
                    adam.step_scaled(&mut params, &dense, 1e-3, &[1.0; 6]);
                }
            }
            p
        };
        // Plain Adam: the compressed gradient gives the dense result to the bit.
        let (dense, compressed) = (run(false, Form::Dense), run(false, Form::Compressed));
        assert!(dense.equal(&compressed));
        // Plain Adam ignores the touched rows.
        assert!(dense.equal(&run(false, Form::DenseTouched)));
        // Sparse Adam: never-touched rows stay, as under plain Adam (their moments are zero);
        // a row touched at every step moves exactly as under plain Adam; a row whose gradient
        // stopped keeps moving under plain Adam (its moments) but not under sparse Adam.
        let sparse = run(true, Form::Compressed);
        let row = |t: &Tensor, r: i64| t.get(r);
        assert!(row(&sparse, 0).equal(&row(&p0, 0)) && row(&dense, 0).equal(&row(&p0, 0)));
        assert!(row(&sparse, 3).equal(&row(&dense, 3)));
        assert!(!row(&sparse, 4).equal(&row(&dense, 4)));
        assert!(
            !row(&sparse, 4).equal(&row(&p0, 4)),
            "moved at its own step"
        );
        // Sparse Adam on a dense gradient and its touched rows (the path off the CPU): the
        // same rows move, by the same amounts but for the square root's last bit.
        let on_device = run(true, Form::DenseTouched);
        for r in [0, 1, 4, 100, 199, 200, 298, 299] {
            let moved = |t: &Tensor| !row(t, r).equal(&row(&p0, r));
            assert_eq!(moved(&on_device), moved(&sparse), "row {r}");
        }
        let rel = ((&on_device - &sparse).abs() / (sparse.abs() + 1e-12))
            .max()
            .double_value(&[]);
        assert!(rel < 1e-6, "relative difference {rel}");
    }

    #[test]
    fn adam_follows_the_pytorch_update() {
        // One parameter x, loss (x − 3)²: the first step moves by exactly lr (m̂ / √v̂ = ±1).
        let mut x = Tensor::from_slice(&[0.0f32]).set_requires_grad(true);
        let mut adam = Adam::new(AdamConfig::default(), &[&x]);
        let loss = (&x - 3.0).square().sum(tch::Kind::Float);
        loss.backward();
        let g = x.grad().copy();
        x.zero_grad();
        adam.step(&mut [&mut x], &[g], 0.1);
        assert!((x.double_value(&[0]) - 0.1).abs() < 1e-6);
        // Many steps converge to the minimum.
        for _ in 0..500 {
            let loss = (&x - 3.0).square().sum(tch::Kind::Float);
            loss.backward();
            let g = x.grad().copy();
            x.zero_grad();
            adam.step(&mut [&mut x], &[g], 0.05);
        }
        assert!((x.double_value(&[0]) - 3.0).abs() < 0.05);
        assert_eq!(adam.step, 501);
    }
}
