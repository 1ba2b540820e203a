//! The forward pass after the accumulators, one for every shape: the first layer's output, the
//! PSQT term, the chosen layer stack and the output rule of [`Arch`]. The thesis's networks are
//! one shape among others (one stack of 2·L1 → L2 → 1, no PSQT, `>> 4`); what makes them fast —
//! their neurons reordered ([`crate::arrange`]) and a sparse first hidden layer of 32 outputs
//! per pass ([`outputs_per_pass`](crate::network::outputs_per_pass)) — is chosen at load time
//! from the layers' sizes, so any shape with such layers gets it too.
//!
//! Integer arithmetic of Stockfish 15.1 (`nnue_feature_transformer.h:272-336`,
//! `layers/affine_transform.h`, `clipped_relu.h:169-172`, `sqr_clipped_relu.h:109-111`,
//! `nnue_architecture.h:93-133`, `evaluate_nnue.cpp:140-172` at `sf_15.1`), which is also the
//! thesis's (`shared/reference/thesis-layouts.md`):
//!
//! - clipped ReLU: `clamp(a, 0, 127)` of both accumulators, side to move first;
//! - pairwise: `(clamp(a_j, 0, 127) · clamp(a_{j+L1/2}, 0, 127)) >> 7`, side to move first;
//! - affine: `y = b + Σ w·x` in wrapping `i32` (the SIMD products `vpmaddubsw` then `vpmaddwd`,
//!   u8 ≤ 127 times i8 summed in pairs in i16, never saturating, or `vpdpbusd`; the wide first
//!   hidden layer reads only its non-zero blocks of four inputs, as Stockfish's
//!   `AffineTransformSparseInput`);
//! - clipped ReLU: `clamp(y >> 6, 0, 127)`; squared: `min(127, y² >> 19)` of the signed `y`;
//! - skip: `y_skip · 9600 / 8128`, truncating; PSQT: `(psqt_stm − psqt_opp) / 2`, truncating;
//! - Stockfish output: `(psqt + positional) / 16`, truncating; thesis output: `out >> 4`.

use super::aligned::AlignedVec;
use super::layers::{Plan, SkipRead};
use super::network::{Affine, Network, SPARSE_FROM, StackPath};
use super::scales::{HIDDEN_ONE, OUTPUT_ONE, SCALED_OUTPUT_ONE};
use super::shape::{Arch, FtOutput, OutputRule, Skip};
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
            OutputRule::StockfishScaled => self.psqt / 16 + self.positional / 16,
        }
    }
}

/// Buffers of the forward pass for one network (allocate once per evaluator).
#[derive(Clone, Debug)]
pub struct ForwardScratch {
    /// The first layer's output.
    input: AlignedVec<u8>,
    layers: LayerScratch,
}

/// The buffers of the layers after the first, apart from its output so that both can be lent
/// at once.
#[derive(Clone, Debug)]
struct LayerScratch {
    sums: Vec<i32>,
    acts: Vec<u8>,
    /// The non-zero blocks of a wide layer's inputs (room for every block of the widest).
    blocks: Vec<u16>,
    /// Whether the last evaluation's first-layer output had nearly no zero block: then the
    /// next one's output is counted, not listed ([`transform`]), and listed apart only if it
    /// turns out sparse.
    dense: bool,
}

impl ForwardScratch {
    /// Buffers for `net`.
    pub fn new(net: &Network) -> ForwardScratch {
        let layers = net.plan().layers();
        let widest = layers.iter().map(|&(i, o)| i.max(o)).max().unwrap_or(0);
        ForwardScratch {
            input: AlignedVec::zeroed(net.arch().ft_outputs(net.l1())),
            layers: LayerScratch {
                // Whole passes of up to 32 outputs.
                sums: vec![0; widest.next_multiple_of(32)],
                // The plain values' last run of 16 may spill 15 past them; a dense output
                // reads every layer's activations side by side.
                acts: vec![
                    0;
                    (2 * widest + 15)
                        .max(net.arch().activations() + 47)
                        .next_multiple_of(32)
                ],
                blocks: vec![0; widest.next_multiple_of(64) / 4],
                dense: false,
            },
        }
    }
}

/// What the writer of a layer's input knows of its non-zero groups of four bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Groups {
    /// Listed at the front of the scratch's blocks: this many.
    Listed(usize),
    /// Counted, not listed: this many.
    Counted(usize),
    /// Neither.
    Unknown,
}

/// Whether `n` non-zero groups of `blocks` are nearly all of them: the first layer then reads
/// every block, without a list (its look-ups would cost more than the few zero blocks'
/// products; random networks' outputs).
#[inline(always)]
fn mostly_nonzero(n: usize, blocks: usize) -> bool {
    n * 8 > blocks * 7
}

