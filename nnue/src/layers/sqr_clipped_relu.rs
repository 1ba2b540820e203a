//! Stockfish's squared clipped ReLU beside the plain one after a hidden layer: `[min(127, y² >>
//! (2s + 7)) ‖ clamp(y >> s, 0, 127)]`, twice as many outputs as inputs, the squares first
//! (`layers/sqr_clipped_relu.h`, `sqr_clipped_relu.h:86-111` at `sf_15.1`; the square of the
//! signed value).

use crate::simd::SimdLevel;

/// Writes the `2 · width` activations of the `width` sums `sums` at shift `shift` into `acts`
/// (squares, then plain values); returns whether that also zeroed the padding up to the next
/// run of 32.
#[inline(always)]
pub(super) fn activate(
    level: SimdLevel,
    sums: &[i32],
    width: usize,
    shift: u32,
    acts: &mut [u8],
) -> bool {
    // The SIMD kernels square in 32 bits, which holds the square's cap for shifts up to 8.
    let level = match shift {
        0..=SIMD_MAX_SHIFT => level,
        _ => SimdLevel::Scalar,
    };
    #[cfg(target_arch = "x86_64")]
    if width.is_multiple_of(32) && level != SimdLevel::Scalar {
        let (squares, plain) = acts[..2 * width].split_at_mut(width);
        // SAFETY: every SIMD level has AVX2 (checked against the CPU).
        unsafe { sqr_and_clipped_32s_avx2(&sums[..width], shift, squares, plain) };
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if width <= 16 && level != SimdLevel::Scalar {
        let y: &[i32; 16] = sums[..16].try_into().expect("16 sums");
        let a: &mut [u8; 32] = (&mut acts[..32]).try_into().expect("32 bytes");
        // SAFETY: every SIMD level has AVX2 (checked against the CPU).
        unsafe { sqr_and_clipped_16_avx2(y, width, shift, a) };
        return true;
    }
    // Last run first: see below.
    for (c, y) in sums[..width.next_multiple_of(16)]
        .chunks_exact(16)
        .enumerate()
        .rev()
    {
        let (mut sq, mut plain) = ([0u8; 16], [0u8; 16]);
        let y: &[i32; 16] = y.try_into().expect("16 sums");
        match level {
            SimdLevel::Scalar => sqr_and_clipped(y, shift, &mut sq, &mut plain),
            // SAFETY: every SIMD level has AVX2 (checked against the CPU).
            #[cfg(target_arch = "x86_64")]
            _ => unsafe { sqr_and_clipped_avx2(y, shift, &mut sq, &mut plain) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("only the scalar kernels exist on this architecture"),
        }
        // Whole runs of 16 (fixed-size moves, not a copy routine per run): the last run of
        // squares spills past them into the first plain values' place, which those take
        // afterwards (the runs go last to first), and the last plain run into the padding the
        // next layer zeroes.
        let (at_sq, at_plain) = (16 * c, width + 16 * c);
        acts[at_sq..at_sq + 16].copy_from_slice(&sq);
        acts[at_plain..at_plain + 16].copy_from_slice(&plain);
    }
    false
}

/// The reference's activations of the sums `y` at shift `shift`, in 64 bits: the squares of
/// all, then the clipped values of all.
pub(super) fn reference(y: &[i64], shift: u32) -> Vec<i64> {
    let square = |v: i64| (v * v / (1i64 << (2 * shift + 7))).min(127);
    let crelu = super::clipped_relu::reference(y, shift);
    y.iter().map(|&v| square(v)).chain(crelu).collect()
}

/// The largest shift at which the SIMD kernels' squares are exact: they cap `|y|` at 32,767 so
/// that the square fits 32 bits (Stockfish's `vpackssdw` saturates the same way,
/// `sqr_clipped_relu.h:86-111`), and beyond the cap the square must still reach 127:
/// `32767² >> (2s + 7) ≥ 127` for `s ≤ 8`.
const SIMD_MAX_SHIFT: u32 = 8;

/// The squared clipped ReLU `min(127, y² >> (2s + 7))` and the clipped ReLU
/// `clamp(y >> s, 0, 127)` of 16 sums at shift `s` (Stockfish's 6: `y² >> 19`, `y >> 6`), the
/// square in 64 bits: exact at every shift.
#[inline(always)]
fn sqr_and_clipped(y: &[i32; 16], shift: u32, sq: &mut [u8; 16], plain: &mut [u8; 16]) {
    for k in 0..16 {
        let a = u64::from(y[k].unsigned_abs());
        sq[k] = ((a * a) >> (2 * shift + 7)).min(127) as u8;
        plain[k] = (y[k] >> shift).clamp(0, 127) as u8;
    }
}

/// [`sqr_and_clipped`] compiled for AVX2 (one vector operation per step for all 16).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sqr_and_clipped_avx2(y: &[i32; 16], shift: u32, sq: &mut [u8; 16], plain: &mut [u8; 16]) {
    sqr_and_clipped(y, shift, sq, plain)
}

/// [`sqr_and_clipped`] of a layer whose width is a multiple of 32, 32 sums at a time, each run
/// of squares and of plain values in one 32-byte store (Stockfish's `sqr_clipped_relu.h` and
/// `clipped_relu.h` one after the other): one call for the whole layer.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sqr_and_clipped_32s_avx2(y: &[i32], shift: u32, squares: &mut [u8], plain: &mut [u8]) {
    use std::arch::x86_64::*;
    let n = y.len();
    assert!(n.is_multiple_of(32) && squares.len() == n && plain.len() == n);
    let by = _mm_cvtsi32_si128(shift as i32);
    // Stockfish's own way for shifts 5 (2s + 7 ≥ 16) to 8: the sums saturated to `i16` once,
    // the square's high half (`vpmulhw`) shifted by the rest, the plain value shifted in 16 bits
    // (`sqr_clipped_relu.h`, `clipped_relu.h` at 762dd1da9). Equal to the 32-bit way: a sum
    // beyond the `i16` range gives 127 (square and positive) or 0 both ways when
    // `32767² >> (2s + 7)` and `32767 >> s` are at least 127.
    if (5..=SIMD_MAX_SHIFT).contains(&shift) {
        let by_high = _mm_cvtsi32_si128(2 * shift as i32 + 7 - 16);
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for k in (0..n).step_by(32) {
            // SAFETY: as below.
            unsafe {
                let load = |r: usize| _mm256_loadu_si256(y.as_ptr().add(k + 8 * r).cast());
                let (ab, cd) = (
                    _mm256_packs_epi32(load(0), load(1)),
                    _mm256_packs_epi32(load(2), load(3)),
                );
                let square = |v: __m256i| _mm256_srl_epi16(_mm256_mulhi_epi16(v, v), by_high);
                let sq = _mm256_packs_epi16(square(ab), square(cd));
                let clipped =
                    _mm256_packs_epi16(_mm256_sra_epi16(ab, by), _mm256_sra_epi16(cd, by));
                let clipped = _mm256_max_epi8(clipped, _mm256_setzero_si256());
                let (sq, clipped) = (
                    _mm256_permutevar8x32_epi32(sq, order),
                    _mm256_permutevar8x32_epi32(clipped, order),
                );
                _mm256_storeu_si256(squares.as_mut_ptr().add(k).cast(), sq);
                _mm256_storeu_si256(plain.as_mut_ptr().add(k).cast(), clipped);
            }
        }
        return;
    }
    let (by_square, limit) = (
        _mm_cvtsi32_si128(2 * shift as i32 + 7),
        _mm256_set1_epi32(32767),
    );
    for k in (0..n).step_by(32) {
        // SAFETY: k + 32 <= n: the loads read y's values k .. k + 32 and the stores write
        // 32 bytes of each output from k.
        unsafe {
            let v: [__m256i; 4] =
                std::array::from_fn(|r| _mm256_loadu_si256(y.as_ptr().add(k + 8 * r).cast()));
            let square = |v: __m256i| {
                let a = _mm256_min_epu32(_mm256_abs_epi32(v), limit);
                _mm256_srl_epi32(_mm256_mullo_epi32(a, a), by_square)
            };
            let sq = super::clipped_relu::bytes_32_avx2(v.map(square));
            let clipped = super::clipped_relu::bytes_32_avx2(v.map(|v| _mm256_sra_epi32(v, by)));
            let clipped = _mm256_max_epi8(clipped, _mm256_setzero_si256());
            _mm256_storeu_si256(squares.as_mut_ptr().add(k).cast(), sq);
            _mm256_storeu_si256(plain.as_mut_ptr().add(k).cast(), clipped);
        }
    }
}

