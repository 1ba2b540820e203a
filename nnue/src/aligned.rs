//! Heap buffers aligned to 64 bytes (one cache line, one AVX-512 register).
//!
//! Weight rows and accumulators live in these buffers so that every row of a first-layer weight
//! matrix (L1 `i16` values, L1 a multiple of 32, so a multiple of 64 bytes) starts on a cache-line
//! boundary and the SIMD kernels never split a load across two lines.

use std::alloc::{Layout, alloc, alloc_zeroed, dealloc, handle_alloc_error};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Alignment of every [`AlignedVec`] in bytes.
pub const ALIGN: usize = 64;

mod sealed {
    /// Plain integer types for which the all-zero bit pattern is a valid value.
    pub trait Zeroable: Copy + Send + Sync + 'static {}
    impl Zeroable for i8 {}
    impl Zeroable for u8 {}
    impl Zeroable for i16 {}
    impl Zeroable for u16 {}
    impl Zeroable for i32 {}
    impl Zeroable for u32 {}
}

/// The integer types an [`AlignedVec`] can hold (all-zero bytes are a valid value of each).
pub trait Element: sealed::Zeroable {}
impl<T: sealed::Zeroable> Element for T {}

/// A fixed-length, zero-initialised, 64-byte aligned array of plain integers.
///
/// Its length is set at creation and never changes, so no operation on it allocates after
/// [`zeroed`](Self::zeroed) or [`from_slice`](Self::from_slice).
pub struct AlignedVec<T: Element> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: AlignedVec owns its elements exactly like a Vec<T> of plain integers.
unsafe impl<T: Element> Send for AlignedVec<T> {}
// SAFETY: shared access only hands out &[T].
unsafe impl<T: Element> Sync for AlignedVec<T> {}

/// Buffers of at least this many bytes are aligned to it and asked to live on transparent huge
/// pages (Linux `madvise(MADV_HUGEPAGE)`, as Stockfish allocates its weights and the engine its
/// transposition table): a first layer of tens of MiB read at random rows otherwise pays a TLB
/// miss per row.
pub const HUGE_PAGE: usize = 2 << 20;

impl<T: Element> AlignedVec<T> {
    fn layout(len: usize) -> Layout {
        let bytes = len
            .checked_mul(size_of::<T>())
            .expect("aligned buffer size overflows usize");
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { ALIGN };
        Layout::from_size_align(bytes.max(1), align).expect("aligned buffer too large")
    }

    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        if len == 0 {
            return AlignedVec {
                ptr: NonNull::dangling(),
                len: 0,
            };
        }
        let layout = Self::layout(len);
        let raw = if layout.align() == HUGE_PAGE {
            // SAFETY: the layout has a non-zero size.
            let raw = unsafe { alloc(layout) };
            if !raw.is_null() {
                #[cfg(target_os = "linux")]
                // SAFETY: advice on memory this buffer owns; failure only loses the speed-up.
                unsafe {
                    libc::madvise(raw.cast(), layout.size(), libc::MADV_HUGEPAGE);
                }
                // SAFETY: `raw` holds `layout.size()` bytes; zero is a valid value of T.
                unsafe { std::ptr::write_bytes(raw, 0, layout.size()) };
            }
            raw
        } else {
            // SAFETY: the layout has a non-zero size.
            unsafe { alloc_zeroed(layout) }
        } as *mut T;
        let Some(ptr) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        AlignedVec { ptr, len }
    }

    /// A copy of `values`.
    pub fn from_slice(values: &[T]) -> Self {
        let mut v = Self::zeroed(values.len());
        v.copy_from_slice(values);
        v
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Element> Drop for AlignedVec<T> {
    fn drop(&mut self) {
        if self.len != 0 {
            // SAFETY: allocated in `zeroed` with this very layout.
            unsafe { dealloc(self.ptr.as_ptr() as *mut u8, Self::layout(self.len)) };
        }
    }
}

impl<T: Element> Deref for AlignedVec<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: ptr points to len initialised elements (or is dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> DerefMut for AlignedVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> Clone for AlignedVec<T> {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl<T: Element + PartialEq> PartialEq for AlignedVec<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Element + Eq> Eq for AlignedVec<T> {}

impl<T: Element> fmt::Debug for AlignedVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AlignedVec<{}>[{}]",
            std::any::type_name::<T>(),
            self.len
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_copied() {
        for len in [0usize, 1, 31, 64, 1000] {
            let v = AlignedVec::<i16>::zeroed(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 0));
            if len > 0 {
                assert_eq!(v.as_ptr() as usize % ALIGN, 0);
            }
            let src: Vec<i16> = (0..len as i16).collect();
            let c = AlignedVec::from_slice(&src);
            assert_eq!(&*c, &src[..]);
            assert_eq!(c.clone(), c);
        }
    }
}
