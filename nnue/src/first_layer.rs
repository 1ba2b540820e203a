//! The first layer's weights as the engine reads them: each term of the feature set stored in its
//! own weight type, `i16` or `i8`, and widened to `i16` while accumulating.
//!
//! Threat blocks have many active features and tens of thousands of rows, so their rows are what
//! a move reads most and what falls out of the caches first. Stockfish stores its threat weights
//! as `int8` and widens them in the accumulator update (nnue-pytorch clamps them to
//! `±127 / ft_quantized_one` during training, `model/quantize.py`, `min_threat_weight`, at
//! official-stockfish/nnue-pytorch 9f72946); this project does the same per block: a network
//! file records a weight type per block ([`super::BlockInfo::weight_type`]), all operands of a
//! product term share one, and every term is stored in its type. The accumulators stay `i16`
//! and the values are the same integers whatever the storage, so an `i8` term evaluates exactly
//! like the `i16` network holding the same values.

use std::fmt;
use std::mem::MaybeUninit;

use super::aligned::AlignedVec;
use crate::names::UnknownName;

/// How a block's first-layer rows are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WeightType {
    /// 16-bit rows (the thesis's networks; any value of the accumulator's type).
    #[default]
    I16,
    /// 8-bit rows, widened to 16 bits while accumulating: half the memory traffic per row.
    I8,
}

impl WeightType {
    /// Both types, by their file codes.
    pub const ALL: [WeightType; 2] = [WeightType::I16, WeightType::I8];

    /// The byte that stands for the type in a network file: 0 for `i16`, 1 for `i8`.
    pub fn code(self) -> u8 {
        match self {
            WeightType::I16 => 0,
            WeightType::I8 => 1,
        }
    }

    /// The type of a file code.
    pub fn from_code(code: u8) -> Option<WeightType> {
        WeightType::ALL.into_iter().find(|t| t.code() == code)
    }

    /// `i16` or `i8`.
    pub fn name(self) -> &'static str {
        match self {
            WeightType::I16 => "i16",
            WeightType::I8 => "i8",
        }
    }

    /// Bytes per weight.
    pub fn bytes(self) -> usize {
        match self {
            WeightType::I16 => 2,
            WeightType::I8 => 1,
        }
    }

    /// The smallest and largest value the type holds.
    pub fn range(self) -> (i16, i16) {
        match self {
            WeightType::I16 => (i16::MIN, i16::MAX),
            WeightType::I8 => (i16::from(i8::MIN), i16::from(i8::MAX)),
        }
    }

    pub(crate) fn slot(self) -> usize {
        self.code() as usize
    }
}

impl fmt::Display for WeightType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WeightType {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        WeightType::ALL
            .into_iter()
            .find(|t| t.name() == s.trim())
            .ok_or_else(|| UnknownName {
                what: "weight type",
                text: s.to_string(),
                expected: "i16 or i8",
            })
    }
}

/// A run of consecutive feature indices stored in one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    /// First feature index of the run.
    start: u32,
    /// One past the last.
    end: u32,
    /// The storage.
    ty: WeightType,
    /// The storage row of `start`.
    base: u32,
}

/// Consecutive rows of one storage, row-major (see [`FirstLayer::stored_runs`]).
#[derive(Clone, Copy, Debug)]
pub enum StoredRun<'a> {
    /// `i16` rows.
    Wide(&'a [i16]),
    /// `i8` rows.
    Narrow(&'a [i8]),
}

/// A value that does not fit the weight type its term is stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfRange {
    /// The feature index.
    pub index: u32,
    /// The value.
    pub value: i16,
    /// The term's type.
    pub ty: WeightType,
}

/// The first-layer weights, N rows of L1 values, each run of rows in its own type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstLayer {
    l1: usize,
    segments: Vec<Segment>,
    wide: AlignedVec<i16>,
    narrow: AlignedVec<i8>,
}