/// Writes the first layer's output from the two accumulators (side to move's first). The SIMD
/// pairwise products also list the output's non-zero groups of four bytes in `nnz` as they
/// write them (which the next layer reads sparsely), or only count them when `list` is false
/// (a layer that will read every block: the evaluation before's output had nearly none zero).
#[inline(always)]
pub fn transform(
    kernels: Kernels,
    arch: &Arch,
    stm: &[i16],
    opp: &[i16],
    out: &mut [u8],
    nnz: &mut [u16],
    list: bool,
) -> Groups {
    if arch.ft_output == FtOutput::ClippedRelu {
        let (s, o) = out.split_at_mut(stm.len());
        kernels.clipped_relu(stm, s);
        kernels.clipped_relu(opp, o);
        return Groups::Unknown;
    }
    let n = match kernels.level() {
        SimdLevel::Scalar => {
            transform_any(arch, stm, opp, out);
            return Groups::Unknown;
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the level was checked against the CPU.
        SimdLevel::Avx512 | SimdLevel::Avx512Vnni => unsafe {
            match list {
                true => transform_avx512::<true>(arch, stm, opp, out, nnz),
                false => transform_avx512::<false>(arch, stm, opp, out, nnz),
            }
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the level was checked against the CPU.
        SimdLevel::Avx2 => unsafe {
            match list {
                true => transform_avx2::<true>(arch, stm, opp, out, nnz),
                false => transform_avx2::<false>(arch, stm, opp, out, nnz),
            }
        },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("only the scalar kernels exist on this architecture"),
    };
    match (n, list) {
        (None, _) => Groups::Unknown,
        (Some(n), true) => Groups::Listed(n),
        (Some(n), false) => Groups::Counted(n),
    }
}

/// [`transform_any`] with AVX2: the pairwise product as Stockfish 15.1 computes it
/// (`nnue_feature_transformer.h:306-314`: clamp, `vpmullw`, `>> 7`, pack); the output's
/// non-zero groups listed in `nnz` (`LIST`) or counted.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transform_avx2<const LIST: bool>(
    arch: &Arch,
    stm: &[i16],
    opp: &[i16],
    out: &mut [u8],
    nnz: &mut [u16],
) -> Option<usize> {
    use std::arch::x86_64::*;
    let half = stm.len() / 2;
    if !arch.ft_output.is_pairwise() || !half.is_multiple_of(32) {
        transform_any(arch, stm, opp, out);
        return None;
    }
    // Every group of the output numbered in `nnz`, its 2·half / 4 indices at most.
    assert!(nnz.len() >= half / 2 && out.len() >= 2 * half);
    let (mut base, mut n) = (_mm_setzero_si128(), 0);
    let wide = arch.ft_output == FtOutput::Pairwise255;
    let zero = _mm256_setzero_si256();
    let max = _mm256_set1_epi16(arch.ft_output.clip());
    for (p, acc) in [stm, opp].into_iter().enumerate() {
        let (a, dst) = (acc.as_ptr(), out[p * half..(p + 1) * half].as_mut_ptr());
        for j in (0..half).step_by(32) {
            // SAFETY: j + 32 <= half, so every load lies in `acc` (2·half values) and the store
            // in this perspective's half of `out`.
            unsafe {
                let upper = |at: usize| _mm256_min_epi16(_mm256_loadu_si256(a.add(at).cast()), max);
                let load = |at: usize| _mm256_max_epi16(upper(at), zero);
                // Clip 127: `a · b >> 7` in 16 bits. Clip 255: `(a << 7) · b >> 16`, the high
                // half of the 32-bit product (Stockfish's `vec_mulhi_16` of today), `b` clipped
                // above only: a negative `b` makes the product at most 0, which the pack turns
                // into the 0 of a clipped `b` (`nnue_feature_transformer.h` of 762dd1da9, lines
                // 355-361).
                let product = |x: usize| {
                    if wide {
                        _mm256_mulhi_epi16(_mm256_slli_epi16::<7>(load(x)), upper(half + x))
                    } else {
                        _mm256_srli_epi16::<7>(_mm256_mullo_epi16(load(x), load(half + x)))
                    }
                };
                let (lo, hi) = (product(j), product(j + 16));
                // packus interleaves the 128-bit lanes: put them back in order.
                let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(lo, hi));
                _mm256_storeu_si256(dst.add(j).cast(), packed);
                // The groups so far are (p·half + j) / 4 < half / 2 − 8 + 1: room for 8.
                match LIST {
                    true => crate::simd::record_nnz(packed, &mut base, nnz.as_mut_ptr(), &mut n),
                    false => n += crate::simd::count_nnz(packed),
                }
            }
        }
    }
    Some(n)
}

