//! The kernel versions ([`SimdLevel`], [`Kernels`]: a portable scalar version and AVX2, AVX-512
//! (BW) and AVX-512 VNNI versions chosen at run time) and the first layer's kernels: the
//! accumulator updates, the clipped ReLU of an accumulator, and the listing of the non-zero
//! blocks of four activations that the sparse layers read (the layers after the first are in
//! [`crate::forward`]).
//!
//! Every version computes exactly the same integers (see the [module docs](super) for the
//! arithmetic): 16-bit accumulator sums wrap in all of them, and the clipped ReLU is a
//! saturating pack then a maximum with zero (`clamp(a, 0, 127)`).

use std::fmt;

use super::aligned::AlignedVec;
use super::first_layer::{FirstLayer, RowLists, WeightType};
use super::scales::ACTIVATION_CLIP;

/// Environment variable that forces a kernel version: `scalar`, `avx2`, `avx512` or
/// `avx512vnni` (unset or empty: the best the CPU has).
pub const SIMD_ENV: &str = "NNUE_SIMD";

/// Environment variable naming a kernel version the tests must compare (`avx2`, `avx512vnni`,
/// ...): where it is set, a test on a machine that cannot run that version fails, naming it,
/// instead of silently comparing fewer versions ([`SimdLevel::under_test`]).
/// `scripts/test.sh` asks for `avx2` unless told otherwise.
pub const TEST_SIMD_ENV: &str = "NNUE_TEST_SIMD";

/// The one line a binary prints and stops with when the CPU lacks a feature this build's code
/// assumes everywhere (on x86-64 every crate is compiled with POPCNT, `.cargo/config.toml`):
/// `host` and `trainer` call this first, so that an older CPU gets this line instead of an
/// illegal instruction. `None` on a CPU that has them all.
pub fn missing_build_feature() -> Option<String> {
    #[cfg(all(target_arch = "x86_64", target_feature = "popcnt"))]
    if !is_x86_feature_detected!("popcnt") {
        return Some(
            "this build assumes a CPU with popcnt (every x86-64 CPU since 2009); rebuild with \
             RUSTFLAGS=\"-C target-cpu=x86-64\" for this one"
                .to_string(),
        );
    }
    None
}

/// A version of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdLevel {
    /// Portable Rust (the compiler may still vectorise it for the baseline target).
    Scalar,
    /// 256-bit AVX2: `vpaddw`, `vpmaddubsw` + `vpmaddwd`.
    Avx2,
    /// 512-bit AVX-512 F + BW: the AVX2 kernels at twice the width.
    Avx512,
    /// AVX-512 with VNNI: the hidden layer with `vpdpbusd` (one instruction per 64 products).
    Avx512Vnni,
}

impl SimdLevel {
    /// All versions, from the most portable to the widest.
    pub const ALL: [SimdLevel; 4] = [
        SimdLevel::Scalar,
        SimdLevel::Avx2,
        SimdLevel::Avx512,
        SimdLevel::Avx512Vnni,
    ];

    /// The name used by [`SIMD_ENV`] and the command line.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
            SimdLevel::Avx512Vnni => "avx512vnni",
        }
    }

    /// Whether this CPU can run this version.
    pub fn is_supported(self) -> bool {
        match self {
            SimdLevel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => {
                is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("popcnt")
            }
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512Vnni => {
                SimdLevel::Avx512.is_supported() && is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The versions this CPU can run, most portable first.
    pub fn supported() -> Vec<SimdLevel> {
        Self::ALL.into_iter().filter(|l| l.is_supported()).collect()
    }

    /// The widest version this CPU can run.
    pub fn best() -> SimdLevel {
        Self::ALL
            .into_iter()
            .rev()
            .find(|l| l.is_supported())
            .unwrap_or(SimdLevel::Scalar)
    }

    /// The version [`SIMD_ENV`] asks for, or [`best`](Self::best) when it is unset or empty; an
    /// error when it names an unknown or unsupported version.
    pub fn from_env() -> Result<SimdLevel, SimdError> {
        match std::env::var(SIMD_ENV) {
            Ok(v) if !v.trim().is_empty() => v
                .parse::<SimdLevel>()
                .and_then(SimdLevel::check)
                .map_err(|e| SimdError::Env(Box::new(e))),
            _ => Ok(Self::best()),
        }
    }

    /// The versions a test compares: every one this CPU runs; an error naming
    /// [`TEST_SIMD_ENV`] when that variable asks for a version this CPU cannot run.
    pub fn under_test() -> Result<Vec<SimdLevel>, SimdError> {
        let demanded = std::env::var(TEST_SIMD_ENV).ok();
        Self::levels_under_test(demanded.as_deref(), &Self::supported())
    }

    /// [`under_test`](Self::under_test) for a demanded version (`None` or empty: none) and the
    /// versions a CPU runs.
    fn levels_under_test(
        demanded: Option<&str>,
        supported: &[SimdLevel],
    ) -> Result<Vec<SimdLevel>, SimdError> {
        if let Some(name) = demanded.map(str::trim).filter(|d| !d.is_empty()) {
            let level = name
                .parse::<SimdLevel>()
                .map_err(|e| SimdError::TestEnv(Box::new(e)))?;
            if !supported.contains(&level) {
                return Err(SimdError::TestEnv(Box::new(SimdError::Unsupported {
                    level,
                    supported: supported.to_vec(),
                })));
            }
        }
        Ok(supported.to_vec())
    }

    /// `Ok(self)` if supported, else a one-line error.
    pub fn check(self) -> Result<SimdLevel, SimdError> {
        if self.is_supported() {
            Ok(self)
        } else {
            Err(SimdError::Unsupported {
                level: self,
                supported: Self::supported(),
            })
        }
    }
}

/// A kernel version that cannot be used. `Display`: one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimdError {
    /// A name that is no version.
    #[error("unknown kernel version '{0}' (expected scalar, avx2, avx512 or avx512vnni)")]
    Unknown(String),
    /// A version this CPU cannot run.
    #[error(
        "this CPU cannot run the {level} kernels (supported: {})",
        names(supported)
    )]
    Unsupported {
        /// The version asked for.
        level: SimdLevel,
        /// What this CPU runs.
        supported: Vec<SimdLevel>,
    },
    /// [`SIMD_ENV`] names a version that cannot be used.
    #[error("{SIMD_ENV}: {0}")]
    Env(Box<SimdError>),
    /// [`TEST_SIMD_ENV`] names a version the tests cannot compare here.
    #[error("{TEST_SIMD_ENV}: {0}")]
    TestEnv(Box<SimdError>),
}