/// Byte shuffles that lay the squared and the plain activations of a layer of `w` ≤ 16 outputs
/// side by side in 32 bytes (`[sq; w] [plain; w] [0; 32 − 2w]`), indexed by `w`: the squares
/// kept (`[0]`), the plain values moved up by `w` within the low 16 bytes (`[1]`) and into the
/// high 16 (`[2]`); 0x80 makes a zero.
#[cfg(target_arch = "x86_64")]
const SIDE_BY_SIDE: [[[u8; 16]; 3]; 17] = {
    let mut t = [[[0x80u8; 16]; 3]; 17];
    let mut w = 0;
    while w <= 16 {
        let mut k = 0;
        while k < 16 {
            if k < w {
                t[w][0][k] = k as u8;
            }
            if k >= w && k < 2 * w {
                t[w][1][k] = (k - w) as u8;
            }
            if 16 + k < 2 * w {
                t[w][2][k] = (16 + k - w) as u8;
            }
            k += 1;
        }
        w += 1;
    }
    t
};

/// [`sqr_and_clipped`] of a layer of `width` ≤ 16 outputs (16 sums, the rest ignored), its
/// squares and plain values side by side and zeros after them, in one 32-byte store: what the
/// next layer reads as its inputs (several narrow stores under its loads would make them wait).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sqr_and_clipped_16_avx2(y: &[i32; 16], width: usize, shift: u32, out: &mut [u8; 32]) {
    use std::arch::x86_64::*;
    assert!(width <= 16);
    let (by, by_square) = (
        _mm_cvtsi32_si128(shift as i32),
        _mm_cvtsi32_si128(2 * shift as i32 + 7),
    );
    // SAFETY: the loads read y's 16 values and the table's rows, the store out's 32 bytes.
    unsafe {
        let (y0, y1) = (
            _mm256_loadu_si256(y.as_ptr().cast()),
            _mm256_loadu_si256(y.as_ptr().add(8).cast()),
        );
        // 16 values of i32 to 16 bytes in order, saturating (packs interleave 128-bit lanes).
        let bytes = |a: __m256i, b: __m256i| {
            let w = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(a, b));
            _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256::<1>(w))
        };
        let limit = _mm256_set1_epi32(32767);
        let square = |v: __m256i| {
            let a = _mm256_min_epu32(_mm256_abs_epi32(v), limit);
            _mm256_srl_epi32(_mm256_mullo_epi32(a, a), by_square)
        };
        let sq = bytes(square(y0), square(y1));
        let plain = _mm_max_epi8(
            bytes(_mm256_sra_epi32(y0, by), _mm256_sra_epi32(y1, by)),
            _mm_setzero_si128(),
        );
        let [keep, low, high] = SIDE_BY_SIDE[width].map(|m| _mm_loadu_si128(m.as_ptr().cast()));
        let lo = _mm_or_si128(_mm_shuffle_epi8(sq, keep), _mm_shuffle_epi8(plain, low));
        let hi = _mm_shuffle_epi8(plain, high);
        _mm256_storeu_si256(out.as_mut_ptr().cast(), _mm256_set_m128i(hi, lo));
    }
}
