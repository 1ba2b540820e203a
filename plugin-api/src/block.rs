//! The feature-block interface: what a plugin exports and how the host calls it.
//!
//! A block is described by a [`BlockDescriptor`]: plain data (name, size, layout identity,
//! buffer bounds) and two `extern "C"` functions. `active` lists every index of a board from one
//! perspective; `delta` lists, for one move and **both perspectives in one call**, the indices
//! that the move adds and removes, into caller-owned fixed-size buffers ([`IndexList`]). No
//! allocation crosses the boundary, and errors (a panic inside the plugin, an overflowing buffer)
//! come back as values ([`PluginError`]).
//!
//! Plugin authors implement the safe [`FeatureBlock`] trait and export their blocks with
//! [`export_plugin!`](crate::export_plugin); the shims here turn the trait into descriptors.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, Once};

use abi_stable::std_types::{RResult, RStr, RString};
use abi_stable::StableAbi;

use crate::decompose::{decompose, PieceOnSquare};
use crate::geometry::{GeometryDescriptor, Grid, Place};
use crate::types::{Board, Color, Move, Role, Square};

/// A caller-owned output buffer of feature indices with a fixed capacity.
///
/// `push` beyond the capacity drops the index and sets `overflow`; the shims turn that into an
/// error for `active` and into a refresh request for `delta`, so a too-small bound is never a
/// silently wrong answer.
///
/// The caller may also *place* the list ([`placed`](Self::placed)): every index is stored plus
/// an offset (the host's row of it, or its place in the whole feature set), and an index at or
/// above the block's size is refused and remembered ([`stray`](Self::stray)), which the host
/// reports as an error naming the block. So the host takes a block's answer as it stands,
/// without a pass over it.
#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct IndexList<'a> {
    ptr: *mut u32,
    // `len` and `stray_index` side by side, as `overflow` and `stray`: a new list's zeros are
    // two stores, not four (a delta makes four lists per block and move).
    len: u32,
    /// The first refused index (when `stray`).
    stray_index: u32,
    cap: u32,
    /// Added (wrapping) to every index as it is stored.
    offset: u32,
    /// The largest index accepted (`u32::MAX`: any).
    max: u32,
    overflow: bool,
    stray: bool,
    _buf: PhantomData<&'a mut u32>,
}

impl<'a> IndexList<'a> {
    /// A list writing into `buf` (its length is the capacity), starting empty, storing indices
    /// as they are.
    pub fn new(buf: &'a mut [u32]) -> Self {
        Self::raw(buf.as_mut_ptr(), buf.len(), 0, u32::MAX)
    }

    /// A list writing into `buf`, memory not yet written (a `Vec`'s spare capacity: no need to
    /// zero it first, as the list reads back only what it wrote), that stores each index plus
    /// `offset` (wrapping) and refuses indices at or above `size` (a block's, at least 1).
    pub fn placed(buf: &'a mut [MaybeUninit<u32>], offset: u32, size: u32) -> Self {
        Self::raw(
            buf.as_mut_ptr().cast(),
            buf.len(),
            offset,
            size.saturating_sub(1),
        )
    }

    /// This list, refusing indices at or above `size` (at least 1): a factor's lists in the
    /// host's scratch.
    pub fn below(mut self, size: u32) -> Self {
        self.max = size.saturating_sub(1);
        self
    }

    fn raw(ptr: *mut u32, cap: usize, offset: u32, max: u32) -> Self {
        IndexList {
            ptr,
            len: 0,
            stray_index: 0,
            cap: u32::try_from(cap).unwrap_or(u32::MAX),
            offset,
            max,
            overflow: false,
            stray: false,
            _buf: PhantomData,
        }
    }

    /// Appends an index (or records the overflow when full, or the stray index when it is past
    /// the block's size).
    #[inline(always)]
    pub fn push(&mut self, index: u32) {
        if index <= self.max && self.len < self.cap {
            // SAFETY: len < cap and ptr points to cap writable u32s borrowed for 'a.
            unsafe {
                self.ptr
                    .add(self.len as usize)
                    .write(index.wrapping_add(self.offset))
            };
            self.len += 1;
        } else {
            self.refuse(index);
        }
    }