impl FirstLayer {
    /// The layer of the row-major `values` (N × `l1`), whose consecutive runs of `rows` indices
    /// are stored in `types` (`runs` in index order, summing to N). Fails on the first value a
    /// run's type cannot hold.
    pub fn new(
        l1: usize,
        runs: &[(u32, WeightType)],
        values: &[i16],
    ) -> Result<FirstLayer, OutOfRange> {
        let mut segments: Vec<Segment> = Vec::new();
        let (mut start, mut next_base) = (0u32, [0u32; 2]);
        for &(rows, ty) in runs.iter().filter(|r| r.0 > 0) {
            match segments.last_mut() {
                Some(last) if last.ty == ty => last.end += rows,
                _ => segments.push(Segment {
                    start,
                    end: start + rows,
                    ty,
                    base: next_base[ty.slot()],
                }),
            }
            start += rows;
            next_base[ty.slot()] += rows;
        }
        assert_eq!(
            start as usize * l1,
            values.len(),
            "the runs cover the first layer's rows"
        );
        let mut wide = AlignedVec::zeroed(next_base[0] as usize * l1);
        let mut narrow = AlignedVec::zeroed(next_base[1] as usize * l1);
        for s in &segments {
            let from = &values[s.start as usize * l1..s.end as usize * l1];
            let at = s.base as usize * l1;
            match s.ty {
                WeightType::I16 => wide[at..at + from.len()].copy_from_slice(from),
                WeightType::I8 => {
                    for (k, (d, &v)) in narrow[at..at + from.len()].iter_mut().zip(from).enumerate()
                    {
                        *d = i8::try_from(v).map_err(|_| OutOfRange {
                            index: s.start + (k / l1) as u32,
                            value: v,
                            ty: s.ty,
                        })?;
                    }
                }
            }
        }
        Ok(FirstLayer {
            l1,
            segments,
            wide,
            narrow,
        })
    }

    /// L1, the length of a row.
    pub fn l1(&self) -> usize {
        self.l1
    }

    /// Number of rows N.
    pub fn rows(&self) -> usize {
        self.segments.last().map_or(0, |s| s.end as usize)
    }

    /// The weight type of every row when the layer stores all of them in one type, so that a
    /// feature's storage row is its index (the thesis's and Stockfish's networks).
    #[inline]
    pub fn single_type(&self) -> Option<WeightType> {
        match self.segments[..] {
            [only] => Some(only.ty),
            _ => None,
        }
    }

    /// The storage of feature `index`: its type and its row in [`wide`](Self::wide) or
    /// [`narrow`](Self::narrow). Panics if `index` is not a row.
    #[inline(always)]
    pub fn locate(&self, index: u32) -> (WeightType, u32) {
        for s in &self.segments {
            if index < s.end {
                return (s.ty, s.base + (index - s.start));
            }
        }
        panic!("feature index {index} is not a row of the first layer");
    }

    /// The storage of the `len` features from `start` when one run holds them all: its type
    /// and the shift (wrapping) from a feature's index to its storage row. A feature set's term
    /// is one run in every network this project writes, so its delta's indices are stored
    /// straight as rows ([`RowLists::took`]).
    pub fn run_of(&self, start: u32, len: u32) -> Option<(WeightType, u32)> {
        let end = start.checked_add(len)?;
        self.segments
            .iter()
            .find(|s| s.start <= start && end <= s.end)
            .map(|s| (s.ty, s.base.wrapping_sub(s.start)))
    }

    /// The weight type of feature `index`'s row.
    pub fn weight_type(&self, index: u32) -> WeightType {
        self.locate(index).0
    }

    /// Weight `k` of feature `index`'s row, widened.
    pub fn value(&self, index: u32, k: usize) -> i16 {
        let at = |row: u32| row as usize * self.l1 + k;
        match self.locate(index) {
            (WeightType::I16, row) => self.wide[at(row)],
            (WeightType::I8, row) => i16::from(self.narrow[at(row)]),
        }
    }

    /// The 16-bit rows, in index order of the `i16` runs.
    pub fn wide(&self) -> &[i16] {
        &self.wide
    }