/// [`transform_avx2`] 64 values at a time with AVX-512 BW (`nnue_feature_transformer.h`'s
/// AVX-512 path: `vpackuswb`, then `vpermq` to undo its lane interleaving).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
unsafe fn transform_avx512<const LIST: bool>(
    arch: &Arch,
    stm: &[i16],
    opp: &[i16],
    out: &mut [u8],
    nnz: &mut [u16],
) -> Option<usize> {
    use std::arch::x86_64::*;
    let half = stm.len() / 2;
    if !arch.ft_output.is_pairwise() || !half.is_multiple_of(64) {
        // SAFETY: AVX2 is enabled here.
        return unsafe { transform_avx2::<LIST>(arch, stm, opp, out, nnz) };
    }
    assert!(nnz.len() >= half / 2 && out.len() >= 2 * half);
    let (mut base, mut n) = (crate::simd::nnz_lanes(), 0);
    let wide = arch.ft_output == FtOutput::Pairwise255;
    let zero = _mm512_setzero_si512();
    let max = _mm512_set1_epi16(arch.ft_output.clip());
    let order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    for (p, acc) in [stm, opp].into_iter().enumerate() {
        let (a, dst) = (acc.as_ptr(), out[p * half..(p + 1) * half].as_mut_ptr());
        for j in (0..half).step_by(64) {
            // SAFETY: j + 64 <= half, so every load lies in `acc` (2·half values) and the store
            // in this perspective's half of `out`.
            unsafe {
                let upper = |at: usize| _mm512_min_epi16(_mm512_loadu_si512(a.add(at).cast()), max);
                let load = |at: usize| _mm512_max_epi16(upper(at), zero);
                // As in transform_avx2 (`b` clipped above only).
                let product = |x: usize| {
                    if wide {
                        _mm512_mulhi_epi16(_mm512_slli_epi16::<7>(load(x)), upper(half + x))
                    } else {
                        _mm512_srli_epi16::<7>(_mm512_mullo_epi16(load(x), load(half + x)))
                    }
                };
                let (lo, hi) = (product(j), product(j + 32));
                let packed = _mm512_permutexvar_epi64(order, _mm512_packus_epi16(lo, hi));
                _mm512_storeu_si512(dst.add(j).cast(), packed);
                // As in transform_avx2: room for 16.
                match LIST {
                    true => {
                        crate::simd::record_nnz_avx512(packed, &mut base, nnz.as_mut_ptr(), &mut n)
                    }
                    false => n += crate::simd::count_nnz_avx512(packed),
                }
            }
        }
    }
    Some(n)
}

#[inline(always)]
fn transform_any(arch: &Arch, stm: &[i16], opp: &[i16], out: &mut [u8]) {
    match arch.ft_output {
        FtOutput::ClippedRelu => {
            let (s, o) = out.split_at_mut(stm.len());
            clipped_relu_scalar(stm, s);
            clipped_relu_scalar(opp, o);
        }
        FtOutput::Pairwise | FtOutput::Pairwise255 => {
            let (max, shift) = (arch.ft_output.clip(), arch.ft_output.product_shift());
            let half = stm.len() / 2;
            for (p, acc) in [stm, opp].into_iter().enumerate() {
                let (lo, hi) = acc.split_at(half);
                for ((o, &a), &b) in out[p * half..(p + 1) * half].iter_mut().zip(lo).zip(hi) {
                    let (a, b) = (i32::from(a.clamp(0, max)), i32::from(b.clamp(0, max)));
                    *o = ((a * b) >> shift) as u8;
                }
            }
        }
    }
}

/// `sums = b + W·x` over one affine layer (wrapping `i32`). `x` holds the layer's inputs and
/// zeros up to its [`stride`](Affine::stride). Inputs are at most 127, so the SIMD versions'
/// 16-bit pair sums never saturate (2 · 127 · 128 < 2¹⁵).
///
/// `listed`: what the writer of `x` knows of its non-zero groups ([`transform`]).
#[inline(always)]
fn affine(
    kernels: Kernels,
    layer: &Affine,
    x: &[u8],
    sums: &mut [i32],
    blocks: &mut [u16],
    listed: Groups,
) {
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
    #[cfg(target_arch = "x86_64")]
    {
        let (columns, biases, outputs16) = layer.columns();
        if outputs16 > 0 {
            // SAFETY: the level was checked against the CPU when `kernels` was made; `x` holds
            // `stride` bytes (a multiple of 32), `columns` stride / 4 blocks of `outputs16`
            // outputs (a multiple of the layer's outputs per pass, 16 or 32), and `sums` at
            // least `outputs16` values.
            unsafe {
                let (x, sums) = (&x[..stride], &mut sums[..outputs16]);
                let nonzero = if stride >= SPARSE_FROM {
                    let blocks = &mut blocks[..stride / 4];
                    // Every input is at most 127, as find_nnz requires. A list or count of the
                    // writer's (the first layer's output, which it lists or counts only in
                    // whole runs of 32: the layer's stride) covers the layer's inputs.
                    let n = match (listed, level) {
                        (Groups::Listed(n), _) => Some(n),
                        // Counted, nearly all: every block is read.
                        (Groups::Counted(n), _) if mostly_nonzero(n, stride / 4) => None,
                        (_, SimdLevel::Avx512 | SimdLevel::Avx512Vnni)
                            if stride.is_multiple_of(64) =>
                        {
                            Some(crate::simd::find_nnz_avx512(x, blocks))
                        }
                        _ => Some(crate::simd::find_nnz(x, blocks)),
                    };
                    // A list of nearly every block is read as none (`columns`).
                    n.filter(|&n| !mostly_nonzero(n, stride / 4))
                        .map(|n| &blocks[..n])
                } else {
                    None
                };
                // The biases are added in the registers: adding them to `sums` afterwards
                // would make the next layer's wide load wait on the narrow stores.
                let wide = layer.per_pass() == 32;
                match (level, wide) {
                    (SimdLevel::Avx2, false) => {
                        x86::columns_avx2::<2, 2>(x, columns, biases, sums, nonzero)
                    }
                    (SimdLevel::Avx2, true) => {
                        x86::columns_avx2::<4, 1>(x, columns, biases, sums, nonzero)
                    }
                    (SimdLevel::Avx512, false) => {
                        x86::columns_avx512::<1, 4>(x, columns, biases, sums, nonzero)
                    }
                    (SimdLevel::Avx512, true) => {
                        x86::columns_avx512::<2, 2>(x, columns, biases, sums, nonzero)
                    }
                    (_, false) => x86::columns_vnni::<1, 4>(x, columns, biases, sums, nonzero),
                    (_, true) => x86::columns_vnni::<2, 2>(x, columns, biases, sums, nonzero),
                }
            }
            return;
        }
        // One output: one row, its products summed across the register.
        let (x, row) = (&x[..stride], &layer.padded()[..stride]);
        // SAFETY: as above; `row` holds `stride` weights.
        let dot = unsafe {
            match level {
                SimdLevel::Avx2 => x86::dot_avx2(x, row),
                SimdLevel::Avx512 => x86::dot_avx512(x, row),
                _ => x86::dot_vnni(x, row),
            }
        };
        sums[0] = layer.biases()[0].wrapping_add(dot);
    }
}