    /// The cold side of [`push`](Self::push): an index past the size, or a full list.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, index: u32) {
        if index > self.max {
            if !self.stray {
                self.stray = true;
                self.stray_index = index;
            }
        } else {
            self.overflow = true;
        }
    }

    /// The indices written so far, as stored (each plus the list's offset).
    #[inline(always)]
    pub fn as_slice(&self) -> &[u32] {
        // SAFETY: the first len entries were written by push.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len as usize) }
    }

    /// Number of indices written.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether nothing was written.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a push found the buffer full.
    #[inline(always)]
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// Where the list writes: the host checks that a block left it the lists it was given (one
    /// put in their place would hold indices the host never checked).
    #[inline(always)]
    pub fn buffer(&self) -> *const u32 {
        self.ptr
    }

    /// The first index pushed at or above the size, if any (it was not stored).
    #[inline(always)]
    pub fn stray(&self) -> Option<u32> {
        self.stray.then_some(self.stray_index)
    }

    /// Removes one occurrence of `index` (the last index takes its place) and says whether
    /// there was one: a block that lists a move's changes one piece at a time cancels a change
    /// that a later piece takes back.
    #[inline(always)]
    pub fn take(&mut self, index: u32) -> bool {
        let stored = index.wrapping_add(self.offset);
        match self.as_slice().iter().position(|&i| i == stored) {
            Some(k) => {
                let last = self.len as usize - 1;
                // SAFETY: k and last are below len, so both entries were written by push.
                unsafe { self.ptr.add(k).write(self.ptr.add(last).read()) };
                self.len -= 1;
                true
            }
            None => false,
        }
    }

    /// Forgets the written indices, the overflow and the stray index.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
        self.overflow = false;
        self.stray = false;
    }
}

/// The output of one `delta` call: added and removed indices and a refresh flag for each
/// perspective (indexed by [`Color::index`]).
///
/// A block sets `refresh[p]` when perspective `p` cannot be updated incrementally (a king-relative
/// block after a king move); the host then recomputes that perspective with `active` and ignores
/// its lists.
#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct MoveDelta<'a> {
    /// Indices whose count goes up by one, per perspective.
    pub added: [IndexList<'a>; 2],
    /// Indices whose count goes down by one, per perspective.
    pub removed: [IndexList<'a>; 2],
    /// Perspectives that need a full refresh.
    pub refresh: [bool; 2],
}

impl<'a> MoveDelta<'a> {
    /// Empty lists writing into `buffers` (added White, added Black, removed White, removed
    /// Black; arrays or vectors, each's length its capacity), no refresh asked.
    pub fn over<B: AsMut<[u32]>>(buffers: &'a mut [B; 4]) -> Self {
        let [a0, a1, r0, r1] = buffers;
        MoveDelta {
            added: [IndexList::new(a0.as_mut()), IndexList::new(a1.as_mut())],
            removed: [IndexList::new(r0.as_mut()), IndexList::new(r1.as_mut())],
            refresh: [false; 2],
        }
    }

    /// Empties all lists and clears the refresh flags.
    #[inline]
    pub fn clear(&mut self) {
        for l in self.added.iter_mut().chain(self.removed.iter_mut()) {
            l.clear();
        }
        self.refresh = [false; 2];
    }
}

/// Why a call into a block failed.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ErrorKind {
    /// The block's code panicked; the panic was caught inside the plugin.
    Panicked = 0,
    /// The caller's buffer was smaller than the block's declared bound needs.
    Overflow = 1,
}

/// An error returned across the boundary instead of unwinding.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PluginError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A one-line description (the panic message and location, for a panic).
    pub message: RString,
}

