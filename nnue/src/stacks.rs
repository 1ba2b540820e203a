//! The forward pass of every shape other than the thesis's (whose sparse SIMD kernels are in
//! `simd`): the first layer's output, the PSQT term, the chosen layer stack and
//! the output rule of [`Arch`].
//!
//! Integer arithmetic of Stockfish 15.1 (`nnue_feature_transformer.h:272-336`,
//! `layers/affine_transform.h`, `clipped_relu.h:169-172`, `sqr_clipped_relu.h:109-111`,
//! `nnue_architecture.h:93-133`, `evaluate_nnue.cpp:140-172` at `sf_15.1`):
//!
//! - pairwise: `(clamp(a_j, 0, 127) · clamp(a_{j+L1/2}, 0, 127)) >> 7`, side to move first;
//! - affine: `y = b + Σ w·x` in wrapping `i32`;
//! - clipped ReLU: `clamp(y >> 6, 0, 127)`; squared: `min(127, y² >> 19)` of the signed `y`;
//! - skip: `y_skip · 9600 / 8128`, truncating; PSQT: `(psqt_stm − psqt_opp) / 2`, truncating;
//! - Stockfish output: `(psqt + positional) / 16`, truncating; thesis output: `out >> 4`.

use super::aligned::AlignedVec;
use super::network::{Affine, Network};
use super::shape::{Activation, Arch, FtOutput, HIDDEN_ONE, OUTPUT_ONE, OutputRule};
use super::simd::{Kernels, SimdLevel, clipped_relu_scalar};

/// One stack's raw terms, before the output rule's division: what Stockfish's `eval` table
/// shows per bucket (times 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackOutput {
    /// The PSQT term, `(psqt_stm[b] − psqt_opp[b]) / 2` (0 without PSQT).
    pub psqt: i32,
    /// The layers' output, with the skip term where the shape has one.
    pub positional: i32,
}

impl StackOutput {
    /// The evaluation these terms give under `rule`.
    #[inline]
    pub fn value(self, rule: OutputRule) -> i32 {
        match rule {
            OutputRule::Thesis => self.positional >> 4,
            OutputRule::Stockfish => self.psqt.wrapping_add(self.positional) / 16,
        }
    }
}

/// Buffers of the forward pass for one network (allocate once per evaluator).
#[derive(Clone, Debug)]
pub struct StackScratch {
    input: AlignedVec<u8>,
    sums: Vec<i32>,
    acts: Vec<u8>,
}

impl StackScratch {
    /// Buffers for `net`.
    pub fn new(net: &Network) -> StackScratch {
        let layers = net.arch().layers(net.l1());
        let widest = layers.iter().map(|&(i, o)| i.max(o)).max().unwrap_or(0);
        StackScratch {
            input: AlignedVec::zeroed(net.arch().ft_outputs(net.l1())),
            sums: vec![0; widest],
            acts: vec![0; (2 * widest).next_multiple_of(32)],
        }
    }
}

/// Writes the first layer's output from the two accumulators (side to move's first).
pub fn transform(kernels: Kernels, arch: &Arch, stm: &[i16], opp: &[i16], out: &mut [u8]) {
    match kernels.level() {
        SimdLevel::Scalar => transform_any(arch, stm, opp, out),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the level was checked against the CPU (every SIMD level has AVX2).
        _ => unsafe { transform_avx2(arch, stm, opp, out) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("only the scalar kernels exist on this architecture"),
    }
}

/// [`transform_any`] with AVX2: the pairwise product as Stockfish 15.1 computes it
/// (`nnue_feature_transformer.h:306-314`: clamp, `vpmullw`, `>> 7`, pack), the clipped ReLU
/// vectorised by the compiler.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transform_avx2(arch: &Arch, stm: &[i16], opp: &[i16], out: &mut [u8]) {
    use std::arch::x86_64::*;
    let half = stm.len() / 2;
    if arch.ft_output != FtOutput::Pairwise || !half.is_multiple_of(32) {
        return transform_any(arch, stm, opp, out);
    }
    let (zero, max) = (_mm256_setzero_si256(), _mm256_set1_epi16(127));
    for (p, acc) in [stm, opp].into_iter().enumerate() {
        let (a, dst) = (acc.as_ptr(), out[p * half..(p + 1) * half].as_mut_ptr());
        for j in (0..half).step_by(32) {
            // SAFETY: j + 32 <= half, so every load lies in `acc` (2·half values) and the store
            // in this perspective's half of `out`.
            unsafe {
                let load = |at: usize| {
                    let v = _mm256_loadu_si256(a.add(at).cast());
                    _mm256_max_epi16(_mm256_min_epi16(v, max), zero)
                };
                let lo = _mm256_srli_epi16::<7>(_mm256_mullo_epi16(load(j), load(half + j)));
                let hi =
                    _mm256_srli_epi16::<7>(_mm256_mullo_epi16(load(j + 16), load(half + j + 16)));
                // packus interleaves the 128-bit lanes: put them back in order.
                let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(lo, hi));
                _mm256_storeu_si256(dst.add(j).cast(), packed);
            }
        }
    }
}