/// `scalar, avx2`: the names of `levels`.
fn names(levels: &[SimdLevel]) -> String {
    levels
        .iter()
        .map(|l| l.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for SimdLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SimdLevel {
    type Err = SimdError;
    fn from_str(s: &str) -> Result<Self, SimdError> {
        let s = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or(SimdError::Unknown(s))
    }
}

/// A kernel version checked against the CPU: the only way to call the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernels {
    level: SimdLevel,
}

impl Kernels {
    /// The kernels of `level`, or an error if this CPU cannot run them.
    pub fn new(level: SimdLevel) -> Result<Kernels, SimdError> {
        level.check().map(|level| Kernels { level })
    }

    /// The best kernels of this CPU.
    pub fn best() -> Kernels {
        Kernels {
            level: SimdLevel::best(),
        }
    }

    /// The version in use.
    pub fn level(self) -> SimdLevel {
        self.level
    }

    /// Calls `f` with these kernels from a copy of it compiled for their version: inside `f`
    /// (inlined into that copy) the level is a constant, so its kernels can be inlined and its
    /// tests of the level fold away, as in a build for one CPU (Stockfish's). For a whole pass
    /// that calls many kernels, such as the layers of one evaluation.
    #[inline(always)]
    pub fn compiled<R>(self, f: impl FnOnce(Kernels) -> R) -> R {
        // SAFETY: the level was checked against the CPU when `self` was made.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            match self.level {
                SimdLevel::Avx2 => return x86::compiled_avx2(self, f),
                SimdLevel::Avx512 => return x86::compiled_avx512(self, f),
                SimdLevel::Avx512Vnni => return x86::compiled_vnni(self, f),
                SimdLevel::Scalar => {}
            }
        }
        f(self)
    }

    /// `dst = src + Σ rows.added − Σ rows.removed` (16-bit wrapping), rows of `w1` of L1 =
    /// `dst.len()` values; the `i8` rows are widened as they are added.
    ///
    /// Panics if the lengths disagree or a row is not one of `w1`'s.
    #[inline]
    pub fn update(self, dst: &mut [i16], src: &[i16], w1: &FirstLayer, row_lists: &RowLists) {
        self.update_into(dst, None, Some(src), w1, row_lists, None);
    }

    /// [`update`](Self::update) that also sums the PSQT rows of the listed rows in the same
    /// pass (Stockfish's `apply_combined`, `src/nnue/nnue_accumulator.cpp` at 762dd1da9):
    /// `psqt_dst = psqt_src + Σ added − Σ removed` over `psqt_rows` (wrapping `i32`), whose
    /// rows of 8 buckets are in the storage order of the `i16` (slot 0) and `i8` (slot 1) rows.
    /// Other bucket counts take [`RowLists::apply_psqt`].
    ///
    /// Panics if the lengths disagree or a row is not one of `w1`'s or of `psqt_rows`'.
    #[inline]
    pub fn update_with_psqt(
        self,
        (dst, src): (&mut [i16], &[i16]),
        (psqt_dst, psqt_src): (&mut [i32; 8], &[i32; 8]),
        w1: &FirstLayer,
        psqt_rows: &[AlignedVec<i32>; 2],
        row_lists: &RowLists,
    ) {
        let psqt = Psqt8::checked(psqt_dst, psqt_src, psqt_rows, row_lists);
        self.update_into(dst, None, Some(src), w1, row_lists, Some(psqt));
    }

    /// [`update`](Self::update) that also writes the result to `copy` (a refresh cache's
    /// entry), from the registers that hold it: copying `dst` afterwards would read back stores
    /// still on their way to memory.
    #[inline]
    pub fn update_and_copy(
        self,
        dst: &mut [i16],
        copy: &mut [i16],
        src: &[i16],
        w1: &FirstLayer,
        row_lists: &RowLists,
    ) {
        self.update_into(dst, Some(copy), Some(src), w1, row_lists, None);
    }

    /// `entry += Σ rows.added − Σ rows.removed` and `dst = entry`, in one pass (a refresh from a
    /// cache entry that it then updates).
    #[inline]
    pub fn update_in_place_and_copy(
        self,
        entry: &mut [i16],
        dst: &mut [i16],
        w1: &FirstLayer,
        row_lists: &RowLists,
    ) {
        self.update_into(dst, Some(entry), None, w1, row_lists, None);
    }

    /// [`update_with_psqt`](Self::update_with_psqt) of both perspectives of a move (White's,
    /// Black's) in one call: the checks and the choice of kernel once for the two (a move that
    /// refreshes neither perspective).
    ///
    /// Panics as [`update_with_psqt`](Self::update_with_psqt).
    #[inline]
    pub fn update_both_with_psqt(
        self,
        both: [PerspectiveUpdate<'_>; 2],
        w1: &FirstLayer,
        psqt_rows: &[AlignedVec<i32>; 2],
    ) {
        let [white, black] = both.map(|u| {
            let psqt = Psqt8::checked(u.psqt_dst, u.psqt_src, psqt_rows, u.rows);
            Update::checked(u.dst, None, Some(u.src), w1, u.rows, Some(psqt))
        });
        self.run([white, black]);
    }

    /// `dst = src + rows` and, with `copy`, `copy = dst`; without `src`, `copy` is the source.
    /// With `psqt`, its sums too (its rows checked by the caller).
    #[inline]
    fn update_into(
        self,
        dst: &mut [i16],
        copy: Option<&mut [i16]>,
        src: Option<&[i16]>,
        w1: &FirstLayer,
        row_lists: &RowLists,
        psqt: Option<Psqt8>,
    ) {
        self.run([Update::checked(dst, copy, src, w1, row_lists, psqt)]);
    }

    /// Makes the checked `updates` with this level's kernel, chosen once for all of them.
    #[inline(never)]
    fn run<const N: usize>(self, updates: [Update<'_>; N]) {
        for Update { dst, src, rows } in updates {
            match self.level {
                // SAFETY: `src` holds L1 values, apart from `dst` (it is `copy` or a slice of
                // its own); lengths and rows were checked when the update was made.
                SimdLevel::Scalar => unsafe { update_scalar(dst, src, &rows) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: the level was checked against the CPU; the rest as above.
                SimdLevel::Avx2 => unsafe { x86::update_avx2(dst, src, &rows) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: as above.
                SimdLevel::Avx512 | SimdLevel::Avx512Vnni => unsafe {
                    x86::update_avx512(dst, src, &rows)
                },
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!("only the scalar kernels exist on this architecture"),
            }
        }
    }
}

/// One perspective's operands of [`Kernels::update_both_with_psqt`]: `dst = src + rows` and
/// `psqt_dst = psqt_src + the rows' PSQT rows`.
pub struct PerspectiveUpdate<'a> {
    /// The child's accumulator.
    pub dst: &'a mut [i16],
    /// The parent's accumulator.
    pub src: &'a [i16],
    /// The child's PSQT sums.
    pub psqt_dst: &'a mut [i32; 8],
    /// The parent's PSQT sums.
    pub psqt_src: &'a [i32; 8],
    /// The rows to add and subtract.
    pub rows: &'a RowLists,
}

/// An accumulator update whose lengths and rows were checked ([`Update::checked`]).
struct Update<'a> {
    dst: &'a mut [i16],
    /// L1 values apart from `dst`.
    src: *const i16,
    rows: Rows<'a>,
}

impl<'a> Update<'a> {
    /// `dst = src + rows` and, with `copy`, `copy = dst`; without `src`, `copy` is the source.
    /// With `psqt`, its sums too (its rows checked by the caller). Panics if the lengths
    /// disagree or a row is not one of `w1`'s.
    #[inline(always)]
    fn checked(
        dst: &'a mut [i16],
        copy: Option<&'a mut [i16]>,
        src: Option<&'a [i16]>,
        w1: &'a FirstLayer,
        row_lists: &'a RowLists,
        psqt: Option<Psqt8>,
    ) -> Update<'a> {
        let l1 = dst.len();
        assert!(l1 == w1.l1() && l1.is_multiple_of(32));
        let copy = match copy {
            Some(c) => {
                assert_eq!(c.len(), l1);
                c.as_mut_ptr()
            }
            None => std::ptr::null_mut(),
        };
        let src = match src {
            Some(s) => {
                assert_eq!(s.len(), l1);
                s.as_ptr()
            }
            None => {
                assert!(!copy.is_null(), "an update needs a source");
                copy.cast_const()
            }
        };
        let rows = Rows {
            w1,
            lists: row_lists,
            copy,
            psqt,
        };
        // Every listed row inside its storage (multiplied, not divided: the two divisions were
        // a third of this function's time in the profile).
        assert!(
            row_lists.end(WeightType::I16) as usize * l1 <= rows.wide().len()
                && row_lists.end(WeightType::I8) as usize * l1 <= rows.narrow().len(),
            "feature row out of range"
        );
        Update { dst, src, rows }
    }
}