/// When a block asks for a perspective's refresh: a promise the conformance kit checks, which
/// lets the host plan for refreshes (a cache of accumulators keyed by the own king's square for
/// sets that only refresh when that king moves, the "Finny table" of Koivisto and Stockfish).
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, PartialEq, Eq, Debug)]
pub enum RefreshTrigger {
    /// No promise: the block may ask for a refresh after any move.
    AnyMove = 0,
    /// The block never asks for a refresh.
    Never = 1,
    /// The block asks for perspective `p`'s refresh only when `p`'s own king moves (castling
    /// included): king-relative blocks such as `halfka_v2_hm`.
    OwnKingMove = 2,
    /// The block never asks for a refresh and its indices for `p` depend on `p`'s own king square
    /// alone, so they change only when that king moves (`k`). A product whose left factors all
    /// promise this refreshes only on own king moves.
    OwnKingSquare = 3,
    /// The block asks for perspective `p`'s refresh only when `p`'s own king moves between
    /// files a–d and e–h: blocks mirrored by the king's side alone, such as `full_threats`.
    OwnKingSide = 4,
}

impl RefreshTrigger {
    /// Whether `mv` (legal on `board`) is a move this trigger names for perspective `p`: a move
    /// of `p`'s own king (`OwnKingMove`), one that takes it between files a–d and e–h
    /// (`OwnKingSide`). A block that the host does not ask about a move (its
    /// [`FeatureBlock::CHANGED_BY`]) is refreshed where this holds: a refresh its own trigger
    /// explains needs no call.
    #[inline]
    pub fn fires(self, board: &Board, mv: &Move, p: Color) -> bool {
        if !board.moves_king_of(mv, p) {
            return false;
        }
        let side = |king: Option<Square>| king.map(|k| k & 7 >= 4);
        match self {
            RefreshTrigger::OwnKingMove => true,
            RefreshTrigger::OwnKingSide => side(board.king(p)) != side(board.king_after(mv, p)),
            RefreshTrigger::AnyMove | RefreshTrigger::Never | RefreshTrigger::OwnKingSquare => {
                false
            }
        }
    }
}

