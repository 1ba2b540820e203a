//! The clipped ReLU after a hidden layer: `clamp(y >> s, 0, 127)` of each sum, as many outputs
//! as inputs (Stockfish's `layers/clipped_relu.h`, `clipped_relu.h:169-172` at `sf_15.1`).

use crate::simd::SimdLevel;

/// Writes the activations of the `width` sums `sums` at shift `shift` into `acts`; returns
/// whether that also zeroed the padding up to the next run of 32 (the next layer reads whole
/// runs).
#[inline(always)]
pub(super) fn activate(
    level: SimdLevel,
    sums: &[i32],
    width: usize,
    shift: u32,
    acts: &mut [u8],
) -> bool {
    // Runs of 32 in one store (the next layer loads them whole; several narrow stores under
    // one wide load would make it wait).
    #[cfg(target_arch = "x86_64")]
    if width.is_multiple_of(32) && level != SimdLevel::Scalar {
        for k in (0..width).step_by(32) {
            let y: &[i32; 32] = sums[k..k + 32].try_into().expect("32 sums");
            let a: &mut [u8; 32] = (&mut acts[k..k + 32]).try_into().expect("32 bytes");
            // SAFETY: every SIMD level has AVX2 (checked against the CPU).
            unsafe { clipped_relu_32_avx2(y, shift, a) };
        }
        return true;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    for (a, &y) in acts.iter_mut().zip(&sums[..width]) {
        *a = (y >> shift).clamp(0, 127) as u8;
    }
    false
}

/// The reference's activations of the sums `y` at shift `shift`, in 64 bits (`div_euclid`: the
/// arithmetic shift's rounding toward −∞).
pub(super) fn reference(y: &[i64], shift: u32) -> Vec<i64> {
    y.iter()
        .map(|&v| v.div_euclid(1 << shift).clamp(0, 127))
        .collect()
}

/// The clipped ReLU `clamp(y >> 6, 0, 127)` of 32 sums, stored at once: shift, pack with
/// saturation to `i16` then `i8`, clamp at zero and restore the order the packs interleave by
/// 128-bit lane (Stockfish's `layers/clipped_relu.h`, AVX2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn clipped_relu_32_avx2(y: &[i32; 32], shift: u32, out: &mut [u8; 32]) {
    use std::arch::x86_64::*;
    let by = _mm_cvtsi32_si128(shift as i32);
    // SAFETY: the loads read y's 32 values and the store writes out's 32 bytes.
    unsafe {
        let load =
            |k: usize| _mm256_sra_epi32(_mm256_loadu_si256(y.as_ptr().add(8 * k).cast()), by);
        let bytes = bytes_32_avx2([load(0), load(1), load(2), load(3)]);
        let bytes = _mm256_max_epi8(bytes, _mm256_setzero_si256());
        _mm256_storeu_si256(out.as_mut_ptr().cast(), bytes);
    }
}

/// 32 values of `i32` (four registers of 8, in order) as 32 bytes in order, saturated to `i8`:
/// packs to `i16` then `i8`, and the 128-bit lanes the packs interleave put back in order.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn bytes_32_avx2(
    [a, b, c, d]: [std::arch::x86_64::__m256i; 4],
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}