    /// The 8-bit rows, in index order of the `i8` runs.
    pub fn narrow(&self) -> &[i8] {
        &self.narrow
    }

    /// Every row widened to `i16`, row-major in index order (a copy: for tools and files).
    pub fn to_values(&self) -> Vec<i16> {
        let mut out = Vec::with_capacity(self.rows() * self.l1);
        for run in self.stored_runs() {
            match run {
                StoredRun::Wide(rows) => out.extend_from_slice(rows),
                StoredRun::Narrow(rows) => out.extend(rows.iter().map(|&v| i16::from(v))),
            }
        }
        out
    }

    /// The rows as stored, run by run in index order (what a file writes, with no copy).
    pub fn stored_runs(&self) -> impl Iterator<Item = StoredRun<'_>> {
        self.segments.iter().map(|s| {
            let range = s.base as usize * self.l1..(s.base + s.end - s.start) as usize * self.l1;
            match s.ty {
                WeightType::I16 => StoredRun::Wide(&self.wide[range]),
                WeightType::I8 => StoredRun::Narrow(&self.narrow[range]),
            }
        })
    }

    /// Bytes the rows take in memory (and in a file).
    pub fn bytes(&self) -> usize {
        self.wide.len() * 2 + self.narrow.len()
    }

    /// `values` (N rows of `width`, in feature order) split into the storage order of this
    /// layer's `i16` and `i8` rows: what [`RowLists::apply_psqt`] reads.
    pub(crate) fn by_storage<T: Copy + super::aligned::Element>(
        &self,
        values: &[T],
        width: usize,
    ) -> [AlignedVec<T>; 2] {
        let mut out = [
            AlignedVec::zeroed(self.wide.len() / self.l1.max(1) * width),
            AlignedVec::zeroed(self.narrow.len() / self.l1.max(1) * width),
        ];
        for s in &self.segments {
            let from = &values[s.start as usize * width..s.end as usize * width];
            let at = s.base as usize * width;
            out[s.ty.slot()][at..at + from.len()].copy_from_slice(from);
        }
        out
    }

    /// Reorders every row's values: value `k` becomes the old value `order[k]` (the neuron
    /// order of [`super::Arranged`]).
    pub(crate) fn permute_columns(&mut self, order: &[u32]) {
        permute_runs(&mut self.wide, order);
        permute_runs(&mut self.narrow, order);
    }
}

/// `dst[r·L1 + k] = src[r·L1 + order[k]]` for every run `r` of L1 = `order.len()` values.
pub(crate) fn permute_runs<T: Copy>(values: &mut [T], order: &[u32]) {
    let l1 = order.len();
    let mut run: Vec<T> = Vec::with_capacity(l1);
    for chunk in values.chunks_exact_mut(l1) {
        run.clear();
        run.extend_from_slice(chunk);
        for (d, &j) in chunk.iter_mut().zip(order) {
            *d = run[j as usize];
        }
    }
}

/// The rows an accumulator update adds and subtracts, sorted by storage: what
/// [`super::Kernels::update`] takes. Owned by the caller and reused, so the per-move path does
/// not allocate.
#[derive(Clone, Debug, Default)]
pub struct RowLists {
    add: [Vec<u32>; 2],
    sub: [Vec<u32>; 2],
    /// Per storage, a bound on the rows listed: one more than the largest row added, or the
    /// end of the runs [covered](Self::cover) for the rows that [`took`](Self::took) takes
    /// (what the kernels check against the layer in one comparison instead of a pass over the
    /// lists).
    end: [u32; 2],
}

/// A row list being filled by [`RowLists::extend`]: its end, length and one past its largest
/// row held in locals (registers) instead of the `Vec` and the lists' array.
struct Sink {
    at: *mut u32,
    len: usize,
    end: u32,
}