/// Everything the host knows about one feature block: identity, bounds and entry points.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct BlockDescriptor {
    /// The name used in feature-set specs (`all`, `ph`, `mb`...).
    pub name: RStr<'static>,
    /// One line for listings.
    pub description: RStr<'static>,
    /// Number of indices; every emitted index is below it.
    pub size: u32,
    /// Version of the index layout, bumped whenever an index changes meaning.
    pub layout_version: u32,
    /// Identity of the layout: a hash of name, size and layout version. Networks store it.
    pub layout_id: u64,
    /// Upper bound of indices `active` emits for one perspective (duplicates counted).
    pub max_active: u32,
    /// Upper bound of indices in one list of one perspective in `delta`.
    pub max_delta: u32,
    /// Whether Black's indices of a board equal White's indices of its colour-flipped mirror.
    pub mirror_symmetric: bool,
    /// When the block asks for refreshes.
    pub refresh_trigger: RefreshTrigger,
    /// The roles whose moves may change the block's indices or ask for a refresh, bit `r` for
    /// [`Role`] `r` ([`FeatureBlock::CHANGED_BY`]): the host does not call `delta` for a move
    /// that moves, takes and promotes to none of them ([`Move::roles`]), and refreshes where
    /// the block's refresh trigger [`fires`](RefreshTrigger::fires).
    pub changed_by: u8,
    /// Whether the block emits every index at most once per board and perspective, so counts
    /// only go 0 ↔ 1.
    pub binary: bool,
    /// Whether the block is a sum over pieces: its indices of a board are those of the own king
    /// alone plus, for every other piece, what that piece adds to the own king alone (plain and
    /// king-relative piece-square blocks). The host then refreshes from a cached position by
    /// looking at the pieces that differ only.
    pub piecewise: bool,
    /// Number of the block's virtual (factor) features for training; 0 if it declares none.
    pub factor_size: u32,
    /// The virtual feature (below `factor_size`) that shares the weights of index `i`, or
    /// `u32::MAX` if the block's code panicked. Only called when `factor_size > 0`.
    pub factor: extern "C" fn(u32) -> u32,
    /// All indices of a board from one perspective (duplicates allowed: counts matter).
    pub active: extern "C" fn(&Board, Color, &mut IndexList<'_>) -> RResult<(), PluginError>,
    /// Indices added and removed by a move, both perspectives.
    pub delta: extern "C" fn(&Board, &Move, &mut MoveDelta<'_>) -> RResult<(), PluginError>,
    /// How the block's indices are drawn (its grid's `sheets` is 0 when it declares nothing).
    pub geometry: GeometryDescriptor,
}

/// FNV-1a over the layout's defining data: the identity stored in networks.
pub const fn layout_id(name: &str, size: u32, version: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    let tail = ((size as u64) << 32) | version as u64;
    let mut j = 0;
    while j < 8 {
        h ^= (tail >> (8 * j)) & 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
        j += 1;
    }
    h
}

/// A feature block written in Rust. Blocks are stateless: every answer depends only on the
/// board and the move, so one definition serves the engine and the trainer.
pub trait FeatureBlock: 'static {
    /// Name in feature-set specs.
    const NAME: &'static str;
    /// One line for listings.
    const DESCRIPTION: &'static str;
    /// Number of indices.
    const SIZE: u32;
    /// Layout version; bump it whenever an index changes meaning.
    const LAYOUT_VERSION: u32 = 1;
    /// Bound on indices `active` emits per perspective.
    const MAX_ACTIVE: u32;
    /// Bound on indices in one list of one perspective in `delta`.
    const MAX_DELTA: u32;
    /// Whether the block promises mirror symmetry (see [`BlockDescriptor::mirror_symmetric`]).
    const MIRROR_SYMMETRIC: bool = true;
    /// When the block asks for refreshes (see [`RefreshTrigger`]); no promise by default.
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::AnyMove;
    /// The roles whose moves may change the block's indices or ask for a refresh, bit `r` for
    /// [`Role`] `r` ([`Role::bit`]): a move that moves, takes and promotes to none of them
    /// ([`Move::roles`]) leaves the block as it was but for the refreshes its
    /// [`REFRESH_TRIGGER`](Self::REFRESH_TRIGGER) names ([`RefreshTrigger::fires`]), which the
    /// host makes without asking it (`pp_3wide`: pawns; a king move changes it only by the
    /// refresh of a king changing side). Every role by default. The conformance kit checks the
    /// promise.
    const CHANGED_BY: u8 = Role::ALL_BITS;
    /// Whether every index is emitted at most once (see [`BlockDescriptor::binary`]).
    const BINARY: bool = false;
    /// Whether the block is a sum over pieces (see [`BlockDescriptor::piecewise`]).
    const PIECEWISE: bool = false;
    /// Number of virtual features a factorized training adds (see [`factor`](Self::factor));
    /// 0 for none.
    const FACTOR_SIZE: u32 = 0;

    /// The virtual feature whose weights index `i` shares in a factorized training (Stockfish's
    /// and nnue-pytorch's factorizers: the weights of a real feature are its own plus its
    /// factor's, summed into one row on export). Must map the indices of any one board and
    /// perspective to distinct virtual features (the conformance kit checks it).
    fn factor(index: u32) -> u32 {
        index
    }

    /// The shape of the block's pictures (see [`crate::geometry`]); [`Grid::NONE`] (the
    /// default) draws the indices in index order.
    const GEOMETRY: Grid = Grid::NONE;

    /// The names of the sheets of [`GEOMETRY`](Self::GEOMETRY), in order (`own pawn`, ...).
    const SHEET_NAMES: &'static [&'static str] = &[];

    /// The name of sheet `sheet` of [`GEOMETRY`](Self::GEOMETRY): its entry of
    /// [`SHEET_NAMES`](Self::SHEET_NAMES), empty past the end. Override it only for names made
    /// at run time.
    fn sheet_name(sheet: u32) -> &'static str {
        Self::SHEET_NAMES.get(sheet as usize).copied().unwrap_or("")
    }

    /// Where index `index` is drawn in [`GEOMETRY`](Self::GEOMETRY); [`Place::NONE`] for an index
    /// the block never emits. The conformance kit checks that places are distinct and inside.
    fn place(_index: u32) -> Place {
        Place::NONE
    }

    /// Appends every active index of `board` from `perspective`.
    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>);

    /// Appends what `mv` (legal on `board`) adds and removes, for both perspectives. The default
    /// recomputes both boards and emits the difference: always correct, rarely fast.
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        full_diff_delta(board, mv, out, Self::active, Self::MAX_ACTIVE as usize);
    }
}