#[inline(always)]
fn transform_any(arch: &Arch, stm: &[i16], opp: &[i16], out: &mut [u8]) {
    let clip = |a: i16| a.clamp(0, 127);
    match arch.ft_output {
        FtOutput::ClippedRelu => {
            let (s, o) = out.split_at_mut(stm.len());
            clipped_relu_scalar(stm, s);
            clipped_relu_scalar(opp, o);
        }
        FtOutput::Pairwise => {
            let half = stm.len() / 2;
            for (p, acc) in [stm, opp].into_iter().enumerate() {
                let (lo, hi) = acc.split_at(half);
                for ((o, &a), &b) in out[p * half..(p + 1) * half].iter_mut().zip(lo).zip(hi) {
                    // At most 127 · 127 = 16129: no 16-bit overflow.
                    *o = ((clip(a) * clip(b)) >> 7) as u8;
                }
            }
        }
    }
}

/// `sums = b + W·x` over one affine layer (wrapping `i32`). `x` holds the layer's inputs and
/// zeros up to its [`stride`](Affine::stride). Inputs are at most 127, so the SIMD versions'
/// 16-bit pair sums never saturate (2 · 127 · 128 < 2¹⁵).
#[inline]
fn affine(kernels: Kernels, layer: &Affine, x: &[u8], sums: &mut [i32]) {
    let (inputs, stride) = (layer.inputs(), layer.stride());
    let level = kernels.level();
    if level == SimdLevel::Scalar {
        for ((s, row), &b) in sums
            .iter_mut()
            .zip(layer.weights().chunks_exact(inputs))
            .zip(layer.biases())
        {
            let dot = row.iter().zip(x).fold(0i32, |acc, (&w, &v)| {
                acc.wrapping_add(i32::from(w) * i32::from(v))
            });
            *s = b.wrapping_add(dot);
        }
        return;
    }
    // Several rows at a time: independent sums, one load of the inputs for all of them.
    #[cfg(target_arch = "x86_64")]
    {
        let w = layer.padded();
        let group = if level == SimdLevel::Avx2 { 4 } else { 8 };
        let mut r = 0;
        while r < layer.outputs() {
            let n = if r + group <= layer.outputs() {
                group
            } else {
                1
            };
            let mut out = [0i32; 8];
            let rows = &w[r * stride..(r + n) * stride];
            // SAFETY: the level was checked against the CPU when `kernels` was made; `x` holds
            // `stride` bytes and `rows` n rows of `stride`, a multiple of 32.
            unsafe {
                match (level, n) {
                    (SimdLevel::Avx2, 4) => x86::rows_avx2::<4>(&x[..stride], rows, &mut out),
                    (SimdLevel::Avx2, _) => x86::rows_avx2::<1>(&x[..stride], rows, &mut out),
                    (SimdLevel::Avx512, 8) => x86::rows_avx512::<8>(&x[..stride], rows, &mut out),
                    (SimdLevel::Avx512, _) => x86::rows_avx512::<1>(&x[..stride], rows, &mut out),
                    (_, 8) => x86::rows_vnni::<8>(&x[..stride], rows, &mut out),
                    _ => x86::rows_vnni::<1>(&x[..stride], rows, &mut out),
                }
            }
            for k in 0..n {
                sums[r + k] = layer.biases()[r + k].wrapping_add(out[k]);
            }
            r += n;
        }
    }
}

