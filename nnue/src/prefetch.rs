//! Software prefetches: asking for a cache line before it is read, so that the misses of rows
//! scattered over tens of megabytes (threat rows, PSQT rows) overlap instead of waiting one
//! after another.

/// Asks for the cache line holding `at` (it may point anywhere: a prefetch never faults, and the
/// address is not dereferenced); nothing on other architectures than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64; a prefetch never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