impl Sink {
    /// Makes room in `list` for `more` rows and starts after its rows, whose end is `end`.
    #[inline(always)]
    fn open(list: &mut Vec<u32>, end: u32, more: usize) -> Sink {
        list.reserve(more);
        Sink {
            at: list.as_mut_ptr(),
            len: list.len(),
            end,
        }
    }

    /// Appends `row` (within the room made by `open`).
    #[inline(always)]
    fn put(&mut self, row: u32) {
        // SAFETY: `open` reserved room for every row the caller puts.
        unsafe { self.at.add(self.len).write(row) };
        self.len += 1;
        self.end = self.end.max(row.saturating_add(1));
    }

    /// Gives `list` (the one opened) its new length; returns the new end.
    #[inline(always)]
    fn close(self, list: &mut Vec<u32>) -> u32 {
        // SAFETY: the rows up to `len` were there or written by `put`.
        unsafe { list.set_len(self.len) };
        self.end
    }
}

impl RowLists {
    /// Empty lists with room for `capacity` rows of each kind.
    pub fn with_capacity(capacity: usize) -> RowLists {
        let v = || Vec::with_capacity(capacity);
        RowLists {
            add: [v(), v()],
            sub: [v(), v()],
            end: [0; 2],
        }
    }

    /// Empties the lists (keeping their memory).
    pub fn clear(&mut self) {
        self.add
            .iter_mut()
            .chain(&mut self.sub)
            .for_each(Vec::clear);
        self.end = [0; 2];
    }

    /// Adds feature `index`'s row.
    #[inline(always)]
    pub fn add(&mut self, layer: &FirstLayer, index: u32) {
        let (ty, row) = layer.locate(index);
        self.add[ty.slot()].push(row);
        self.end[ty.slot()] = self.end[ty.slot()].max(row + 1);
    }

    /// Lists the rows of features `added` and `removed` of `layer` (each below its rows,
    /// checked by the caller). In a layer of one or two runs of storage (every network this
    /// project writes: the thesis's, Stockfish's of 2022 and of today) a row is found by one
    /// comparison at most, and the lists' lengths and ends stay in registers while they fill;
    /// other layers locate each row.
    #[inline]
    pub fn extend(&mut self, layer: &FirstLayer, added: &[u32], removed: &[u32]) {
        match layer.segments[..] {
            [only] => {
                let slot = only.ty.slot();
                let shift = only.base.wrapping_sub(only.start);
                for (from, lists) in [(added, &mut self.add), (removed, &mut self.sub)] {
                    let mut sink = Sink::open(&mut lists[slot], self.end[slot], from.len());
                    from.iter().for_each(|&i| sink.put(i.wrapping_add(shift)));
                    self.end[slot] = sink.close(&mut lists[slot]);
                }
            }
            [low, high] => {
                // Adjacent runs of one type are one run: the two runs are of both types.
                let (low_slot, high_slot) = (low.ty.slot(), high.ty.slot());
                let low_shift = low.base.wrapping_sub(low.start);
                let high_shift = high.base.wrapping_sub(high.start);
                for (from, lists) in [(added, &mut self.add), (removed, &mut self.sub)] {
                    let n = from.len();
                    let mut lo = Sink::open(&mut lists[low_slot], self.end[low_slot], n);
                    let mut hi = Sink::open(&mut lists[high_slot], self.end[high_slot], n);
                    for &i in from {
                        if i < low.end {
                            lo.put(i.wrapping_add(low_shift));
                        } else {
                            hi.put(i.wrapping_add(high_shift));
                        }
                    }
                    self.end[low_slot] = lo.close(&mut lists[low_slot]);
                    self.end[high_slot] = hi.close(&mut lists[high_slot]);
                }
            }
            _ => {
                added.iter().for_each(|&i| self.add(layer, i));
                removed.iter().for_each(|&i| self.sub(layer, i));
            }
        }
    }