/// The x86 dot products of `u8` inputs and rows of `i8` weights, R rows at a time so that
/// their sums are independent chains (a single sum waits on each multiply-add's latency).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `Σ x·w` over 32 bytes at `k` of `x` and of row `w`: `vpmaddubsw` then `vpmaddwd` by ones.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn step_avx2(x: __m256i, w: *const i8) -> __m256i {
        // SAFETY: the caller passes 32 readable bytes.
        let wv = unsafe { _mm256_loadu_si256(w.cast()) };
        _mm256_madd_epi16(_mm256_maddubs_epi16(x, wv), _mm256_set1_epi16(1))
    }

    /// The sum of an AVX2 register's eight `i32` lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_avx2(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }

    /// `out[r] = Σ x·row_r` for the R rows of `w` (each `x.len()` long, a multiple of 32).
    #[target_feature(enable = "avx2")]
    pub unsafe fn rows_avx2<const R: usize>(x: &[u8], w: &[i8], out: &mut [i32; 8]) {
        let n = x.len();
        let mut acc = [_mm256_setzero_si256(); R];
        for k in (0..n).step_by(32) {
            // SAFETY: k + 32 <= n; row r's bytes are w[r·n .. (r + 1)·n].
            unsafe {
                let xv = _mm256_loadu_si256(x.as_ptr().add(k).cast());
                for (r, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_add_epi32(*a, step_avx2(xv, w.as_ptr().add(r * n + k)));
                }
            }
        }
        for (o, a) in out.iter_mut().zip(acc) {
            // SAFETY: AVX2 is enabled here.
            *o = unsafe { sum_avx2(a) };
        }
    }

    /// The sums of the AVX-512 row kernels: each row's 512-bit accumulator reduced, plus its
    /// last 32 bytes with AVX2 when `x.len()` is an odd multiple of 32.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    unsafe fn finish_avx512<const R: usize>(
        acc: [__m512i; R],
        x: &[u8],
        w: &[i8],
        out: &mut [i32; 8],
    ) {
        let (n, wide) = (x.len(), x.len() / 64 * 64);
        for (r, (o, a)) in out.iter_mut().zip(acc).enumerate() {
            let mut sum = _mm512_reduce_add_epi32(a);
            if wide < n {
                // SAFETY: the last 32 bytes of x and of row r.
                sum = sum.wrapping_add(unsafe {
                    let xv = _mm256_loadu_si256(x.as_ptr().add(wide).cast());
                    sum_avx2(step_avx2(xv, w.as_ptr().add(r * n + wide)))
                });
            }
            *o = sum;
        }
    }

    /// R rows' sums over the whole 64-byte blocks of `x`, `step` adding one block of a row's
    /// products to its accumulator, then the tail ([`finish_avx512`]): the loop of
    /// [`rows_avx512`] and [`rows_vnni`], inlined into each with its own instructions.
    #[inline(always)]
    unsafe fn rows_512<const R: usize>(
        x: &[u8],
        w: &[i8],
        out: &mut [i32; 8],
        step: impl Fn(__m512i, __m512i, __m512i) -> __m512i,
    ) {
        let (n, wide) = (x.len(), x.len() / 64 * 64);
        // SAFETY: the callers enable AVX-512.
        let mut acc = [unsafe { _mm512_setzero_si512() }; R];
        for k in (0..wide).step_by(64) {
            // SAFETY: k + 64 <= n; row r's bytes are w[r·n .. (r + 1)·n].
            unsafe {
                let xv = _mm512_loadu_si512(x.as_ptr().add(k).cast());
                for (r, a) in acc.iter_mut().enumerate() {
                    let wv = _mm512_loadu_si512(w.as_ptr().add(r * n + k).cast());
                    *a = step(*a, xv, wv);
                }
            }
        }
        // SAFETY: the callers enable AVX-512 and AVX2; the slices are as theirs.
        unsafe { finish_avx512(acc, x, w, out) }
    }

    /// [`rows_avx2`] 64 bytes at a time with AVX-512 BW, the last 32 with AVX2.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn rows_avx512<const R: usize>(x: &[u8], w: &[i8], out: &mut [i32; 8]) {
        let ones = _mm512_set1_epi16(1);
        // SAFETY: AVX-512 BW and AVX2 are enabled here; the slices are as this function's.
        unsafe {
            rows_512::<R>(x, w, out, |a, xv, wv| {
                _mm512_add_epi32(a, _mm512_madd_epi16(_mm512_maddubs_epi16(xv, wv), ones))
            })
        }
    }

    /// [`rows_avx512`] with `vpdpbusd` (four products summed into `i32` in one instruction).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
    pub unsafe fn rows_vnni<const R: usize>(x: &[u8], w: &[i8], out: &mut [i32; 8]) {
        // SAFETY: AVX-512 VNNI and AVX2 are enabled here; the slices are as this function's.
        unsafe { rows_512::<R>(x, w, out, |a, xv, wv| _mm512_dpbusd_epi32(a, xv, wv)) }
    }
}