/// The x86 products of `u8` inputs and `i8` weights: a layer of many outputs by blocks of
/// four inputs (`columns`), a one-output layer as one row's dot product (`dot`).
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

    /// `Σ x·w` over a row `w` as long as `x` (a multiple of 32).
    #[target_feature(enable = "avx2")]
    pub unsafe fn dot_avx2(x: &[u8], w: &[i8]) -> i32 {
        let mut acc = _mm256_setzero_si256();
        for k in (0..x.len()).step_by(32) {
            // SAFETY: k + 32 <= x.len() == w.len().
            unsafe {
                let xv = _mm256_loadu_si256(x.as_ptr().add(k).cast());
                acc = _mm256_add_epi32(acc, step_avx2(xv, w.as_ptr().add(k)));
            }
        }
        // SAFETY: AVX2 is enabled here.
        unsafe { sum_avx2(acc) }
    }

    /// [`dot_avx2`] over the whole 64-byte blocks with `step` adding one block's products to
    /// the accumulator, the last 32 bytes (when `x.len()` is an odd multiple of 32) with AVX2:
    /// the loop of [`dot_avx512`] and [`dot_vnni`], inlined into each.
    #[inline(always)]
    unsafe fn dot_512(
        x: &[u8],
        w: &[i8],
        step: impl Fn(__m512i, __m512i, __m512i) -> __m512i,
    ) -> i32 {
        let (n, wide) = (x.len(), x.len() / 64 * 64);
        // SAFETY: the callers enable AVX-512 and AVX2; every load lies in x and w (n bytes each).
        unsafe {
            let mut acc = _mm512_setzero_si512();
            for k in (0..wide).step_by(64) {
                let xv = _mm512_loadu_si512(x.as_ptr().add(k).cast());
                let wv = _mm512_loadu_si512(w.as_ptr().add(k).cast());
                acc = step(acc, xv, wv);
            }
            let mut sum = _mm512_reduce_add_epi32(acc);
            if wide < n {
                let xv = _mm256_loadu_si256(x.as_ptr().add(wide).cast());
                sum = sum.wrapping_add(sum_avx2(step_avx2(xv, w.as_ptr().add(wide))));
            }
            sum
        }
    }

    /// [`dot_avx2`] 64 bytes at a time with AVX-512 BW.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn dot_avx512(x: &[u8], w: &[i8]) -> i32 {
        let ones = _mm512_set1_epi16(1);
        // SAFETY: AVX-512 BW and AVX2 are enabled here; the slices are as this function's.
        unsafe {
            dot_512(x, w, |a, xv, wv| {
                _mm512_add_epi32(a, _mm512_madd_epi16(_mm512_maddubs_epi16(xv, wv), ones))
            })
        }
    }

    /// [`dot_avx512`] with `vpdpbusd` (four products summed into `i32` in one instruction).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
    pub unsafe fn dot_vnni(x: &[u8], w: &[i8]) -> i32 {
        // SAFETY: AVX-512 VNNI and AVX2 are enabled here; the slices are as this function's.
        unsafe { dot_512(x, w, |a, xv, wv| _mm512_dpbusd_epi32(a, xv, wv)) }
    }

    /// `sums = W·x` for a layer in column order, pass by pass (`cols`: `[sums.len() / (G ·
    /// LANES)][x.len() / 4][G · LANES][4]`, see [`Affine::columns`](crate::network::Affine::columns),
    /// whose outputs per pass are `G · LANES`; a pass's blocks lie at a stride known at compile
    /// time), registers of `LANES` outputs: each
    /// block of four inputs is broadcast once and multiplied into the four weights of `G`
    /// registers' outputs by `step`, each register in `4 / G` independent chains over the
    /// blocks (one chain would wait on each multiply-add), so that a pass over the blocks feeds
    /// `G · LANES` outputs (all 16 of the first stack layer with AVX2, as Stockfish's
    /// `affine_transform_sparse_input.h` does). `x.len()` is a multiple of 32, `sums.len()` of
    /// `G · LANES`.
    ///
    /// With `nonzero` given, only the blocks it lists are read (the others are zero inputs):
    /// Stockfish 15.1's `AffineTransformSparseInput` for wide, mostly-zero inputs.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn columns<V: Copy, const LANES: usize, const G: usize, const CHAINS: usize>(
        x: &[u8],
        cols: &[i8],
        biases: &[i32],
        sums: &mut [i32],
        nonzero: Option<&[u16]>,
        zero: V,
        broadcast: impl Fn(i32) -> V,
        load: impl Fn(*const i8) -> V,
        step: impl Fn(V, V, V) -> V,
        add: impl Fn(V, V) -> V,
        finish: impl Fn(V, *const i32, *mut i32),
    ) {
        let (blocks, outputs) = (x.len() / 4, sums.len());
        assert!(biases.len() >= outputs);
        debug_assert!(cols.len() >= blocks * outputs * 4 && blocks.is_multiple_of(4));
        debug_assert!(outputs.is_multiple_of(G * LANES) && G * CHAINS == 4);
        debug_assert!(nonzero.is_none_or(|n| n.iter().all(|&c| usize::from(c) < blocks)));
        let chains = CHAINS;
        let xp = x.as_ptr().cast::<i32>();
        // Block c into the chains `chain`, `chain + chains`, ... (one per register) of
        // `acc`, for outputs g .. g + G · LANES.
        // SAFETY (both): block c < blocks lies in x; its weights for outputs g .. g + G · LANES
        // (at most `outputs`) lie in cols.
        let mac = |acc: &mut [V; 4], chain: usize, c: usize, g: usize| unsafe {
            let xb = broadcast(xp.add(c).read_unaligned());
            for r in 0..G {
                let a = &mut acc[chain + r * chains];
                *a = step(
                    *a,
                    xb,
                    load(
                        cols.as_ptr()
                            .add((g * blocks + c * G * LANES + r * LANES) * 4),
                    ),
                );
            }
        };
        for g in (0..outputs).step_by(G * LANES) {
            let mut acc = [zero; 4];
            match nonzero {
                // A narrow layer's every block (a layer after the first).
                None if blocks < 64 => {
                    for c in (0..blocks).step_by(chains) {
                        for j in 0..chains {
                            mac(&mut acc, j, c + j, g);
                        }
                    }
                }
                // Every block of a wide one, eight per loop step, block c into chain c mod
                // CHAINS.
                None => {
                    let (eights, rest) = (blocks / 8, blocks % 8);
                    for e in 0..eights {
                        for k in 0..8 {
                            mac(&mut acc, k % chains, 8 * e + k, g);
                        }
                    }
                    for k in 0..rest {
                        mac(&mut acc, k % chains, 8 * eights + k, g);
                    }
                }
                // Eight listed blocks per loop step (an eighth of the loop's own instructions
                // a block; sixteen made the compiler keep the loop's state in memory), block k
                // into chain k mod CHAINS: the chains' accumulators stay in registers.
                Some(list) => {
                    let (eights, rest) = list.as_chunks::<8>();
                    for eight in eights {
                        for (k, &c) in eight.iter().enumerate() {
                            mac(&mut acc, k % chains, usize::from(c), g);
                        }
                    }
                    for (k, &c) in rest.iter().enumerate() {
                        mac(&mut acc, k % chains, usize::from(c), g);
                    }
                }
            }
            for r in 0..G {
                let mine = &acc[r * chains..(r + 1) * chains];
                let sum = mine[1..].iter().fold(mine[0], |s, &v| add(s, v));
                // SAFETY: g + (r + 1) · LANES <= outputs <= biases.len().
                let at = g + r * LANES;
                finish(sum, unsafe { biases.as_ptr().add(at) }, unsafe {
                    sums.as_mut_ptr().add(at)
                });
            }
        }
    }

    /// [`columns`] with 512-bit registers of 16 outputs, `G` of them per pass, `step` adding a
    /// broadcast block's products: the loop of [`columns_avx512`] and [`columns_vnni`], inlined
    /// into each.
    #[inline(always)]
    unsafe fn columns_512<const G: usize, const CHAINS: usize>(
        x: &[u8],
        cols: &[i8],
        biases: &[i32],
        sums: &mut [i32],
        nonzero: Option<&[u16]>,
        step: impl Fn(__m512i, __m512i, __m512i) -> __m512i,
    ) {
        // SAFETY: the callers enable AVX-512; the slices are as `columns` requires.
        unsafe {
            columns::<__m512i, 16, G, CHAINS>(
                x,
                cols,
                biases,
                sums,
                nonzero,
                _mm512_setzero_si512(),
                |b| _mm512_set1_epi32(b),
                |w| _mm512_loadu_si512(w.cast()),
                step,
                |a, b| _mm512_add_epi32(a, b),
                |s, bias, out| {
                    let s = _mm512_add_epi32(s, _mm512_loadu_si512(bias.cast()));
                    _mm512_storeu_si512(out.cast(), s)
                },
            )
        }
    }

    /// [`columns`] with `vpdpbusd`, 16 outputs per register, `G` registers per pass.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn columns_vnni<const G: usize, const CHAINS: usize>(
        x: &[u8],
        cols: &[i8],
        biases: &[i32],
        sums: &mut [i32],
        nonzero: Option<&[u16]>,
    ) {
        // SAFETY: AVX-512 VNNI is enabled here; the slices are as `columns` requires.
        unsafe {
            columns_512::<G, CHAINS>(x, cols, biases, sums, nonzero, |a, xb, w| {
                _mm512_dpbusd_epi32(a, xb, w)
            })
        }
    }

    /// [`columns`] with AVX-512 BW (`vpmaddubsw` + `vpmaddwd`), 16 outputs per register, `G`
    /// registers per pass.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn columns_avx512<const G: usize, const CHAINS: usize>(
        x: &[u8],
        cols: &[i8],
        biases: &[i32],
        sums: &mut [i32],
        nonzero: Option<&[u16]>,
    ) {
        let ones = _mm512_set1_epi16(1);
        // SAFETY: AVX-512 BW is enabled here; the slices are as `columns` requires.
        unsafe {
            columns_512::<G, CHAINS>(x, cols, biases, sums, nonzero, |a, xb, w| {
                _mm512_add_epi32(a, _mm512_madd_epi16(_mm512_maddubs_epi16(xb, w), ones))
            })
        }
    }

    /// [`columns`] with AVX2 (`vpmaddubsw` + `vpmaddwd`), 8 outputs per register, `G`
    /// registers per pass (2: 16 outputs, 4: 32).
    #[target_feature(enable = "avx2")]
    pub unsafe fn columns_avx2<const G: usize, const CHAINS: usize>(
        x: &[u8],
        cols: &[i8],
        biases: &[i32],
        sums: &mut [i32],
        nonzero: Option<&[u16]>,
    ) {
        let ones = _mm256_set1_epi16(1);
        // SAFETY: AVX2 is enabled here; the slices are as `columns` requires (a multiple of
        // G · 8 outputs).
        unsafe {
            columns::<__m256i, 8, G, CHAINS>(
                x,
                cols,
                biases,
                sums,
                nonzero,
                _mm256_setzero_si256(),
                |b| _mm256_set1_epi32(b),
                |w| _mm256_loadu_si256(w.cast()),
                |a, xb, w| {
                    _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(xb, w), ones))
                },
                |a, b| _mm256_add_epi32(a, b),
                |s, bias, out| {
                    let s = _mm256_add_epi32(s, _mm256_loadu_si256(bias.cast()));
                    _mm256_storeu_si256(out.cast(), s)
                },
            )
        }
    }
}