/// The operands of an accumulator update: both storages of W1 and the storage rows to add and
/// subtract from each.
///
/// It holds the layer and the lists themselves, not copies of their slices: the lists were
/// just filled, and copying a slice (pointer and length) with one 16-byte load from a length
/// still on its way to memory waits until it gets there (a failed store-to-load forward; 4% of
/// an evaluation on Stockfish's network).
struct Rows<'a> {
    w1: &'a FirstLayer,
    lists: &'a RowLists,
    /// Where to write the result a second time (null: nowhere): L1 values apart from `dst`,
    /// which may be the source (every kernel reads a lane's source before writing the lane).
    copy: *mut i16,
    /// The PSQT sums to update with the same rows, if any.
    psqt: Option<Psqt8>,
}

/// The PSQT sums of 8 buckets an update writes (`dst = src + rows`) and their rows of each
/// storage, whose listed rows the caller checked.
#[derive(Clone, Copy)]
struct Psqt8 {
    dst: *mut i32,
    src: *const i32,
    rows: [*const i32; 2],
}

impl Psqt8 {
    /// The sums `dst = src + rows' PSQT rows` of `psqt_rows`. Panics if a listed row has none.
    #[inline(always)]
    fn checked(
        dst: &mut [i32; 8],
        src: &[i32; 8],
        psqt_rows: &[AlignedVec<i32>; 2],
        row_lists: &RowLists,
    ) -> Psqt8 {
        assert!(
            row_lists.end(WeightType::I16) as usize * 8 <= psqt_rows[0].len()
                && row_lists.end(WeightType::I8) as usize * 8 <= psqt_rows[1].len(),
            "PSQT row out of range"
        );
        Psqt8 {
            dst: dst.as_mut_ptr(),
            src: src.as_ptr(),
            rows: [psqt_rows[0].as_ptr(), psqt_rows[1].as_ptr()],
        }
    }

    /// The sums of `rows`' PSQT rows, 8 lanes at a time in whatever vector the level has.
    ///
    /// # Safety
    /// Every listed row has a PSQT row; `dst` and `src` hold 8 sums.
    #[inline(always)]
    unsafe fn apply<V: Copy>(
        self,
        lists: &RowLists,
        load: impl Fn(*const i32) -> V,
        add: impl Fn(V, V) -> V,
        sub: impl Fn(V, V) -> V,
        store: impl Fn(*mut i32, V),
    ) {
        let mut sum = load(self.src);
        for (slot, ty) in [WeightType::I16, WeightType::I8].into_iter().enumerate() {
            let rows = self.rows[slot];
            for &i in lists.added(ty) {
                sum = add(sum, load(rows.wrapping_add(i as usize * 8)));
            }
            for &i in lists.removed(ty) {
                sum = sub(sum, load(rows.wrapping_add(i as usize * 8)));
            }
        }
        store(self.dst, sum);
    }
}

impl Rows<'_> {
    #[inline(always)]
    fn wide(&self) -> &[i16] {
        self.w1.wide()
    }

    #[inline(always)]
    fn narrow(&self) -> &[i8] {
        self.w1.narrow()
    }

    #[inline(always)]
    fn add16(&self) -> &[u32] {
        self.lists.added(WeightType::I16)
    }

    #[inline(always)]
    fn sub16(&self) -> &[u32] {
        self.lists.removed(WeightType::I16)
    }

    #[inline(always)]
    fn add8(&self) -> &[u32] {
        self.lists.added(WeightType::I8)
    }

    #[inline(always)]
    fn sub8(&self) -> &[u32] {
        self.lists.removed(WeightType::I8)
    }
}