    /// Room for `cap` more rows of storage `ty` to add and to subtract, in the lists' spare
    /// capacity: where a feature set's delta writes a term's indices
    /// ([`plugin_api::DeltaTarget`]), taken by [`took`](Self::took).
    #[inline(always)]
    pub fn rooms(&mut self, ty: WeightType, cap: usize) -> [&mut [MaybeUninit<u32>]; 2] {
        let slot = ty.slot();
        [
            plugin_api::delta::spare(&mut self.add[slot], cap),
            plugin_api::delta::spare(&mut self.sub[slot], cap),
        ]
    }

    /// [`rooms`](Self::rooms) without its check that `cap` rows fit: a caller that knows they
    /// do checks once for many lists (the delta rows of a move).
    ///
    /// # Safety
    /// Both lists of `ty` must have room for `cap` more rows (capacity − length ≥ `cap`).
    #[inline(always)]
    pub unsafe fn rooms_unchecked(
        &mut self,
        ty: WeightType,
        cap: usize,
    ) -> [&mut [MaybeUninit<u32>]; 2] {
        let slot = ty.slot();
        // SAFETY: by the caller, the spare capacity holds `cap` entries.
        [&mut self.add[slot], &mut self.sub[slot]]
            .map(|list| unsafe { list.spare_capacity_mut().get_unchecked_mut(..cap) })
    }

    /// Takes the `counts` (added, subtracted) rows stored at the start of the
    /// [`rooms`](Self::rooms) of `ty`. The lists' end is left as it is: the caller
    /// [covered](Self::cover) the rows they can hold beforehand.
    ///
    /// # Safety
    /// Lists [placed](plugin_api::IndexList::placed) in those rooms stored `counts` rows there,
    /// all below the end of `ty` ([`cover`](Self::cover)).
    #[inline(always)]
    pub unsafe fn took(&mut self, ty: WeightType, counts: [usize; 2]) {
        let slot = ty.slot();
        for (list, n) in [
            (&mut self.add[slot], counts[0]),
            (&mut self.sub[slot], counts[1]),
        ] {
            // SAFETY: by the caller, the `n` entries after the list's end are stored.
            unsafe { list.set_len(list.len() + n) };
        }
    }

    /// Raises the lists' end of each storage to at least `ends`: the bound, checked by the
    /// kernels, on rows that [`took`](Self::took) will take (the end of every run that lists
    /// may write rows of), set once for a move or a refresh instead of with every term's rows.
    #[inline(always)]
    pub fn cover(&mut self, ends: [u32; 2]) {
        self.end = [self.end[0].max(ends[0]), self.end[1].max(ends[1])];
    }

    /// Subtracts feature `index`'s row.
    #[inline(always)]
    pub fn sub(&mut self, layer: &FirstLayer, index: u32) {
        let (ty, row) = layer.locate(index);
        self.sub[ty.slot()].push(row);
        self.end[ty.slot()] = self.end[ty.slot()].max(row + 1);
    }

    /// A bound on the storage rows of `ty` listed: above every one of them (0 if none).
    #[inline(always)]
    pub fn end(&self, ty: WeightType) -> u32 {
        self.end[ty.slot()]
    }

    /// The rows of `ty` added (storage rows, see [`FirstLayer::locate`]).
    #[inline(always)]
    pub fn added(&self, ty: WeightType) -> &[u32] {
        &self.add[ty.slot()]
    }

    /// The rows of `ty` subtracted.
    #[inline(always)]
    pub fn removed(&self, ty: WeightType) -> &[u32] {
        &self.sub[ty.slot()]
    }

    /// `dst = src + Σ added − Σ removed` over PSQT rows (wrapping `i32`): `psqt[slot]` holds the
    /// PSQT rows of `dst.len()` buckets in the storage order of the `i16` (slot 0) and `i8`
    /// (slot 1) first-layer rows, so the same row lists serve both.
    #[inline]
    pub fn apply_psqt(&self, dst: &mut [i32], src: &[i32], psqt: &[AlignedVec<i32>; 2]) {
        self.apply_psqt_into(dst, None, src, psqt);
    }