/// The layers of one stack on the first layer's output `input`, walked as `plan` says: the
/// output layer's sum and the skip value (0 without a skip term), before the output rule's
/// scaling ([`positional`]). `listed`: the non-zero groups of `input` listed in the scratch's
/// blocks ([`transform`]).
#[inline(always)]
fn propagate(
    kernels: Kernels,
    plan: &Plan,
    stack: &[Affine],
    (input, listed): (&[u8], Groups),
    scratch: &mut LayerScratch,
) -> (i32, i32) {
    let LayerScratch {
        sums, acts, blocks, ..
    } = scratch;
    let mut skip = 0i32;
    let (hidden, output) = stack.split_at(stack.len() - 1);
    // A layer reads whole runs of 32: its inputs, then zeros.
    let whole = |r: &std::ops::Range<usize>| r.start..r.start + r.len().next_multiple_of(32);
    for (i, (layer, step)) in hidden.iter().zip(&plan.hidden).enumerate() {
        let (x, listed): (&[u8], _) = match plan.input_of(i) {
            // The blocks hold `input`'s list until a layer lists its own.
            None if i == 0 => (input, listed),
            None => (input, Groups::Unknown),
            Some(before) => (&acts[whole(&before)], Groups::Unknown),
        };
        debug_assert!(x.len() >= layer.stride());
        let out = &mut sums[..];
        affine(kernels, layer, x, out, blocks, listed);
        if i == 0 {
            skip = match plan.skip {
                SkipRead::None => 0,
                SkipRead::Sum(k) => out[k],
                SkipRead::Difference(a, b) => out[a].wrapping_sub(out[b]),
            };
        }
        // Whether the activations' writing also zeroed the padding after them.
        let padded = step.activation.activate(
            kernels.level(),
            out,
            step.width,
            step.shift,
            &mut acts[step.acts.start..],
        );
        if !padded {
            zero(&mut acts[step.acts.end..whole(&step.acts).end]);
        }
    }
    let reads = whole(&plan.output.reads);
    // A dense output's reads end where no layer padded them.
    zero(&mut acts[plan.output.reads.end..reads.end]);
    let mut out = [0i32];
    affine(
        kernels,
        &output[0],
        &acts[reads],
        &mut out,
        blocks,
        Groups::Unknown,
    );
    (out[0], skip)
}