impl BlockDescriptor {
    /// The descriptor of a Rust block: its constants and panic-catching shims.
    pub const fn of<B: FeatureBlock>() -> BlockDescriptor {
        BlockDescriptor {
            name: RStr::from_str(B::NAME),
            description: RStr::from_str(B::DESCRIPTION),
            size: B::SIZE,
            layout_version: B::LAYOUT_VERSION,
            layout_id: layout_id(B::NAME, B::SIZE, B::LAYOUT_VERSION),
            max_active: B::MAX_ACTIVE,
            max_delta: B::MAX_DELTA,
            mirror_symmetric: B::MIRROR_SYMMETRIC,
            refresh_trigger: B::REFRESH_TRIGGER,
            changed_by: B::CHANGED_BY,
            binary: B::BINARY,
            piecewise: B::PIECEWISE,
            factor_size: B::FACTOR_SIZE,
            factor: factor_shim::<B>,
            active: active_shim::<B>,
            delta: delta_shim::<B>,
            geometry: GeometryDescriptor {
                grid: B::GEOMETRY,
                sheet_name: sheet_name_shim::<B>,
                place: place_shim::<B>,
            },
        }
    }
}

extern "C" fn factor_shim<B: FeatureBlock>(index: u32) -> u32 {
    catch_unwind(|| B::factor(index)).unwrap_or(u32::MAX)
}

extern "C" fn sheet_name_shim<B: FeatureBlock>(sheet: u32) -> RStr<'static> {
    RStr::from_str(catch_unwind(|| B::sheet_name(sheet)).unwrap_or(""))
}

extern "C" fn place_shim<B: FeatureBlock>(index: u32) -> Place {
    catch_unwind(|| B::place(index)).unwrap_or(Place::NONE)
}

extern "C" fn active_shim<B: FeatureBlock>(
    board: &Board,
    perspective: Color,
    out: &mut IndexList<'_>,
) -> RResult<(), PluginError> {
    match guard(|| B::active(board, perspective, out)) {
        RResult::ROk(()) if out.overflowed() => RResult::RErr(PluginError {
            kind: ErrorKind::Overflow,
            message: format!(
                "active() emitted more than the buffer's {} indices (declared bound {})",
                out.cap,
                B::MAX_ACTIVE
            )
            .into(),
        }),
        r => r,
    }
}

extern "C" fn delta_shim<B: FeatureBlock>(
    board: &Board,
    mv: &Move,
    out: &mut MoveDelta<'_>,
) -> RResult<(), PluginError> {
    let r = guard(|| B::delta(board, mv, out));
    // Without branches: a perspective whose list overflowed is refreshed.
    for p in 0..2 {
        out.refresh[p] |= out.added[p].overflowed() | out.removed[p].overflowed();
    }
    r
}

static PANIC_LOCATION: Mutex<Option<String>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Makes panics inside a loaded plugin silent: the shim reports them as a [`PluginError`] with
/// message and location, and the host prints one line. Called by the root module of
/// [`export_plugin!`](crate::export_plugin), so it only affects the plugin's own copy of `std`,
/// never the host's.
#[doc(hidden)]
pub fn install_plugin_panic_hook() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if let Ok(mut slot) = PANIC_LOCATION.lock() {
                *slot = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
            }
        }));
    });
}

fn guard(f: impl FnOnce()) -> RResult<(), PluginError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => RResult::ROk(()),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            let location = PANIC_LOCATION
                .lock()
                .ok()
                .and_then(|mut l| l.take())
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            RResult::RErr(PluginError {
                kind: ErrorKind::Panicked,
                message: format!("panicked: {}{location}", what.replace('\n', " ")).into(),
            })
        }
    }
}

