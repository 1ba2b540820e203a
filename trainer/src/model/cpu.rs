//! The CPU's first layer, outside autograd: the sums of W1's rows, the clipped ReLU, what the
//! first layer hands to the layer stacks, and the hand-written gradients of W1 and b1, with
//! kernels compiled for AVX-512, AVX2 and the baseline.

use tch::{Device, Kind, Tensor};

use super::input::SparseInput;

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
    /// The pairwise product's float factor (else both clipped accumulators are handed on).
    pub product: Option<f32>,
}

impl Transform {
    /// Values per position handed on: L1 for the pairwise product, else 2·L1.
    pub fn width(&self) -> usize {
        if self.product.is_some() {
            self.l1
        } else {
            2 * self.l1
        }
    }
}

/// What the first layer hands to the hidden layers (CPU, `[B, width]`), from its outputs `x`
/// (`[2·B, L1 + P]` of [`first_layer`]), row r being position `order[r]`: both clipped
/// accumulators side to move's first, or each one's pairwise products
/// `x_j · x_{j+L1/2} · factor` (127/128, or 65025/65024 for the product clipped at 255).
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
        /// The pairwise product's factor, if the transform was one.
        product: Option<f32>,
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
/// being zero (see [`Gradients`](super::Gradients)).
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
        OutputGrad::Transformed { back, product, .. } => Some(TransformedGrad {
            rows: &rows,
            back,
            // SAFETY: as above.
            g_psqt: psqt_t.as_ref().map_or(&[], |t| unsafe { f32_slice(t) }),
            shape: Transform {
                l1,
                cols,
                psqt: psqt_t.as_ref().map_or(0, |t| t.size()[2] as usize),
                product: *product,
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

    #[inline(always)]
    fn transform_impl(dst: &mut [f32], order: &[i64], x: &[f32], t: &super::Transform) {
        let (l1, cols, width) = (t.l1, t.cols, t.width());
        let half = l1 / 2;
        for (row, &i) in dst.chunks_mut(width).zip(order) {
            for p in 0..2 {
                let xr = &x[(2 * i as usize + p) * cols..][..l1];
                if let Some(factor) = t.product {
                    let out = &mut row[p * half..(p + 1) * half];
                    for ((o, &a), &b) in out.iter_mut().zip(&xr[..half]).zip(&xr[half..]) {
                        *o = a * b * factor;
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
            if let Some(factor) = t.shape.product {
                let g = &g_row[p * half..][..half];
                let (da, db) = d[..l1].split_at_mut(half);
                let (xa, xb) = xr[..l1].split_at(half);
                for ((((da, db), &a), &b), &g) in da.iter_mut().zip(db).zip(xa).zip(xb).zip(g) {
                    let g = g * factor;
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