/// Zeroes the padding `bytes` after a layer's activations (fewer than 32), calling no `memset`
/// for none: the padding is usually empty, and a call costs more than the check.
#[inline(always)]
fn zero(bytes: &mut [u8]) {
    if !bytes.is_empty() {
        bytes.fill(0);
    }
}

/// The positional term of the output layer's sum `out` and the skip value `skip` under the
/// shape's output rule: `out + skip · 9600 / 8128` (15.1, 32-bit wrapping), or
/// `(out + skip) · 9600 / 16384` in 64 bits (today); C++'s truncating divisions.
#[inline]
pub fn positional(arch: &Arch, out: i32, skip: i32) -> i32 {
    match (arch.output, arch.skip) {
        (OutputRule::StockfishScaled, _) => {
            let sum = i64::from(out.wrapping_add(skip));
            (sum * i64::from(OUTPUT_ONE) / i64::from(SCALED_OUTPUT_ONE)) as i32
        }
        (_, Skip::ExtraOutput) => out.wrapping_add(skip.wrapping_mul(OUTPUT_ONE) / HIDDEN_ONE),
        _ => out,
    }
}

/// [`StackPath::SparseCreluToOutput`]: the hidden layer's sums (read sparsely, one pass) clipped,
/// `clamp(y >> 6, 0, 127)`, and dotted with the output weights at once.
#[inline(always)]
fn sparse_crelu_to_output(
    kernels: Kernels,
    stack: &[Affine],
    (input, listed): (&[u8], Groups),
    scratch: &mut LayerScratch,
) -> i32 {
    let [hidden, output] = stack else {
        unreachable!("the path is chosen for stacks of two layers");
    };
    let LayerScratch { sums, blocks, .. } = scratch;
    affine(kernels, hidden, input, sums, blocks, listed);
    let (y, w) = (&sums[..hidden.outputs()], output.weights());
    let dot = match kernels.level() {
        SimdLevel::Scalar => crelu_dot(y, w),
        // SAFETY: every SIMD level has AVX2 (checked against the CPU).
        #[cfg(target_arch = "x86_64")]
        _ => unsafe { crelu_dot_avx2(y, w) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("only the scalar kernels exist on this architecture"),
    };
    output.biases()[0].wrapping_add(dot)
}

/// `Σ clamp(y >> 6, 0, 127) · w` over the sums `y` and the weights `w` (wrapping).
#[inline(always)]
fn crelu_dot(y: &[i32], w: &[i8]) -> i32 {
    y.iter().zip(w).fold(0i32, |s, (&y, &w)| {
        s.wrapping_add((y >> 6).clamp(0, 127) * i32::from(w))
    })
}

/// [`crelu_dot`] with AVX2, eight sums at a time (what the thesis's engine did after its
/// hidden layer: shift, clamp and the output's dot product in registers); the rest scalar.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn crelu_dot_avx2(y: &[i32], w: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = y.len().min(w.len());
    let (zero, clip) = (_mm256_setzero_si256(), _mm256_set1_epi32(127));
    let mut acc = _mm256_setzero_si256();
    let mut k = 0;
    while k + 8 <= n {
        // SAFETY: k + 8 <= n: eight sums of y and eight weights of w.
        unsafe {
            let v = _mm256_srai_epi32::<6>(_mm256_loadu_si256(y.as_ptr().add(k).cast()));
            let a = _mm256_min_epi32(_mm256_max_epi32(v, zero), clip);
            let b = _mm256_cvtepi8_epi32(_mm_loadl_epi64(w.as_ptr().add(k).cast()));
            acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(a, b));
        }
        k += 8;
    }
    let half = _mm_add_epi32(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256::<1>(acc),
    );
    let quarter = _mm_add_epi32(half, _mm_unpackhi_epi64(half, half));
    let total = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b01>(quarter));
    _mm_cvtsi128_si32(total).wrapping_add(crelu_dot(&y[k..n], &w[k..n]))
}