    /// Asks for the PSQT rows of `buckets` sums that [`apply_psqt`](Self::apply_psqt) will read
    /// (one cache line each), so that their misses overlap with the accumulator's update in
    /// between; nothing on other architectures than x86-64.
    #[inline]
    pub fn prefetch_psqt(&self, psqt: &[AlignedVec<i32>; 2], buckets: usize) {
        for ((add, sub), rows) in self.add.iter().zip(&self.sub).zip(psqt) {
            for &row in add.iter().chain(sub) {
                crate::prefetch::prefetch(rows.as_ptr().wrapping_add(row as usize * buckets));
            }
        }
    }

    /// [`apply_psqt`](Self::apply_psqt) that also writes the sums to `copy` (the refresh
    /// cache's entry) from the registers that hold them: copying `dst` afterwards reads back
    /// stores still on their way to memory, one wide load over several narrow stores, and
    /// waits for them.
    #[inline]
    pub fn apply_psqt_and_copy(
        &self,
        dst: &mut [i32],
        copy: &mut [i32],
        src: &[i32],
        psqt: &[AlignedVec<i32>; 2],
    ) {
        self.apply_psqt_into(dst, Some(copy), src, psqt);
    }

    #[inline]
    fn apply_psqt_into(
        &self,
        dst: &mut [i32],
        copy: Option<&mut [i32]>,
        src: &[i32],
        psqt: &[AlignedVec<i32>; 2],
    ) {
        if let (Ok(dst), Ok(src)) = (
            <&mut [i32; 8]>::try_from(&mut *dst),
            <&[i32; 8]>::try_from(src),
        ) {
            // Stockfish's 8 buckets: whole rows of a known length, one vector operation each.
            let sum = self.psqt_sum(src, psqt);
            *dst = sum;
            if let Some(copy) = copy {
                copy.copy_from_slice(&sum);
            }
            return;
        }
        let b = dst.len();
        dst.copy_from_slice(src);
        for ((add, sub), rows) in self.add.iter().zip(&self.sub).zip(psqt) {
            for &row in add {
                let w = &rows[row as usize * b..(row as usize + 1) * b];
                dst.iter_mut()
                    .zip(w)
                    .for_each(|(d, &w)| *d = d.wrapping_add(w));
            }
            for &row in sub {
                let w = &rows[row as usize * b..(row as usize + 1) * b];
                dst.iter_mut()
                    .zip(w)
                    .for_each(|(d, &w)| *d = d.wrapping_sub(w));
            }
        }
        if let Some(copy) = copy {
            copy.copy_from_slice(dst);
        }
    }

    /// `src` plus the PSQT rows added, minus those subtracted, for B buckets known at compile
    /// time.
    #[inline]
    fn psqt_sum<const B: usize>(&self, src: &[i32; B], psqt: &[AlignedVec<i32>; 2]) -> [i32; B] {
        let mut sum = *src;
        for ((add, sub), rows) in self.add.iter().zip(&self.sub).zip(psqt) {
            let row = |r: u32| -> &[i32; B] {
                let at = r as usize * B;
                rows[at..at + B].try_into().expect("B values")
            };
            for &r in add {
                let w = row(r);
                (0..B).for_each(|k| sum[k] = sum[k].wrapping_add(w[k]));
            }
            for &r in sub {
                let w = row(r);
                (0..B).for_each(|k| sum[k] = sum[k].wrapping_sub(w[k]));
            }
        }
        sum
    }

    /// Rows added and subtracted, of both types.
    pub fn len(&self) -> usize {
        self.add.iter().chain(&self.sub).map(Vec::len).sum()
    }