/// Scalar accumulator update.
///
/// # Safety
/// `src` points to `dst.len()` values apart from `dst` (it may be `rows.copy`).
unsafe fn update_scalar(dst: &mut [i16], src: *const i16, rows: &Rows) {
    let l1 = dst.len();
    // SAFETY: by the caller; the copy is taken before `rows.copy` is written.
    dst.copy_from_slice(unsafe { std::slice::from_raw_parts(src, l1) });
    let range = |i: u32| i as usize * l1..(i as usize + 1) * l1;
    for &i in rows.add16() {
        for (d, &w) in dst.iter_mut().zip(&rows.wide()[range(i)]) {
            *d = d.wrapping_add(w);
        }
    }
    for &i in rows.sub16() {
        for (d, &w) in dst.iter_mut().zip(&rows.wide()[range(i)]) {
            *d = d.wrapping_sub(w);
        }
    }
    for &i in rows.add8() {
        for (d, &w) in dst.iter_mut().zip(&rows.narrow()[range(i)]) {
            *d = d.wrapping_add(i16::from(w));
        }
    }
    for &i in rows.sub8() {
        for (d, &w) in dst.iter_mut().zip(&rows.narrow()[range(i)]) {
            *d = d.wrapping_sub(i16::from(w));
        }
    }
    if !rows.copy.is_null() {
        // SAFETY: `copy` holds L1 values apart from `dst` (checked by `Kernels::update_into`).
        unsafe { std::ptr::copy_nonoverlapping(dst.as_ptr(), rows.copy, l1) };
    }
    if let Some(psqt) = rows.psqt {
        type Sums = [i32; 8];
        // SAFETY: by the caller of `update_with_psqt` (8 sums; rows checked).
        unsafe {
            psqt.apply(
                rows.lists,
                |at| at.cast::<Sums>().read_unaligned(),
                |a: Sums, b: Sums| std::array::from_fn(|k| a[k].wrapping_add(b[k])),
                |a: Sums, b: Sums| std::array::from_fn(|k| a[k].wrapping_sub(b[k])),
                |at, v| at.cast::<Sums>().write_unaligned(v),
            )
        }
    }
}