/// The terms of stack `stack` (and PSQT bucket `bucket`) from both perspectives' accumulators
/// and PSQT sums (side to move's first; the PSQT sums are empty without PSQT).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn stack_output(
    kernels: Kernels,
    net: &Network,
    stm: &[i16],
    opp: &[i16],
    psqt: (&[i32], &[i32]),
    stack: usize,
    bucket: usize,
    scratch: &mut ForwardScratch,
) -> StackOutput {
    let arch = net.arch();
    let ForwardScratch { input, layers } = scratch;
    let listed = transform(
        kernels,
        arch,
        stm,
        opp,
        input,
        &mut layers.blocks,
        !layers.dense,
    );
    layers.dense = match listed {
        Groups::Listed(n) | Groups::Counted(n) => mostly_nonzero(n, input.len() / 4),
        Groups::Unknown => false,
    };
    let layers_of = &net.stacks()[stack];
    let input = (&input[..], listed);
    let (out, skip) = match net.stack_path() {
        StackPath::SparseCreluToOutput => {
            (sparse_crelu_to_output(kernels, layers_of, input, layers), 0)
        }
        StackPath::Layers => propagate(kernels, net.plan(), layers_of, input, layers),
    };
    let positional = positional(arch, out, skip);
    let psqt = if arch.psqt_buckets > 0 {
        psqt.0[bucket].wrapping_sub(psqt.1[bucket]) / 2
    } else {
        0
    };
    StackOutput { psqt, positional }
}