/// The layers of one stack on the first layer's output `input`: the last layer's sum plus the
/// skip term where the shape has one.
pub fn propagate(
    kernels: Kernels,
    arch: &Arch,
    stack: &[Affine],
    input: &[u8],
    scratch: &mut StackScratch,
) -> i32 {
    let StackScratch { sums, acts, .. } = scratch;
    let mut x_len = input.len();
    let mut skip = 0i32;
    let (hidden, output) = stack.split_at(stack.len() - 1);
    for (i, (layer, h)) in hidden.iter().zip(&arch.hidden).enumerate() {
        let x: &[u8] = if i == 0 {
            input
        } else {
            &acts[..x_len.next_multiple_of(32)]
        };
        debug_assert!(x.len() >= layer.stride());
        let mut out = std::mem::take(sums);
        affine(kernels, layer, x, &mut out[..layer.outputs()]);
        if arch.skip && i == 0 {
            skip = out[h.width];
        }
        let crelu = |y: i32| (y >> 6).clamp(0, 127) as u8;
        match h.activation {
            Activation::ClippedRelu => {
                for (a, &y) in acts.iter_mut().zip(&out[..h.width]) {
                    *a = crelu(y);
                }
            }
            Activation::SqrClippedRelu => {
                for (k, &y) in out[..h.width].iter().enumerate() {
                    let sq = (i64::from(y) * i64::from(y)) >> 19;
                    acts[k] = sq.min(127) as u8;
                    acts[h.width + k] = crelu(y);
                }
            }
        }
        x_len = h.width * h.activation.fan_out();
        // The next layer reads whole runs of 32: zeros after its inputs.
        acts[x_len..x_len.next_multiple_of(32)].fill(0);
        *sums = out;
    }
    let last = &output[0];
    let mut out = [0i32];
    affine(kernels, last, &acts[..x_len.next_multiple_of(32)], &mut out);
    out[0].wrapping_add(skip.wrapping_mul(OUTPUT_ONE) / HIDDEN_ONE)
}

/// The terms of stack `stack` (and PSQT bucket `bucket`) from both perspectives' accumulators
/// and PSQT sums (side to move's first; the PSQT sums are empty without PSQT).
#[allow(clippy::too_many_arguments)]
pub fn stack_output(
    kernels: Kernels,
    net: &Network,
    stm: &[i16],
    opp: &[i16],
    psqt: (&[i32], &[i32]),
    stack: usize,
    bucket: usize,
    scratch: &mut StackScratch,
) -> StackOutput {
    let arch = net.arch();
    let mut input = std::mem::replace(&mut scratch.input, AlignedVec::zeroed(0));
    transform(kernels, arch, stm, opp, &mut input);
    let positional = propagate(kernels, arch, &net.stacks()[stack], &input, scratch);
    scratch.input = input;
    let psqt = if arch.psqt_buckets > 0 {
        psqt.0[bucket].wrapping_sub(psqt.1[bucket]) / 2
    } else {
        0
    };
    StackOutput { psqt, positional }
}

/// The evaluation for the side to move of a position with `pieces` pieces.
pub fn evaluate(
    kernels: Kernels,
    net: &Network,
    stm: &[i16],
    opp: &[i16],
    psqt: (&[i32], &[i32]),
    pieces: u32,
    scratch: &mut StackScratch,
) -> i32 {
    let arch = net.arch();
    stack_output(
        kernels,
        net,
        stm,
        opp,
        psqt,
        arch.stack_of(pieces),
        arch.psqt_bucket_of(pieces),
        scratch,
    )
    .value(arch.output)
}