thread_local! {
    static DIFF_SCRATCH: RefCell<(Vec<u32>, Vec<u32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// A correct `delta` for any block: recomputes `active` before and after the move and emits the
/// multiset difference for both perspectives.
pub fn full_diff_delta(
    board: &Board,
    mv: &Move,
    out: &mut MoveDelta<'_>,
    active: fn(&Board, Color, &mut IndexList<'_>),
    max_active: usize,
) {
    let after = board.play(mv);
    DIFF_SCRATCH.with(|scratch| {
        let (before_buf, after_buf) = &mut *scratch.borrow_mut();
        for p in Color::ALL {
            let before_ix = collect_sorted(board, p, active, max_active, before_buf);
            let after_ix = collect_sorted(&after, p, active, max_active, after_buf);
            let pi = p.index();
            let (mut i, mut j) = (0, 0);
            while i < before_ix.len() || j < after_ix.len() {
                match (before_ix.get(i), after_ix.get(j)) {
                    (Some(a), Some(b)) if a == b => {
                        i += 1;
                        j += 1;
                    }
                    (Some(&a), Some(&b)) if a < b => {
                        out.removed[pi].push(a);
                        i += 1;
                    }
                    (Some(&a), None) => {
                        out.removed[pi].push(a);
                        i += 1;
                    }
                    (_, Some(&b)) => {
                        out.added[pi].push(b);
                        j += 1;
                    }
                    (None, None) => unreachable!(),
                }
            }
        }
    });
}

fn collect_sorted<'b>(
    board: &Board,
    p: Color,
    active: fn(&Board, Color, &mut IndexList<'_>),
    max_active: usize,
    buf: &'b mut Vec<u32>,
) -> &'b [u32] {
    buf.clear();
    buf.resize(max_active, 0);
    let mut list = IndexList::new(buf);
    active(board, p, &mut list);
    let n = list.len();
    buf.truncate(n);
    buf.sort_unstable();
    buf
}

/// A piece as one perspective sees it: square mirrored for Black, and whether it is the
/// perspective's own piece.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RelativePiece {
    /// The square after the perspective's vertical mirror.
    pub square: Square,
    /// The piece's role.
    pub role: Role,
    /// Whether the piece belongs to the perspective's side.
    pub own: bool,
}

impl RelativePiece {
    /// How `perspective` sees `piece`.
    #[inline(always)]
    pub fn new(perspective: Color, piece: PieceOnSquare) -> Self {
        RelativePiece {
            square: perspective.relative(piece.square),
            role: piece.role,
            own: piece.color == perspective,
        }
    }
}

/// `active` for a block in which every piece contributes one index of its own; `index` may
/// return an `Option` to leave some pieces out (`p`: kings).
#[inline]
pub fn piece_block_active<I: Into<Option<u32>>>(
    board: &Board,
    perspective: Color,
    out: &mut IndexList<'_>,
    index: impl Fn(RelativePiece) -> I,
) {
    board.for_each_piece(|square, color, role| {
        let piece = PieceOnSquare {
            square,
            color,
            role,
        };
        if let Some(ix) = index(RelativePiece::new(perspective, piece)).into() {
            out.push(ix);
        }
    });
}

/// `delta` for a block in which every piece contributes one index of its own (or none, see
/// [`piece_block_active`]): the move's piece removals and additions (see [`decompose`]) mapped
/// through `index` for both perspectives. An addition whose index a removal holds cancels with
/// it (a piece moving along the line a count block counts it on), so the lists are exactly the
/// difference and the host does no row update that another takes back.
#[inline]
pub fn piece_block_delta<I: Into<Option<u32>>>(
    board: &Board,
    mv: &Move,
    out: &mut MoveDelta<'_>,
    index: impl Fn(RelativePiece) -> I,
) {
    let changes = decompose(board, mv);
    for p in Color::ALL {
        for &piece in changes.removed() {
            if let Some(ix) = index(RelativePiece::new(p, piece)).into() {
                out.removed[p.index()].push(ix);
            }
        }
        for &piece in changes.added() {
            if let Some(ix) = index(RelativePiece::new(p, piece)).into() {
                if !out.removed[p.index()].take(ix) {
                    out.added[p.index()].push(ix);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IndexList;

    #[test]
    fn take_removes_one_occurrence_and_says_whether_it_found_one() {
        let mut buf = [0u32; 4];
        let mut list = IndexList::new(&mut buf);
        for ix in [7, 3, 9] {
            list.push(ix);
        }
        assert!(list.take(7));
        assert_eq!(list.as_slice(), &[9, 3]);
        assert!(!list.take(7));
        assert!(list.take(3));
        assert!(list.take(9));
        assert!(list.is_empty() && !list.take(9));
    }
}