impl Kernels {
    /// `x = clamp(acc, 0, 127)` as bytes (lengths equal, a multiple of 32).
    #[inline]
    pub fn clipped_relu(self, acc: &[i16], x: &mut [u8]) {
        assert!(acc.len() == x.len() && acc.len().is_multiple_of(32));
        match self.level {
            SimdLevel::Scalar => clipped_relu_scalar(acc, x),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the level was checked against the CPU; lengths checked above.
            SimdLevel::Avx2 => unsafe { x86::clipped_relu_avx2(acc, x) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            SimdLevel::Avx512 | SimdLevel::Avx512Vnni => unsafe {
                x86::clipped_relu_avx512(acc, x)
            },
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("only the scalar kernels exist on this architecture"),
        }
    }
}

impl Kernels {
    /// `dst += plus − minus` (16-bit wrapping; lengths equal, a multiple of 32): a hybrid
    /// update's parent with its cached group replaced (Stockfish's `update_accumulator_hybrid`
    /// folds the two cache entries' differences into its pass the same way).
    #[inline]
    pub fn add_difference(self, dst: &mut [i16], plus: &[i16], minus: &[i16]) {
        assert!(
            dst.len() == plus.len() && dst.len() == minus.len() && dst.len().is_multiple_of(32)
        );
        match self.level {
            SimdLevel::Scalar => add_difference_scalar(dst, plus, minus),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the level was checked against the CPU; lengths checked above.
            SimdLevel::Avx2 => unsafe { x86::add_difference_avx2(dst, plus, minus) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            SimdLevel::Avx512 | SimdLevel::Avx512Vnni => unsafe {
                x86::add_difference_avx512(dst, plus, minus)
            },
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("only the scalar kernels exist on this architecture"),
        }
    }
}

/// Scalar [`Kernels::add_difference`].
fn add_difference_scalar(dst: &mut [i16], plus: &[i16], minus: &[i16]) {
    for ((d, &p), &m) in dst.iter_mut().zip(plus).zip(minus) {
        *d = d.wrapping_add(p.wrapping_sub(m));
    }
}

/// Scalar clipped ReLU: `clamp(a, 0, 127)` as u8.
pub(crate) fn clipped_relu_scalar(acc: &[i16], x: &mut [u8]) {
    for (o, &a) in x.iter_mut().zip(acc) {
        *o = a.clamp(0, ACTIVATION_CLIP as i16) as u8;
    }
}

/// The non-zero blocks of four bytes of activations, for the sparse layers.
#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{
    count_nnz, count_nnz_avx512, find_nnz, find_nnz_avx512, nnz_lanes, record_nnz,
    record_nnz_avx512,
};

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The x86-64 kernels. Callers check the CPU features, slice lengths (L1 a multiple of 32,
    //! 2·L1 a multiple of 64) and row indices before calling.

    use std::arch::x86_64::*;

    use super::{Kernels, Rows, SimdLevel};

    /// [`Kernels::compiled`] at AVX2: `f` inlined into a function compiled with it.
    ///
    /// # Safety
    /// `kernels` must be AVX2's, checked against the CPU.
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn compiled_avx2<R>(kernels: Kernels, f: impl FnOnce(Kernels) -> R) -> R {
        // SAFETY: the caller's promise; knowing the level, the compiler drops its tests.
        unsafe { std::hint::assert_unchecked(kernels.level == SimdLevel::Avx2) };
        f(kernels)
    }

    /// [`Kernels::compiled`] at AVX-512 (F, BW).
    ///
    /// # Safety
    /// `kernels` must be AVX-512's, checked against the CPU.
    #[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
    pub unsafe fn compiled_avx512<R>(kernels: Kernels, f: impl FnOnce(Kernels) -> R) -> R {
        // SAFETY: as in `compiled_avx2`.
        unsafe { std::hint::assert_unchecked(kernels.level == SimdLevel::Avx512) };
        f(kernels)
    }

    /// [`Kernels::compiled`] at AVX-512 VNNI.
    ///
    /// # Safety
    /// `kernels` must be AVX-512 VNNI's, checked against the CPU.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,popcnt")]
    pub unsafe fn compiled_vnni<R>(kernels: Kernels, f: impl FnOnce(Kernels) -> R) -> R {
        // SAFETY: as in `compiled_avx2`.
        unsafe { std::hint::assert_unchecked(kernels.level == SimdLevel::Avx512Vnni) };
        f(kernels)
    }

    /// One tile of `R` AVX2 registers (16 lanes each) at `off`: load src, add/sub the wide
    /// rows, add/sub the narrow rows sign-extended, store.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn tile_avx2<const R: usize, const NARROW: bool>(
        dst: *mut i16,
        src: *const i16,
        rows: &Rows,
        l1: usize,
        off: usize,
    ) {
        // SAFETY (whole body): the caller guarantees off + 16·R <= l1 and valid row indices.
        unsafe {
            let (wide, narrow) = (rows.wide().as_ptr(), rows.narrow().as_ptr());
            let mut r = [_mm256_setzero_si256(); R];
            for (k, reg) in r.iter_mut().enumerate() {
                *reg = _mm256_loadu_si256(src.add(off + 16 * k) as *const __m256i);
            }
            for &i in rows.add16() {
                let row = wide.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w = _mm256_loadu_si256(row.add(16 * k) as *const __m256i);
                    *reg = _mm256_add_epi16(*reg, w);
                }
            }
            for &i in rows.sub16() {
                let row = wide.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w = _mm256_loadu_si256(row.add(16 * k) as *const __m256i);
                    *reg = _mm256_sub_epi16(*reg, w);
                }
            }
            for &i in listed::<NARROW>(rows.add8()) {
                let row = narrow.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w =
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(row.add(16 * k) as *const __m128i));
                    *reg = _mm256_add_epi16(*reg, w);
                }
            }
            for &i in listed::<NARROW>(rows.sub8()) {
                let row = narrow.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w =
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(row.add(16 * k) as *const __m128i));
                    *reg = _mm256_sub_epi16(*reg, w);
                }
            }
            for (k, reg) in r.iter().enumerate() {
                _mm256_storeu_si256(dst.add(off + 16 * k) as *mut __m256i, *reg);
            }
            if !rows.copy.is_null() {
                for (k, reg) in r.iter().enumerate() {
                    _mm256_storeu_si256(rows.copy.add(off + 16 * k) as *mut __m256i, *reg);
                }
            }
        }
    }

    /// `rows` in a tile that reads `i8` rows (`NARROW`), else none: the tiles without them
    /// lose their loops at compile time, and the tiles with them iterate a plain slice (a
    /// `take` of it costs three more instructions a row and tile).
    #[inline(always)]
    fn listed<const NARROW: bool>(rows: &[u32]) -> &[u32] {
        if NARROW { rows } else { &[] }
    }

    /// Asks for the first cache line of every listed row, and of its PSQT row when the update
    /// sums them too, before the tiles read them, so that the rows' misses (threat rows lie
    /// anywhere in tens of megabytes) overlap instead of waiting one after another (Stockfish
    /// prefetches each threat row as it lists it, `FullThreats::append_changed_indices`).
    #[inline(always)]
    fn prefetch_rows(rows: &Rows, l1: usize) {
        use crate::prefetch::prefetch;
        let (wide, narrow) = (rows.wide().as_ptr(), rows.narrow().as_ptr());
        match rows.psqt.map(|p| p.rows) {
            Some([psqt16, psqt8]) => {
                for &i in rows.add16().iter().chain(rows.sub16()) {
                    prefetch(wide.wrapping_add(i as usize * l1));
                    prefetch(psqt16.wrapping_add(i as usize * 8));
                }
                for &i in rows.add8().iter().chain(rows.sub8()) {
                    prefetch(narrow.wrapping_add(i as usize * l1));
                    prefetch(psqt8.wrapping_add(i as usize * 8));
                }
            }
            None => {
                for &i in rows.add16().iter().chain(rows.sub16()) {
                    prefetch(wide.wrapping_add(i as usize * l1));
                }
                for &i in rows.add8().iter().chain(rows.sub8()) {
                    prefetch(narrow.wrapping_add(i as usize * l1));
                }
            }
        }
    }

    /// AVX2 accumulator update: tiles of 128 lanes (8 registers), then tiles of 32.
    #[target_feature(enable = "avx2")]
    pub unsafe fn update_avx2(dst: &mut [i16], src: *const i16, rows: &Rows) {
        let l1 = dst.len();
        prefetch_rows(rows, l1);
        // Sets without i8 rows (all but the threat sets) take tiles without their loops.
        let narrow = !(rows.add8().is_empty() && rows.sub8().is_empty());
        let (d, s) = (dst.as_mut_ptr(), src);
        let mut off = 0;
        // SAFETY: every tile lies inside [0, l1) (l1 is a multiple of 32).
        unsafe {
            while off + 128 <= l1 {
                if narrow {
                    tile_avx2::<8, true>(d, s, rows, l1, off);
                } else {
                    tile_avx2::<8, false>(d, s, rows, l1, off);
                }
                off += 128;
            }
            while off < l1 {
                if narrow {
                    tile_avx2::<2, true>(d, s, rows, l1, off);
                } else {
                    tile_avx2::<2, false>(d, s, rows, l1, off);
                }
                off += 32;
            }
            if let Some(psqt) = rows.psqt {
                psqt8_avx2(psqt, rows);
            }
        }
    }

    /// The PSQT sums of an update in one AVX2 register.
    ///
    /// # Safety
    /// As [`Psqt8::apply`].
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn psqt8_avx2(psqt: super::Psqt8, rows: &Rows) {
        // SAFETY: by the caller.
        unsafe {
            psqt.apply(
                rows.lists,
                |at| _mm256_loadu_si256(at.cast()),
                |a, b| _mm256_add_epi32(a, b),
                |a, b| _mm256_sub_epi32(a, b),
                |at, v| _mm256_storeu_si256(at.cast(), v),
            )
        }
    }

    /// One tile of `R` AVX-512 registers (32 lanes each).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn tile_avx512<const R: usize, const NARROW: bool>(
        dst: *mut i16,
        src: *const i16,
        rows: &Rows,
        l1: usize,
        off: usize,
    ) {
        // SAFETY (whole body): the caller guarantees off + 32·R <= l1 and valid row indices.
        unsafe {
            let (wide, narrow) = (rows.wide().as_ptr(), rows.narrow().as_ptr());
            let mut r = [_mm512_setzero_si512(); R];
            for (k, reg) in r.iter_mut().enumerate() {
                *reg = _mm512_loadu_si512(src.add(off + 32 * k) as *const _);
            }
            for &i in rows.add16() {
                let row = wide.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w = _mm512_loadu_si512(row.add(32 * k) as *const _);
                    *reg = _mm512_add_epi16(*reg, w);
                }
            }
            for &i in rows.sub16() {
                let row = wide.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w = _mm512_loadu_si512(row.add(32 * k) as *const _);
                    *reg = _mm512_sub_epi16(*reg, w);
                }
            }
            for &i in listed::<NARROW>(rows.add8()) {
                let row = narrow.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w =
                        _mm512_cvtepi8_epi16(_mm256_loadu_si256(row.add(32 * k) as *const __m256i));
                    *reg = _mm512_add_epi16(*reg, w);
                }
            }
            for &i in listed::<NARROW>(rows.sub8()) {
                let row = narrow.add(i as usize * l1 + off);
                for (k, reg) in r.iter_mut().enumerate() {
                    let w =
                        _mm512_cvtepi8_epi16(_mm256_loadu_si256(row.add(32 * k) as *const __m256i));
                    *reg = _mm512_sub_epi16(*reg, w);
                }
            }
            for (k, reg) in r.iter().enumerate() {
                _mm512_storeu_si512(dst.add(off + 32 * k) as *mut _, *reg);
            }
            if !rows.copy.is_null() {
                for (k, reg) in r.iter().enumerate() {
                    _mm512_storeu_si512(rows.copy.add(off + 32 * k) as *mut _, *reg);
                }
            }
        }
    }

    /// AVX-512 accumulator update: tiles of 1024 lanes (all 32 registers, so an L1 of 1024 —
    /// Stockfish 15.1's network — reads each row once; `i16` rows are added from memory) when
    /// no `i8` row is listed, else of 512 (16 registers, the others for widening the `i8`
    /// rows: Stockfish's tile), then of 256, then of 32.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn update_avx512(dst: &mut [i16], src: *const i16, rows: &Rows) {
        let l1 = dst.len();
        prefetch_rows(rows, l1);
        // Sets without i8 rows (all but the threat sets) take tiles without their loops.
        let narrow = !(rows.add8().is_empty() && rows.sub8().is_empty());
        let (d, s) = (dst.as_mut_ptr(), src);
        let mut off = 0;
        // SAFETY: every tile lies inside [0, l1) (l1 is a multiple of 32).
        unsafe {
            while !narrow && off + 1024 <= l1 {
                tile_avx512::<32, false>(d, s, rows, l1, off);
                off += 1024;
            }
            while off + 512 <= l1 {
                if narrow {
                    tile_avx512::<16, true>(d, s, rows, l1, off);
                } else {
                    tile_avx512::<16, false>(d, s, rows, l1, off);
                }
                off += 512;
            }
            while off + 256 <= l1 {
                if narrow {
                    tile_avx512::<8, true>(d, s, rows, l1, off);
                } else {
                    tile_avx512::<8, false>(d, s, rows, l1, off);
                }
                off += 256;
            }
            while off < l1 {
                if narrow {
                    tile_avx512::<1, true>(d, s, rows, l1, off);
                } else {
                    tile_avx512::<1, false>(d, s, rows, l1, off);
                }
                off += 32;
            }
            if let Some(psqt) = rows.psqt {
                psqt8_avx2(psqt, rows);
            }
        }
    }

    /// [`Kernels::add_difference`](super::Kernels::add_difference) `LANES` values at a time in
    /// whatever vector the level has: the loop of [`add_difference_avx2`] and
    /// [`add_difference_avx512`], inlined into each.
    ///
    /// # Safety
    /// The three lengths are equal and a multiple of `LANES`; `load` and `store` read and write
    /// `LANES` values.
    #[inline(always)]
    unsafe fn add_difference_lanes<V: Copy, const LANES: usize>(
        dst: &mut [i16],
        (plus, minus): (&[i16], &[i16]),
        load: impl Fn(*const i16) -> V,
        (add, sub): (impl Fn(V, V) -> V, impl Fn(V, V) -> V),
        store: impl Fn(*mut i16, V),
    ) {
        // SAFETY: i + LANES <= len in every iteration (by the caller).
        unsafe {
            for i in (0..dst.len()).step_by(LANES) {
                let diff = sub(load(plus.as_ptr().add(i)), load(minus.as_ptr().add(i)));
                let at = dst.as_mut_ptr().add(i);
                store(at, add(load(at), diff));
            }
        }
    }

    /// AVX2 [`Kernels::add_difference`](super::Kernels::add_difference): 16 lanes at a time.
    #[target_feature(enable = "avx2")]
    pub unsafe fn add_difference_avx2(dst: &mut [i16], plus: &[i16], minus: &[i16]) {
        // SAFETY: the three lengths are equal, a multiple of 32 (by the caller).
        unsafe {
            add_difference_lanes::<_, 16>(
                dst,
                (plus, minus),
                |at| _mm256_loadu_si256(at.cast()),
                (|a, b| _mm256_add_epi16(a, b), |a, b| _mm256_sub_epi16(a, b)),
                |at, v| _mm256_storeu_si256(at.cast(), v),
            )
        }
    }

    /// AVX-512 [`Kernels::add_difference`](super::Kernels::add_difference): 32 lanes at a
    /// time.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn add_difference_avx512(dst: &mut [i16], plus: &[i16], minus: &[i16]) {
        // SAFETY: as above.
        unsafe {
            add_difference_lanes::<_, 32>(
                dst,
                (plus, minus),
                |at| _mm512_loadu_si512(at.cast()),
                (|a, b| _mm512_add_epi16(a, b), |a, b| _mm512_sub_epi16(a, b)),
                |at, v| _mm512_storeu_si512(at.cast(), v),
            )
        }
    }

    /// AVX2 clipped ReLU of one accumulator (L1 a multiple of 32) into `x`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn clipped_relu_avx2(acc: &[i16], x: &mut [u8]) {
        let zero = _mm256_setzero_si256();
        let mut i = 0;
        // SAFETY: i + 32 <= acc.len() == x.len() in every iteration.
        unsafe {
            while i < acc.len() {
                let a = _mm256_loadu_si256(acc.as_ptr().add(i) as *const __m256i);
                let b = _mm256_loadu_si256(acc.as_ptr().add(i + 16) as *const __m256i);
                // packs: [a0-7 b0-7 | a8-15 b8-15] saturated to i8; max 0 clamps to [0, 127].
                let p = _mm256_max_epi8(_mm256_packs_epi16(a, b), zero);
                let p = _mm256_permute4x64_epi64::<0b11_01_10_00>(p);
                _mm256_storeu_si256(x.as_mut_ptr().add(i) as *mut __m256i, p);
                i += 32;
            }
        }
    }

    /// AVX-512 clipped ReLU: 64 lanes at a time, a 32-lane AVX2 step for the rest.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn clipped_relu_avx512(acc: &[i16], x: &mut [u8]) {
        let zero = _mm512_setzero_si512();
        let order = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
        let mut i = 0;
        // SAFETY: i + 64 <= acc.len() == x.len() in the loop; the tail is a multiple of 32.
        unsafe {
            while i + 64 <= acc.len() {
                let a = _mm512_loadu_si512(acc.as_ptr().add(i) as *const _);
                let b = _mm512_loadu_si512(acc.as_ptr().add(i + 32) as *const _);
                let p = _mm512_max_epi8(_mm512_packs_epi16(a, b), zero);
                let p = _mm512_permutexvar_epi64(order, p);
                _mm512_storeu_si512(x.as_mut_ptr().add(i) as *mut _, p);
                i += 64;
            }
            if i < acc.len() {
                clipped_relu_avx2(&acc[i..], &mut x[i..]);
            }
        }
    }

    /// For each mask of 8 groups, the positions of its set bits (then zeros).
    const NNZ_LOOKUP: [[u16; 8]; 256] = {
        let mut table = [[0u16; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut bit, mut k) = (0, 0);
            while bit < 8 {
                if m & (1 << bit) != 0 {
                    table[m][k] = bit as u16;
                    k += 1;
                }
                bit += 1;
            }
            m += 1;
        }
        table
    };

    /// Lists the groups of four bytes of `v` (32 activation bytes, each at most 127) that are
    /// not all zero, numbered from `base` (in every 16-bit lane), at `nnz + n`, and moves `n` and
    /// `base` on: what [`find_nnz`] does over a slice, and what a layer that writes activations
    /// does on the way instead of reading them back (Stockfish's `NNZInfo::NNZCursor`,
    /// `src/nnue/nnz_helper.h` at 762dd1da9).
    ///
    /// # Safety
    /// AVX2; `nnz + n` has room for 8 indices.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) unsafe fn record_nnz(v: __m256i, base: &mut __m128i, nnz: *mut u16, n: &mut usize) {
        let mask = nnz_mask(v);
        // SAFETY: the table's rows hold 8 indices; the caller promised room for 8.
        unsafe {
            let idx = _mm_loadu_si128(NNZ_LOOKUP[usize::from(mask)].as_ptr() as *const __m128i);
            _mm_storeu_si128(nnz.add(*n) as *mut __m128i, _mm_add_epi16(*base, idx));
        }
        *n += mask.count_ones() as usize;
        *base = _mm_add_epi16(*base, _mm_set1_epi16(8));
    }

    /// How many of the 8 groups of four bytes of `v` are not all zero: [`record_nnz`] without
    /// the list (each byte at most 127).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn count_nnz(v: __m256i) -> usize {
        nnz_mask(v).count_ones() as usize
    }

    /// Bit k set when group k of the 8 groups of four bytes of `v` is not all zero.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn nnz_mask(v: __m256i) -> u8 {
        // Each group read as an i32 is in 0 ..= 0x7f7f7f7f: not all zero means positive.
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(
            v,
            _mm256_setzero_si256(),
        ))) as u8
    }

    /// How many of the 16 groups of four bytes of `v` are not all zero:
    /// [`record_nnz_avx512`] without the list.
    #[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
    #[inline]
    pub(crate) fn count_nnz_avx512(v: __m512i) -> usize {
        _mm512_test_epi32_mask(v, v).count_ones() as usize
    }

    /// [`record_nnz`] for 64 bytes with `vpcompressd`: `base` numbers the 16 groups, one per
    /// 32-bit lane.
    ///
    /// # Safety
    /// AVX-512 F and BW; `nnz + n` has room for 16 indices.
    #[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
    #[inline]
    pub(crate) unsafe fn record_nnz_avx512(
        v: __m512i,
        base: &mut __m512i,
        nnz: *mut u16,
        n: &mut usize,
    ) {
        let mask = _mm512_test_epi32_mask(v, v);
        let idx = _mm512_cvtepi32_epi16(_mm512_maskz_compress_epi32(mask, *base));
        // SAFETY: the caller promised room for 16.
        unsafe { _mm256_storeu_si256(nnz.add(*n) as *mut __m256i, idx) };
        *n += mask.count_ones() as usize;
        *base = _mm512_add_epi32(*base, _mm512_set1_epi32(16));
    }

    /// The first 16 group numbers, 0 to 15, one per 32-bit lane: where [`record_nnz_avx512`]
    /// starts.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(crate) fn nnz_lanes() -> __m512i {
        _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
    }

    /// Writes the indices of the groups of four bytes of `x` that are not all zero to the front
    /// of `nnz` and returns how many there are. `x.len()` must be a multiple of 32, every byte
    /// at most 127 (clipped activations), and `nnz` must hold `x.len() / 4` indices.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn find_nnz(x: &[u8], nnz: &mut [u16]) -> usize {
        assert!(x.len().is_multiple_of(32) && nnz.len() >= x.len() / 4);
        let mut base = _mm_setzero_si128();
        let mut n = 0;
        for c in 0..x.len() / 32 {
            // SAFETY: 32·c + 32 <= x.len(); the store writes nnz[n .. n + 8] with n <= 8·c, so
            // within the x.len() / 4 indices.
            unsafe {
                let v = _mm256_loadu_si256(x.as_ptr().add(32 * c) as *const __m256i);
                record_nnz(v, &mut base, nnz.as_mut_ptr(), &mut n);
            }
        }
        n
    }

    /// The AVX-512 [`find_nnz`]: 16 groups per step, listed with `vpcompressd`.
    #[target_feature(enable = "avx512f,avx512bw,avx2,popcnt")]
    pub(crate) unsafe fn find_nnz_avx512(x: &[u8], nnz: &mut [u16]) -> usize {
        assert!(x.len().is_multiple_of(64) && nnz.len() >= x.len() / 4);
        let mut base = nnz_lanes();
        let mut n = 0;
        for c in 0..x.len() / 64 {
            // SAFETY: 64·c + 64 <= x.len(); the store writes nnz[n .. n + 16] with n <= 16·c,
            // so within the x.len() / 4 indices.
            unsafe {
                let v = _mm512_loadu_si512(x.as_ptr().add(64 * c) as *const _);
                record_nnz_avx512(v, &mut base, nnz.as_mut_ptr(), &mut n);
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency in the library's unit tests).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn i16(&mut self) -> i16 {
            self.next() as i16
        }
    }

    #[test]
    fn update_kernels_agree_with_the_plain_sum_including_wrapping_and_narrow_rows() {
        let mut rng = Lcg(7);
        for l1 in [32usize, 64, 96, 128, 160, 256, 288, 512, 544, 800, 1024] {
            // Rows 0..20 and 40..50 in i16, 20..40 in i8.
            let runs = [
                (20, WeightType::I16),
                (20, WeightType::I8),
                (10, WeightType::I16),
            ];
            let rows = 50;
            let values: Vec<i16> = (0..rows * l1)
                .map(|k| match (20..40).contains(&(k / l1)) {
                    true => rng.i16() >> 8,
                    false => rng.i16(),
                })
                .collect();
            let w1 = FirstLayer::new(l1, &runs, &values).unwrap();
            let src: Vec<i16> = (0..l1).map(|_| rng.i16()).collect();
            // 8 PSQT buckets per row, near the ends of i32 to wrap.
            let psqt: Vec<i32> = (0..rows * 8)
                .map(|_| i32::from(rng.i16()) << 16 | i32::from(rng.i16() as u16))
                .collect();
            let psqt_rows = w1.by_storage(&psqt, 8);
            let psqt_src: [i32; 8] = std::array::from_fn(|_| i32::from(rng.i16()) << 15);
            for n_add in 0..9 {
                let pick = |rng: &mut Lcg| (rng.next() % rows as u64) as u32;
                let add: Vec<u32> = (0..n_add).map(|_| pick(&mut rng)).collect();
                let sub: Vec<u32> = (0..(9 - n_add)).map(|_| pick(&mut rng)).collect();
                let mut expected = src.clone();
                for (&i, sign) in add
                    .iter()
                    .map(|i| (i, 1i16))
                    .chain(sub.iter().map(|i| (i, -1)))
                {
                    for (k, e) in expected.iter_mut().enumerate() {
                        *e = e.wrapping_add(sign.wrapping_mul(values[i as usize * l1 + k]));
                    }
                }
                let mut expected_psqt = psqt_src;
                for (&i, add) in add
                    .iter()
                    .map(|i| (i, true))
                    .chain(sub.iter().map(|i| (i, false)))
                {
                    for (k, e) in expected_psqt.iter_mut().enumerate() {
                        let w = psqt[i as usize * 8 + k];
                        *e = if add {
                            e.wrapping_add(w)
                        } else {
                            e.wrapping_sub(w)
                        };
                    }
                }
                let mut lists = RowLists::with_capacity(9);
                add.iter().for_each(|&i| lists.add(&w1, i));
                sub.iter().for_each(|&i| lists.sub(&w1, i));
                for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
                    let kernels = Kernels::new(level).unwrap();
                    let mut got = vec![0i16; l1];
                    kernels.update(&mut got, &src, &w1, &lists);
                    assert_eq!(got, expected, "{level} l1={l1}");
                    // Written twice, from a source apart and from the copy itself.
                    let (mut got, mut copy) = (vec![0i16; l1], vec![0i16; l1]);
                    kernels.update_and_copy(&mut got, &mut copy, &src, &w1, &lists);
                    assert_eq!((&got, &copy), (&expected, &expected), "{level} l1={l1}");
                    let (mut got, mut entry) = (vec![0i16; l1], src.clone());
                    kernels.update_in_place_and_copy(&mut entry, &mut got, &w1, &lists);
                    assert_eq!((&got, &entry), (&expected, &expected), "{level} l1={l1}");
                    // With the PSQT sums in the same pass.
                    let (mut got, mut sums) = (vec![0i16; l1], [0i32; 8]);
                    let (w, p) = (&w1, &psqt_rows);
                    kernels.update_with_psqt(
                        (&mut got, &src),
                        (&mut sums, &psqt_src),
                        w,
                        p,
                        &lists,
                    );
                    assert_eq!(got, expected, "{level} l1={l1}");
                    assert_eq!(sums, expected_psqt, "{level} l1={l1}");
                }
            }
        }
    }

    #[test]
    fn clipped_relu_kernels_agree() {
        let mut rng = Lcg(11);
        for l1 in [32usize, 64, 96, 512] {
            let mut acc: Vec<i16> = (0..l1).map(|_| rng.i16() >> (rng.next() % 16)).collect();
            acc[0] = i16::MIN;
            acc[1] = i16::MAX;
            acc[2] = 127;
            acc[3] = 128;
            acc[4] = -1;
            let mut expected = vec![0u8; l1];
            clipped_relu_scalar(&acc, &mut expected);
            assert_eq!(&expected[..5], &[0, 127, 127, 127, 0]);
            #[cfg(target_arch = "x86_64")]
            for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
                let mut got = vec![0u8; l1];
                // SAFETY: the level is supported; lengths agree and are multiples of 32.
                unsafe {
                    match level {
                        SimdLevel::Scalar => clipped_relu_scalar(&acc, &mut got),
                        SimdLevel::Avx2 => x86::clipped_relu_avx2(&acc, &mut got),
                        _ => x86::clipped_relu_avx512(&acc, &mut got),
                    }
                }
                assert_eq!(got, expected, "{level} l1={l1}");
            }
        }
    }

    #[test]
    fn add_difference_kernels_agree_and_wrap() {
        let mut rng = Lcg(12);
        for l1 in [32usize, 64, 96, 1024] {
            let mut v = || -> Vec<i16> { (0..l1).map(|_| rng.i16()).collect() };
            let (start, plus, mut minus) = (v(), v(), v());
            // A lane that wraps: MAX + (MAX − MIN).
            minus[0] = i16::MIN;
            let mut expected = start.clone();
            for ((e, &p), &m) in expected.iter_mut().zip(&plus).zip(&minus) {
                *e = (i32::from(*e) + i32::from(p) - i32::from(m)) as i16;
            }
            for level in SimdLevel::under_test().unwrap_or_else(|e| panic!("{e}")) {
                let mut got = start.clone();
                Kernels::new(level)
                    .unwrap()
                    .add_difference(&mut got, &plus, &minus);
                assert_eq!(got, expected, "{level} l1={l1}");
            }
        }
    }

    #[test]
    fn a_demanded_test_level_that_the_cpu_lacks_is_an_error() {
        use SimdLevel::*;
        let amd_without_avx512 = [Scalar, Avx2];
        let compared = SimdLevel::levels_under_test(None, &amd_without_avx512).unwrap();
        assert_eq!(compared, amd_without_avx512);
        let compared = SimdLevel::levels_under_test(Some(" avx2 "), &amd_without_avx512);
        assert_eq!(compared.unwrap(), amd_without_avx512);
        let err = SimdLevel::levels_under_test(Some("avx512vnni"), &amd_without_avx512)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "NNUE_TEST_SIMD: this CPU cannot run the avx512vnni kernels (supported: scalar, avx2)"
        );
        let err = SimdLevel::levels_under_test(Some("sse9"), &SimdLevel::ALL).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("NNUE_TEST_SIMD: unknown kernel version 'sse9'")
        );
        assert_eq!(
            SimdLevel::levels_under_test(Some(""), &SimdLevel::ALL).unwrap(),
            SimdLevel::ALL
        );
    }

    #[test]
    fn level_names_round_trip() {
        for level in SimdLevel::ALL {
            assert_eq!(level.name().parse::<SimdLevel>().unwrap(), level);
        }
        assert!("sse9".parse::<SimdLevel>().is_err());
        assert!(SimdLevel::Scalar.is_supported());
        assert!(SimdLevel::best().is_supported());
    }
}