/// The evaluation for the side to move of a position with `pieces` pieces.
#[inline(always)]
pub fn evaluate(
    kernels: Kernels,
    net: &Network,
    stm: &[i16],
    opp: &[i16],
    psqt: (&[i32], &[i32]),
    pieces: u32,
    scratch: &mut ForwardScratch,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Affine;

    /// A wide layer's sums are the same whatever its writer knew of its non-zero blocks: listed,
    /// counted (nearly all, read as every block; or sparse, then listed apart), or nothing.
    #[test]
    fn a_wide_layer_reads_listed_counted_and_unknown_inputs_alike() {
        let (inputs, outputs) = (1024usize, 32usize);
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let weights: Vec<i8> = (0..inputs * outputs).map(|_| next() as i8).collect();
        let biases: Vec<i32> = (0..outputs).map(|_| next() as i32 % 1000).collect();
        let layer = Affine::new(inputs, outputs, &weights, &biases);
        // Nearly every block non-zero, then a sparse input.
        for zero_blocks in [3usize, 200] {
            let mut x: Vec<u8> = (0..inputs).map(|_| (next() % 128) as u8).collect();
            for b in 0..zero_blocks {
                let at = 4 * ((b * 37) % (inputs / 4));
                x[at..at + 4].fill(0);
            }
            let n = x.chunks_exact(4).filter(|g| *g != [0; 4]).count();
            assert_eq!(mostly_nonzero(n, inputs / 4), zero_blocks == 3);
            for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
                let kernels = Kernels::new(level).unwrap();
                let sums_of = |groups: Groups, blocks: &mut Vec<u16>| {
                    let mut sums = vec![0i32; outputs];
                    affine(kernels, &layer, &x, &mut sums, blocks, groups);
                    sums
                };
                let mut blocks = vec![0u16; inputs / 4];
                let expected = sums_of(Groups::Unknown, &mut blocks);
                let listed = sums_of(Groups::Listed(n), &mut blocks);
                // A stale list in the blocks must not be read for a counted input.
                blocks.fill(u16::MAX / 2);
                let counted = sums_of(Groups::Counted(n), &mut blocks);
                assert_eq!((&listed, &counted), (&expected, &expected), "{level}");
            }
        }
    }

    /// The first layer's output of every kernel level equals the scalar one, and the non-zero
    /// groups a level lists while writing it are the groups `find_nnz` finds in it.
    #[test]
    fn transform_lists_the_non_zero_groups_it_writes() {
        let mut seed = 5u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as i16
        };
        for arch in [Arch::sfnnv5(), Arch::sfnnv16()] {
            for l1 in [64usize, 128, 1024] {
                // Most values at or below 0 (clipped to zero), some groups all zero.
                let mut acc = || -> Vec<i16> {
                    (0..l1)
                        .map(|k| match k % 16 < 5 {
                            true => 0,
                            false => (next() >> 6).clamp(-200, 400),
                        })
                        .collect()
                };
                let (stm, opp) = (acc(), acc());
                let mut expected = vec![0u8; l1];
                transform_any(&arch, &stm, &opp, &mut expected);
                for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
                    let kernels = Kernels::new(level).unwrap();
                    let (mut out, mut nnz) = (vec![0u8; l1], vec![u16::MAX; l1 / 4]);
                    let listed = transform(kernels, &arch, &stm, &opp, &mut out, &mut nnz, true);
                    assert_eq!(out, expected, "{level} l1={l1}");
                    let Groups::Listed(n) = listed else {
                        assert_eq!(level, SimdLevel::Scalar, "{level} lists");
                        continue;
                    };
                    let groups: Vec<u16> = (0..l1 / 4)
                        .filter(|g| out[4 * g..4 * g + 4] != [0; 4])
                        .map(|g| g as u16)
                        .collect();
                    assert!(!groups.is_empty() && groups.len() < l1 / 4);
                    assert_eq!(&nnz[..n], &groups[..], "{level} l1={l1}");
                    // Counted, not listed: the same output and number.
                    let mut counted = vec![0u8; l1];
                    let groups_counted =
                        transform(kernels, &arch, &stm, &opp, &mut counted, &mut nnz, false);
                    assert_eq!(counted, expected, "{level} l1={l1}");
                    assert_eq!(groups_counted, Groups::Counted(n), "{level} l1={l1}");
                }
            }
        }
    }
}
