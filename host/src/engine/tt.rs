//! The transposition table, shared by all search threads without locks.
//!
//! An entry is two `AtomicU64`: the data (move, score, static evaluation, depth, bound,
//! generation) and the position's key XOR the data. A reader accepts an entry only if the two
//! words XOR to its key, so a torn entry (two threads writing at once) reads as a miss instead of
//! wrong data (the "lockless hashing" of Hyatt and Mann). Entries live in buckets of four that
//! fill one 64-byte cache line; a new entry replaces the one with the same key, else the
//! shallowest and oldest.

use std::alloc::{Layout, alloc, dealloc};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a stored score is: exact, an upper bound (fail low) or a lower bound (fail high), or
/// nothing (`None`: the entry only caches the static evaluation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// No score: only the static evaluation (and perhaps a move) is known.
    None = 0,
    /// The true score is at most the stored one.
    Upper = 1,
    /// The true score is at least the stored one.
    Lower = 2,
    /// The stored score is the true one (at that depth).
    Exact = 3,
}

/// A decoded entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtEntry {
    /// The best move found, packed ([`super::movepick::pack`]); 0 for none.
    pub mv: u16,
    /// The score (mate scores relative to the stored node, see [`super::search`]).
    pub score: i16,
    /// The static evaluation of the position.
    pub eval: i16,
    /// The depth searched (0 for quiescence).
    pub depth: u8,
    /// The kind of bound.
    pub bound: Bound,
    /// Whether the node was (part of) a principal variation.
    pub pv: bool,
}

const GEN_BITS: u32 = 5;
const GEN_MASK: u8 = (1 << GEN_BITS) - 1;
const ENTRIES_PER_BUCKET: usize = 4;

#[derive(Default)]
#[repr(C, align(64))]
struct Bucket {
    words: [AtomicU64; 2 * ENTRIES_PER_BUCKET],
}

#[inline(always)]
fn pack(e: &TtEntry, generation: u8) -> u64 {
    (e.mv as u64)
        | ((e.score as u16 as u64) << 16)
        | ((e.eval as u16 as u64) << 32)
        | ((e.depth as u64) << 48)
        | ((e.bound as u64) << 56)
        | (((generation & GEN_MASK) as u64) << 58)
        | ((e.pv as u64) << 63)
}

#[inline(always)]
fn unpack(data: u64) -> Option<(TtEntry, u8)> {
    if data == 0 {
        // An empty slot (or an evaluation-only entry of score 0 from generation 0: a miss).
        return None;
    }
    let bound = match (data >> 56) & 3 {
        1 => Bound::Upper,
        2 => Bound::Lower,
        3 => Bound::Exact,
        _ => Bound::None,
    };
    Some((
        TtEntry {
            mv: data as u16,
            score: (data >> 16) as u16 as i16,
            eval: (data >> 32) as u16 as i16,
            depth: (data >> 48) as u8,
            bound,
            pv: data >> 63 != 0,
        },
        ((data >> 58) as u8) & GEN_MASK,
    ))
}

/// The table: any number of buckets (any size in MiB), indexed by the high bits of the key's
/// product with the bucket count. The memory is aligned to 2 MiB and, on Linux, marked for
/// transparent huge pages: random probes then rarely miss the TLB.
pub struct TranspositionTable {
    buckets: NonNull<Bucket>,
    len: usize,
    layout: Layout,
    generation: AtomicU64,
}

// SAFETY: the table owns its buckets, which are only accessed through atomics.
unsafe impl Send for TranspositionTable {}
// SAFETY: as above.
unsafe impl Sync for TranspositionTable {}

impl Drop for TranspositionTable {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout.
        unsafe { dealloc(self.buckets.as_ptr() as *mut u8, self.layout) }
    }
}

impl std::fmt::Debug for TranspositionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TranspositionTable({} MiB)", self.size_mb())
    }
}

const HUGE_PAGE: usize = 2 << 20;

/// A hash table that cannot be had. `Display`: one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    /// The memory of a table of this many MiB cannot be allocated.
    #[error("cannot allocate {0} MiB for the hash table")]
    Alloc(usize),
    /// Neither the size asked for nor the old one could be had: the table has 1 MiB.
    #[error("{0}; {1}; the hash table has 1 MiB")]
    Fallback(Box<HashError>, Box<HashError>),
}