    /// Whether no row is added or subtracted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer() -> FirstLayer {
        // 5 rows of 2: rows 0-1 i16, 2-3 i8, 4 i16.
        let values: Vec<i16> = vec![300, -2, 5, 6, 7, -8, 127, -128, 1000, 9];
        let runs = [
            (2, WeightType::I16),
            (1, WeightType::I8),
            (1, WeightType::I8),
            (1, WeightType::I16),
        ];
        FirstLayer::new(2, &runs, &values).unwrap()
    }

    #[test]
    fn rows_are_stored_by_type_and_read_back_widened() {
        let l = layer();
        assert_eq!(l.wide(), &[300, -2, 5, 6, 1000, 9]);
        assert_eq!(l.narrow(), &[7, -8, 127, -128]);
        assert_eq!(l.locate(3), (WeightType::I8, 1));
        assert_eq!(l.locate(4), (WeightType::I16, 2));
        assert_eq!(l.value(3, 1), -128);
        assert_eq!(
            l.to_values(),
            vec![300, -2, 5, 6, 7, -8, 127, -128, 1000, 9]
        );
        assert_eq!(l.bytes(), 6 * 2 + 4);
    }

    #[test]
    fn a_value_outside_the_narrow_type_is_refused_with_its_index() {
        let err = FirstLayer::new(
            2,
            &[(1, WeightType::I16), (1, WeightType::I8)],
            &[0, 0, 3, 128],
        )
        .unwrap_err();
        assert_eq!(
            err,
            OutOfRange {
                index: 1,
                value: 128,
                ty: WeightType::I8
            }
        );
    }

    #[test]
    fn row_lists_sort_indices_by_storage() {
        let l = layer();
        let mut r = RowLists::with_capacity(4);
        r.add(&l, 0);
        r.add(&l, 3);
        r.sub(&l, 2);
        r.sub(&l, 4);
        assert_eq!(r.added(WeightType::I16), &[0]);
        assert_eq!(r.added(WeightType::I8), &[1]);
        assert_eq!(r.removed(WeightType::I8), &[0]);
        assert_eq!(r.removed(WeightType::I16), &[2]);
        assert_eq!(r.len(), 4);
        r.clear();
        assert!(r.is_empty());
    }

    /// `extend` lists what `add` and `sub` list one index at a time, lists and ends alike, for
    /// layers of one run, of two runs (either type first) and of three (located one by one),
    /// appending to lists that hold rows already.
    #[test]
    fn extend_lists_the_rows_that_add_and_sub_list() {
        let layers = [
            vec![(7, WeightType::I16)],
            vec![(7, WeightType::I8)],
            vec![(3, WeightType::I16), (4, WeightType::I8)],
            vec![(3, WeightType::I8), (4, WeightType::I16)],
            vec![
                (2, WeightType::I16),
                (3, WeightType::I8),
                (2, WeightType::I16),
            ],
        ];
        let batches: [(&[u32], &[u32]); 3] = [(&[0, 6, 2], &[3]), (&[], &[5, 1, 4]), (&[6], &[])];
        for runs in layers {
            let l = FirstLayer::new(1, &runs, &[1, 2, 3, 4, 5, 6, 7]).unwrap();
            let (mut one_by_one, mut extended) = (RowLists::default(), RowLists::default());
            for (added, removed) in batches {
                added.iter().for_each(|&i| one_by_one.add(&l, i));
                removed.iter().for_each(|&i| one_by_one.sub(&l, i));
                extended.extend(&l, added, removed);
                for ty in WeightType::ALL {
                    assert_eq!(extended.added(ty), one_by_one.added(ty), "{runs:?} {ty}");
                    assert_eq!(
                        extended.removed(ty),
                        one_by_one.removed(ty),
                        "{runs:?} {ty}"
                    );
                    assert_eq!(extended.end(ty), one_by_one.end(ty), "{runs:?} {ty}");
                }
            }
            assert_eq!(extended.len(), 8);
        }
    }

    #[test]
    fn weight_types_round_trip_through_codes_and_names() {
        for t in WeightType::ALL {
            assert_eq!(WeightType::from_code(t.code()), Some(t));
            assert_eq!(t.name().parse::<WeightType>(), Ok(t));
        }
        assert_eq!(WeightType::from_code(2), None);
        assert!("i4".parse::<WeightType>().is_err());
    }
}