impl TranspositionTable {
    /// A cleared table of `mb` MiB (at least one bucket). Fails, instead of aborting the
    /// process, when the memory cannot be had.
    pub fn new(mb: usize) -> Result<Self, HashError> {
        let fail = || HashError::Alloc(mb);
        let bytes = mb.max(1).checked_mul(1 << 20).ok_or_else(fail)?;
        let len = (bytes / std::mem::size_of::<Bucket>()).max(1);
        let size = len * std::mem::size_of::<Bucket>();
        let align = if size >= HUGE_PAGE {
            HUGE_PAGE
        } else {
            std::mem::align_of::<Bucket>()
        };
        let layout = Layout::from_size_align(size, align).map_err(|_| fail())?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        let Some(buckets) = NonNull::new(ptr as *mut Bucket) else {
            return Err(fail());
        };
        #[cfg(target_os = "linux")]
        if align == HUGE_PAGE {
            // SAFETY: advice on memory this table owns; failure only loses the speed-up.
            unsafe {
                libc::madvise(ptr as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
            }
        }
        // SAFETY: all-zero bytes are valid atomics (an empty table); written before any reference.
        unsafe { std::ptr::write_bytes(ptr, 0, size) };
        Ok(TranspositionTable {
            buckets,
            len,
            layout,
            generation: AtomicU64::new(0),
        })
    }

    #[inline(always)]
    fn buckets(&self) -> &[Bucket] {
        // SAFETY: `len` initialised buckets live at `buckets` for the table's lifetime.
        unsafe { std::slice::from_raw_parts(self.buckets.as_ptr(), self.len) }
    }

    /// The size in MiB.
    pub fn size_mb(&self) -> usize {
        (self.len * std::mem::size_of::<Bucket>()) >> 20
    }

    /// Empties every entry and resets the generation.
    pub fn clear(&self) {
        for b in self.buckets() {
            for w in &b.words {
                w.store(0, Ordering::Relaxed);
            }
        }
        self.generation.store(0, Ordering::Relaxed);
    }

    /// Starts a new search: entries of earlier searches become preferred victims.
    pub fn new_search(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    #[inline(always)]
    fn current_generation(&self) -> u8 {
        (self.generation.load(Ordering::Relaxed) as u8) & GEN_MASK
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> &Bucket {
        let i = ((key as u128 * self.len as u128) >> 64) as usize;
        // SAFETY: i < len because key < 2^64.
        unsafe { &*self.buckets.as_ptr().add(i) }
    }

    /// Hints the processor to fetch the bucket of `key`.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint without memory effects; the pointer is valid.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(self.bucket(key) as *const Bucket as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The entry stored for `key`, if any.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        let b = self.bucket(key);
        for i in 0..ENTRIES_PER_BUCKET {
            let k = b.words[2 * i].load(Ordering::Relaxed);
            let d = b.words[2 * i + 1].load(Ordering::Relaxed);
            if k ^ d == key
                && let Some((e, _)) = unpack(d)
            {
                return Some(e);
            }
        }
        None
    }

    /// Stores an entry for `key`. Keeps the old move when the new entry has none, and keeps a
    /// deeper entry of the same position from this search unless the new one is exact.
    #[inline]
    pub fn store(&self, key: u64, mut entry: TtEntry) {
        let b = self.bucket(key);
        let generation = self.current_generation();
        let mut victim = 0;
        let mut victim_worth = i32::MAX;
        for i in 0..ENTRIES_PER_BUCKET {
            let k = b.words[2 * i].load(Ordering::Relaxed);
            let d = b.words[2 * i + 1].load(Ordering::Relaxed);
            match unpack(d) {
                Some((old, old_gen)) if k ^ d == key => {
                    if entry.mv == 0 {
                        entry.mv = old.mv;
                    }
                    if entry.bound != Bound::Exact
                        && old_gen == generation
                        && old.depth as i32 > entry.depth as i32 + 3
                    {
                        return;
                    }
                    victim = i;
                    break;
                }
                Some((old, old_gen)) => {
                    let age = (generation.wrapping_sub(old_gen) & GEN_MASK) as i32;
                    let worth = old.depth as i32 - 8 * age;
                    if worth < victim_worth {
                        victim_worth = worth;
                        victim = i;
                    }
                }
                None => {
                    victim = i;
                    victim_worth = i32::MIN;
                }
            }
        }
        let data = pack(&entry, generation);
        b.words[2 * victim].store(key ^ data, Ordering::Relaxed);
        b.words[2 * victim + 1].store(data, Ordering::Relaxed);
    }

    /// Permille of the first thousand entries written by the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let generation = self.current_generation();
        let mut used = 0u32;
        let mut seen = 0u32;
        'outer: for b in self.buckets() {
            for i in 0..ENTRIES_PER_BUCKET {
                if seen == 1000 {
                    break 'outer;
                }
                seen += 1;
                let d = b.words[2 * i + 1].load(Ordering::Relaxed);
                if let Some((_, g)) = unpack(d)
                    && g == generation
                {
                    used += 1;
                }
            }
        }
        (used * 1000).checked_div(seen).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(mv: u16, score: i16, depth: u8, bound: Bound) -> TtEntry {
        TtEntry {
            mv,
            score,
            eval: -7,
            depth,
            bound,
            pv: true,
        }
    }

    #[test]
    fn stores_and_probes_round_trip() {
        let tt = TranspositionTable::new(1).unwrap();
        let e = entry(1234, -31000, 17, Bound::Lower);
        tt.store(0xdead_beef_0123_4567, e);
        assert_eq!(tt.probe(0xdead_beef_0123_4567), Some(e));
        assert_eq!(tt.probe(0xdead_beef_0123_4568), None);
        tt.clear();
        assert_eq!(tt.probe(0xdead_beef_0123_4567), None);
    }

    #[test]
    fn keeps_the_old_move_and_deeper_entries() {
        let tt = TranspositionTable::new(1).unwrap();
        let key = 42;
        tt.store(key, entry(77, 10, 12, Bound::Lower));
        // A much shallower non-exact entry of the same search does not replace it.
        tt.store(key, entry(0, 5, 2, Bound::Upper));
        assert_eq!(tt.probe(key).unwrap().depth, 12);
        // An exact one does, keeping the move.
        tt.store(key, entry(0, 5, 2, Bound::Exact));
        let e = tt.probe(key).unwrap();
        assert_eq!((e.depth, e.mv, e.bound), (2, 77, Bound::Exact));
    }

    #[test]
    fn evaluation_only_entries_round_trip() {
        let tt = TranspositionTable::new(1).unwrap();
        let e = TtEntry {
            mv: 0,
            score: 0,
            eval: 123,
            depth: 0,
            bound: Bound::None,
            pv: false,
        };
        tt.store(99, e);
        assert_eq!(tt.probe(99), Some(e));
    }

    #[test]
    fn full_buckets_replace_the_shallowest_entry() {
        let tt = TranspositionTable::new(1).unwrap();
        let n = tt.len as u128;
        // Keys that land in bucket 0: (key * n) >> 64 == 0 for key < 2^64 / n.
        let step = (u64::MAX as u128 / n / 8) as u64;
        let keys: Vec<u64> = (1..=5).map(|i| i * step).collect();
        for (i, &k) in keys.iter().take(4).enumerate() {
            tt.store(k, entry(1, 0, 10 + i as u8, Bound::Exact));
        }
        tt.store(keys[4], entry(1, 0, 1, Bound::Exact));
        assert!(tt.probe(keys[0]).is_none(), "the shallowest was replaced");
        for &k in &keys[1..] {
            assert!(tt.probe(k).is_some());
        }
    }

    #[test]
    fn hashfull_counts_entries_of_this_search() {
        let tt = TranspositionTable::new(1).unwrap();
        assert_eq!(tt.hashfull(), 0);
        let n = tt.len as u128;
        for i in 0..250u64 {
            // One key per bucket of the first 250 buckets.
            let key = ((i as u128 * (1u128 << 64) + (1u128 << 63)) / n) as u64 | 1;
            tt.store(key, entry(1, 0, 5, Bound::Exact));
        }
        assert_eq!(tt.hashfull(), 250);
        tt.new_search();
        assert_eq!(tt.hashfull(), 0);
    }

    #[test]
    fn size_is_what_was_asked() {
        assert_eq!(TranspositionTable::new(16).unwrap().size_mb(), 16);
    }
}
