//! Pairwise blocks: pairs of neighbouring pieces along the lines of the board.
//!
//! Every block here looks at one family of parallel lines. On each line the pieces are put in a
//! fixed order and every two **consecutive** pieces (no piece between them on the line) form a
//! pair. A pair's index is
//!
//! ```text
//! line * 144 + role_first * 24 + c_first * 12 + role_second * 2 + c_second
//! ```
//!
//! with roles pawn 0 .. king 5 and the **pairwise colour bit: 1 = the perspective's own piece,
//! 0 = the opponent's** (the reverse of the `all` and axis blocks, as in the thesis reference).
//! Everything is computed on the perspective-relative board: from Black's point of view the board
//! is mirrored **vertically only** (rank `r` becomes `7 - r`, the file is unchanged), and `f`, `r`
//! below are the file and rank after that mirror.
//!
//! | block | lines (`line` =) | order along a line | size |
//! | --- | --- | --- | --- |
//! | `ph` ([`Ph`]) | files, `f` (0..8) | rank ascending | 8 * 144 = 1152 |
//! | `pv` ([`Pv`]) | ranks, `r` (0..8) | file ascending | 8 * 144 = 1152 |
//! | `pd1` ([`Pd1`]) | diagonals with `f + r` constant (parallel to a8–h1), `f + r` (0..15) | file ascending | 15 * 144 = 2160 |
//! | `pd2` ([`Pd2`]) | diagonals with `f - r` constant (parallel to a1–h8), `f + 7 - r` (0..15) | file ascending | 15 * 144 = 2160 |
//!
//! `ph` and `pv` are the thesis's blocks (its reference code pairs within a **file** for `ph` and
//! within a **rank** for `pv`; see `shared/reference/thesis-layouts.md`), so the published
//! networks evaluate bit for bit. `pd1` and `pd2` are new: they pair pieces along exactly the
//! lines that the axis blocks `d1` and `d2` count on, with the same diagonal numbers (`d1` index
//! `(f + r) * 12 + ...`, `d2` index `(f + 7 - r) * 12 + ...`). A diagonal holds one square per
//! file, so "file ascending" orders its pieces completely: the first piece of a diagonal pair is
//! the one on the lower file (on a `pd1` diagonal that is also the higher rank, on a `pd2`
//! diagonal the lower rank). For example, in the start position
//! from White's side, `pd1` diagonal 1 holds the own pawn a2 and the own knight b1: the pair
//! (pawn, knight) has index `1 * 144 + 0 * 24 + 1 * 12 + 1 * 2 + 1 = 159`.
//!
//! **Mirror symmetry.** All four blocks keep the conformance kit's promise (Black's indices of a
//! board equal White's indices of the colour-flipped vertical mirror), because the line numbers,
//! the order and the colour bit are all taken on the perspective-relative board. Note what this
//! means on the real board for the diagonal blocks: the vertical mirror turns `f + r` diagonals
//! into `f - r` diagonals, so Black's `pd1` pairs lie on the real board's a1–h8-parallel
//! diagonals while White's lie on its a8–h1-parallel ones. Each side's `pd1` is the same
//! direction relative to its own back rank, which is what the mirror promise requires; numbering
//! the diagonals on absolute squares instead would break it (Black's `pd1` would then be White's
//! `pd2` of the mirrored board).
//!
//! **Incremental updates.** A move changes at most four squares (castling). `delta` only looks at
//! the lines through a changed square and emits, for each, the pairs whose span (the two pieces
//! and the squares between them) contains a changed square: those of the board before the move
//! as removed and those after the move as added. Every other pair keeps both pieces and stays
//! consecutive. Pairs that appear on both sides (a piece sliding along its line without passing
//! another piece) cancel out before they are written, so a pawn push leaves `ph` untouched.
//!
//! **Pictures.** Each block is drawn as one pair matrix per line ("file a" .. "file h",
//! "rank 1" .. "rank 8", "diagonal 0" .. "diagonal 14"): 12 × 12 cells whose row is the first
//! piece's kind and whose column is the second's, in the [`Axis::Piece`] order of all other
//! blocks (`role * 2 + c'` with **c' = 0 for the own piece**, the reverse of the pairwise
//! colour bit; see [`pair_place`]).

use plugin_api::{
    Axis, Board, Color, FILE_A, FeatureBlock, Grid, IndexList, Move, MoveDelta, Place,
    RefreshTrigger, Role, Square, decompose, file_of, rank_of,
};

/// Number of indices per line: 12 piece kinds (role and colour) for each end of a pair.
pub const PAIRS_PER_LINE: u32 = 144;

/// The index of a pair on a line: `line * 144 + role_first * 24 + c_first * 12 +
/// role_second * 2 + c_second`, with `c = 1` for the perspective's own pieces.
#[inline(always)]
pub const fn pair_index(
    line: u32,
    first_role: Role,
    first_own: bool,
    second_role: Role,
    second_own: bool,
) -> u32 {
    line * PAIRS_PER_LINE
        + piece_code(first_role, first_own) * 12
        + piece_code(second_role, second_own)
}

/// `role * 2 + c` with the pairwise colour bit (1 = own).
#[inline(always)]
const fn piece_code(role: Role, own: bool) -> u32 {
    role as u32 * 2 + own as u32
}

/// Where pair index `index` is drawn: sheet `index / 144` (the line), and in its 12 × 12
/// matrix row = the first piece's kind, column = the second's. A pairwise code `role * 2 + c`
/// (c = 1 own) becomes the drawing's kind `role * 2 + (1 - c)` (0 own) by flipping its low bit.
/// Example: `ph` file a of the start position, own rook then own pawn (index 85 = 7 · 12 + 1),
/// is sheet 0, row 6 (own rook), column 0 (own pawn).
#[inline]
pub fn pair_place(index: u32) -> Place {
    let pair = index % PAIRS_PER_LINE;
    let (first, second) = (pair / 12, pair % 12);
    Place::cell(
        index / PAIRS_PER_LINE,
        [(second ^ 1) as u8, (first ^ 1) as u8],
    )
}

/// The sheets of `ph`: one per file.
const FILE_SHEETS: [&str; 8] = [
    "file a", "file b", "file c", "file d", "file e", "file f", "file g", "file h",
];

/// The sheets of `pv`: one per (perspective-relative) rank.
const RANK_SHEETS: [&str; 8] = [
    "rank 1", "rank 2", "rank 3", "rank 4", "rank 5", "rank 6", "rank 7", "rank 8",
];

/// The sheets of `pd1` and `pd2`: one per diagonal, by its line number.
const DIAGONAL_SHEETS: [&str; 15] = [
    "diagonal 0",
    "diagonal 1",
    "diagonal 2",
    "diagonal 3",
    "diagonal 4",
    "diagonal 5",
    "diagonal 6",
    "diagonal 7",
    "diagonal 8",
    "diagonal 9",
    "diagonal 10",
    "diagonal 11",
    "diagonal 12",
    "diagonal 13",
    "diagonal 14",
];

/// A family of parallel lines on the perspective-relative board.
trait Lines {
    /// Number of lines; the block's size is `COUNT * 144`.
    const COUNT: u32;
    /// The name of each line (the sheets of the block's picture).
    const NAMES: &'static [&'static str];
    /// Whether pieces are paired in ascending square order along a line (otherwise descending).
    const ASCENDING: bool;
    /// The line through a square.
    fn line(sq: Square) -> u32;
    /// The squares of a line.
    fn mask(line: u32) -> u64;
}

/// The 15 diagonals with `file + rank` constant (index `file + rank`).
const DIAG_MASKS: [u64; 15] = {
    let mut masks = [0u64; 15];
    let mut sq = 0;
    while sq < 64 {
        masks[(file_of(sq) + rank_of(sq)) as usize] |= 1u64 << sq;
        sq += 1;
    }
    masks
};

/// The 15 diagonals with `file - rank` constant (index `file + 7 - rank`).
const ANTI_MASKS: [u64; 15] = {
    let mut masks = [0u64; 15];
    let mut sq = 0;
    while sq < 64 {
        masks[(file_of(sq) + 7 - rank_of(sq)) as usize] |= 1u64 << sq;
        sq += 1;
    }
    masks
};

/// Files, pieces in rank order (ascending square index).
struct Files;
impl Lines for Files {
    const COUNT: u32 = 8;
    const NAMES: &'static [&'static str] = &FILE_SHEETS;
    const ASCENDING: bool = true;
    #[inline(always)]
    fn line(sq: Square) -> u32 {
        u32::from(file_of(sq))
    }
    #[inline(always)]
    fn mask(line: u32) -> u64 {
        FILE_A << line
    }
}

/// Ranks, pieces in file order (ascending square index).
struct Ranks;
impl Lines for Ranks {
    const COUNT: u32 = 8;
    const NAMES: &'static [&'static str] = &RANK_SHEETS;
    const ASCENDING: bool = true;
    #[inline(always)]
    fn line(sq: Square) -> u32 {
        u32::from(rank_of(sq))
    }
    #[inline(always)]
    fn mask(line: u32) -> u64 {
        0xff << (8 * line)
    }
}

/// Diagonals with `file + rank` constant; along one, the square index falls as the file rises,
/// so file order is descending square order.
struct Diagonals;
impl Lines for Diagonals {
    const COUNT: u32 = 15;
    const NAMES: &'static [&'static str] = &DIAGONAL_SHEETS;
    const ASCENDING: bool = false;
    #[inline(always)]
    fn line(sq: Square) -> u32 {
        u32::from(file_of(sq) + rank_of(sq))
    }
    #[inline(always)]
    fn mask(line: u32) -> u64 {
        DIAG_MASKS[line as usize]
    }
}

/// Diagonals with `file - rank` constant; file order is ascending square order.
struct AntiDiagonals;
impl Lines for AntiDiagonals {
    const COUNT: u32 = 15;
    const NAMES: &'static [&'static str] = &DIAGONAL_SHEETS;
    const ASCENDING: bool = true;
    #[inline(always)]
    fn line(sq: Square) -> u32 {
        u32::from(file_of(sq) + 7 - rank_of(sq))
    }
    #[inline(always)]
    fn mask(line: u32) -> u64 {
        ANTI_MASKS[line as usize]
    }
}

/// Takes the next square of `bb` in line order.
#[inline(always)]
fn pop(bb: &mut u64, ascending: bool) -> Square {
    let sq = if ascending {
        bb.trailing_zeros()
    } else {
        63 - bb.leading_zeros()
    };
    *bb &= !(1u64 << sq);
    sq as Square
}

/// The board as `perspective` sees it: mirrored vertically for Black, and in both cases the
/// perspective's own pieces in `by_color[0]`. Only pieces are kept up to date.
#[inline(always)]
fn relative_pieces(board: &Board, perspective: Color) -> Board {
    match perspective {
        Color::White => *board,
        Color::Black => Board {
            by_color: [
                board.by_color[1].swap_bytes(),
                board.by_color[0].swap_bytes(),
            ],
            by_role: board.by_role.map(u64::swap_bytes),
            ..*board
        },
    }
}

/// `role * 2 + c` of the piece on an occupied square of a relative board (`by_color[0]` = own).
#[inline(always)]
fn code_at(rel: &Board, sq: Square) -> u32 {
    let bit = 1u64 << sq;
    let role = rel
        .by_role
        .iter()
        .position(|&bb| bb & bit != 0)
        .expect("code_at on an empty square") as u32;
    role * 2 + u32::from(rel.by_color[0] & bit != 0)
}

/// All pairs of a relative board.
fn pairs_active<L: Lines>(rel: &Board, out: &mut IndexList<'_>) {
    let mut codes = [0u8; 64];
    for (own, color_bb) in [(1u8, rel.by_color[0]), (0u8, rel.by_color[1])] {
        for (role, &role_bb) in rel.by_role.iter().enumerate() {
            let mut bb = color_bb & role_bb;
            while bb != 0 {
                let sq = bb.trailing_zeros();
                bb &= bb - 1;
                codes[sq as usize] = role as u8 * 2 + own;
            }
        }
    }
    let occ = rel.occupied();
    for line in 0..L::COUNT {
        let mut bb = occ & L::mask(line);
        if bb.count_ones() < 2 {
            continue;
        }
        let base = line * PAIRS_PER_LINE;
        let mut prev = u32::from(codes[pop(&mut bb, L::ASCENDING) as usize]);
        while bb != 0 {
            let next = u32::from(codes[pop(&mut bb, L::ASCENDING) as usize]);
            out.push(base + prev * 12 + next);
            prev = next;
        }
    }
}

/// The squares from `a` to `b` inclusive (in square order; on one line of any family this is
/// the stretch of the line between them once intersected with the line).
#[inline(always)]
fn span(a: Square, b: Square) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (u64::MAX >> (63 - hi)) & (u64::MAX << lo)
}

/// A small fixed-capacity list of pair indices, local to one `delta` call.
struct Pairs {
    buf: [u32; Pairs::CAP],
    len: usize,
    overflow: bool,
}

impl Pairs {
    /// Twice the proven bound of 8 pairs per list.
    const CAP: usize = 16;

    fn new() -> Self {
        Pairs {
            buf: [0; Self::CAP],
            len: 0,
            overflow: false,
        }
    }

    #[inline(always)]
    fn push(&mut self, index: u32) {
        if self.len < Self::CAP {
            self.buf[self.len] = index;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }

    #[inline(always)]
    fn swap_remove(&mut self, i: usize) {
        self.len -= 1;
        self.buf[i] = self.buf[self.len];
    }

    #[inline(always)]
    fn as_slice(&self) -> &[u32] {
        &self.buf[..self.len]
    }
}

/// Appends the pairs of `line` on `rel` whose span contains one of the `changed` squares
/// (all on that line).
#[inline(always)]
fn spanning_pairs<L: Lines>(rel: &Board, line: u32, changed: u64, out: &mut Pairs) {
    let mut bb = rel.occupied() & L::mask(line);
    if bb.count_ones() < 2 {
        return;
    }
    let base = line * PAIRS_PER_LINE;
    let mut prev = pop(&mut bb, L::ASCENDING);
    while bb != 0 {
        let next = pop(&mut bb, L::ASCENDING);
        if span(prev, next) & changed != 0 {
            out.push(base + code_at(rel, prev) * 12 + code_at(rel, next));
        }
        prev = next;
    }
}

/// The incremental update of a pairwise block (see the module docs).
fn pairs_delta<L: Lines>(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
    let changes = decompose(board, mv);
    let mut after = *board;
    for p in changes.removed() {
        after.remove(p.square, p.color, p.role);
    }
    for p in changes.added() {
        after.put(p.square, p.color, p.role);
    }
    let changed = changes.changed_squares();
    for p in Color::ALL {
        let before_rel = relative_pieces(board, p);
        let after_rel = relative_pieces(&after, p);
        let changed_rel = match p {
            Color::White => changed,
            Color::Black => changed.swap_bytes(),
        };
        let mut removed = Pairs::new();
        let mut added = Pairs::new();
        let mut lines_done = 0u32;
        let mut todo = changed_rel;
        while todo != 0 {
            let sq = todo.trailing_zeros() as Square;
            todo &= todo - 1;
            let line = L::line(sq);
            if lines_done & (1 << line) != 0 {
                continue;
            }
            lines_done |= 1 << line;
            let on_line = changed_rel & L::mask(line);
            spanning_pairs::<L>(&before_rel, line, on_line, &mut removed);
            spanning_pairs::<L>(&after_rel, line, on_line, &mut added);
        }
        let pi = p.index();
        if removed.overflow || added.overflow {
            out.refresh[pi] = true;
            continue;
        }
        // Cancel pairs present before and after (a multiset difference).
        let mut i = 0;
        while i < removed.len {
            match added.as_slice().iter().position(|&a| a == removed.buf[i]) {
                Some(j) => {
                    added.swap_remove(j);
                    removed.swap_remove(i);
                }
                None => i += 1,
            }
        }
        for &ix in removed.as_slice() {
            out.removed[pi].push(ix);
        }
        for &ix in added.as_slice() {
            out.added[pi].push(ix);
        }
    }
}

/// Every pair starts at a piece that is not the last of its line, so a board of at most 32
/// pieces has at most 31 pairs.
const MAX_PAIRS_ACTIVE: u32 = 31;

/// A changed square lies in the span of at most two consecutive pairs of its line (as an end of
/// two pairs if occupied, inside one pair if empty), and a move changes at most four squares.
const MAX_PAIRS_DELTA: u32 = 8;

/// Implements [`FeatureBlock`] for a pairwise block over a family of lines.
macro_rules! pair_block {
    ($block:ty, $lines:ty, $name:literal, $description:literal) => {
        impl FeatureBlock for $block {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $description;
            const SIZE: u32 = <$lines as Lines>::COUNT * PAIRS_PER_LINE;
            const MAX_ACTIVE: u32 = MAX_PAIRS_ACTIVE;
            const MAX_DELTA: u32 = MAX_PAIRS_DELTA;
            const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
            /// One 12 × 12 pair matrix per line.
            const GEOMETRY: Grid = Grid::cells(
                <$lines as Lines>::COUNT,
                [12, 12],
                [Axis::Piece, Axis::Piece],
                "first piece (row) × second piece (column)",
            );

            const SHEET_NAMES: &'static [&'static str] = <$lines as Lines>::NAMES;

            fn place(index: u32) -> Place {
                pair_place(index)
            }

            fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
                pairs_active::<$lines>(&relative_pieces(board, perspective), out);
            }

            fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
                pairs_delta::<$lines>(board, mv, out);
            }
        }
    };
}

/// The `ph` block (1152 indices): consecutive pieces along each file, in rank order.
pub struct Ph;

/// The `pv` block (1152 indices): consecutive pieces along each rank, in file order.
pub struct Pv;

/// The `pd1` block (2160 indices): consecutive pieces along each diagonal with `file + rank`
/// constant (line number `file + rank`), in file order.
pub struct Pd1;

/// The `pd2` block (2160 indices): consecutive pieces along each diagonal with `file - rank`
/// constant (line number `file + 7 - rank`), in file order.
pub struct Pd2;

pair_block!(
    Ph,
    Files,
    "ph",
    "PH: consecutive piece pairs along each file, file*144 + pair (1152)"
);
pair_block!(
    Pv,
    Ranks,
    "pv",
    "PV: consecutive piece pairs along each rank, rank*144 + pair (1152)"
);
pair_block!(
    Pd1,
    Diagonals,
    "pd1",
    "PD1: consecutive piece pairs along each file+rank diagonal, (file+rank)*144 + pair (2160)"
);
pair_block!(
    Pd2,
    AntiDiagonals,
    "pd2",
    "PD2: consecutive piece pairs along each file-rank diagonal, (file+7-rank)*144 + pair (2160)"
);

plugin_api::export_plugin!(Ph, Pv, Pd1, Pd2);

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::conformance::{Settings, check_blocks};
    use plugin_api::testing::{active_sorted, start_board};
    use plugin_api::{BlockDescriptor, MoveKind, NO_ROLE, NO_SQUARE, square};

    plugin_api::conformance_test!(Ph, Pv, Pd1, Pd2);

    const BACK: [Role; 8] = [
        Role::Rook,
        Role::Knight,
        Role::Bishop,
        Role::Queen,
        Role::King,
        Role::Bishop,
        Role::Knight,
        Role::Rook,
    ];

    fn empty_board() -> Board {
        Board {
            by_color: [0; 2],
            by_role: [0; 6],
            castling: 0,
            turn: Color::White,
            ep_square: NO_SQUARE,
        }
    }

    /// (removed, added) of one perspective, sorted.
    fn delta_sorted<B: FeatureBlock>(board: &Board, mv: &Move, p: Color) -> (Vec<u32>, Vec<u32>) {
        let cap = B::MAX_DELTA as usize;
        let mut bufs: [Vec<u32>; 4] = std::array::from_fn(|_| vec![0; cap]);
        let mut md = MoveDelta::over(&mut bufs);
        B::delta(board, mv, &mut md);
        assert_eq!(md.refresh, [false; 2]);
        let mut removed = md.removed[p.index()].as_slice().to_vec();
        let mut added = md.added[p.index()].as_slice().to_vec();
        removed.sort_unstable();
        added.sort_unstable();
        (removed, added)
    }

    #[test]
    fn pair_index_layout() {
        // Black rook a2 then black pawn a6 on the a-file, seen by White: 0*144 + 3*24 + 0 + 0 + 0.
        assert_eq!(pair_index(0, Role::Rook, false, Role::Pawn, false), 72);
        // Own king then own queen on line 14: 14*144 + 5*24 + 12 + 4*2 + 1.
        assert_eq!(pair_index(14, Role::King, true, Role::Queen, true), 2157);
        assert_eq!(pair_index(14, Role::King, true, Role::King, true), 2160 - 1);
        assert_eq!(<Ph as FeatureBlock>::SIZE, 1152);
        assert_eq!(<Pv as FeatureBlock>::SIZE, 1152);
        assert_eq!(<Pd1 as FeatureBlock>::SIZE, 2160);
        assert_eq!(<Pd2 as FeatureBlock>::SIZE, 2160);
    }

    #[test]
    fn geometry_worked_examples() {
        // ph, start position, file a: (own R, own P) = 85 is row 6 (R), column 0 (P);
        // (own P, enemy p) = 12 is row 0, column 1; (enemy p, enemy r) = 6 is row 1, column 7.
        assert_eq!(Ph::place(85), Place::cell(0, [0, 6]));
        assert_eq!(Ph::place(12), Place::cell(0, [1, 0]));
        assert_eq!(Ph::place(6), Place::cell(0, [7, 1]));
        assert_eq!(Ph::sheet_name(0), "file a");
        // pv, Black's view of the asymmetric board: rank 8, enemy rook then enemy king (1090):
        // row 7 (r), column 11 (k).
        assert_eq!(Pv::place(1090), Place::cell(7, [11, 7]));
        assert_eq!(Pv::sheet_name(7), "rank 8");
        // pd1 diagonal 1 of the start position: own pawn a2 then own knight b1 (159).
        assert_eq!(Pd1::place(159), Place::cell(1, [2, 0]));
        assert_eq!(Pd2::sheet_name(14), "diagonal 14");
        assert_eq!(Pd2::sheet_name(15), "");
        // Own king then own queen on line 14 (2157): row 10 (K), column 8 (Q).
        assert_eq!(
            Pd2::place(pair_index(14, Role::King, true, Role::Queen, true)),
            Place::cell(14, [8, 10])
        );
    }

    #[test]
    fn places_invert_the_indices() {
        for line in 0..15 {
            for (r1, r2) in Role::ALL
                .into_iter()
                .flat_map(|a| Role::ALL.map(|b| (a, b)))
            {
                for (own1, own2) in [(true, true), (true, false), (false, true), (false, false)] {
                    let kind = |r: Role, own: bool| r as u8 * 2 + u8::from(!own);
                    assert_eq!(
                        pair_place(pair_index(line, r1, own1, r2, own2)),
                        Place::cell(line, [kind(r2, own2), kind(r1, own1)])
                    );
                }
            }
        }
    }

    #[test]
    fn start_position_ph_pv() {
        let board = start_board();
        // ph: on file f (back-rank role R): own R, own P, enemy p, enemy r, in rank order:
        // (R own, P own) = (2R+1)*12 + 1, (P own, p enemy) = 12, (p enemy, r enemy) = 2R.
        let mut ph: Vec<u32> = BACK
            .iter()
            .enumerate()
            .flat_map(|(f, &r)| {
                let (f, r) = (f as u32 * 144, r as u32);
                [f + (2 * r + 1) * 12 + 1, f + 12, f + 2 * r]
            })
            .collect();
        ph.sort_unstable();
        assert_eq!(&ph[..3], [6, 12, 85]);
        // pv: rank 0 own pieces (R,N) = 7*12 + 3 = 87 ...; rank 1 own pawns 144 + 12 + 1 = 157
        // seven times; rank 6 enemy pawns 6*144 = 864 seven times; rank 7 enemy (r,n) = 1082 ...
        let mut pv = Vec::new();
        for w in BACK.windows(2) {
            let (a, b) = (w[0] as u32, w[1] as u32);
            pv.push((2 * a + 1) * 12 + 2 * b + 1);
            pv.push(157);
            pv.push(864);
            pv.push(7 * 144 + 2 * a * 12 + 2 * b);
        }
        pv.sort_unstable();
        assert!(pv.contains(&87) && pv.contains(&1082));
        for p in Color::ALL {
            assert_eq!(active_sorted::<Ph>(&board, p), ph);
            assert_eq!(active_sorted::<Pv>(&board, p), pv);
        }
    }

    #[test]
    fn start_position_diagonals() {
        let board = start_board();
        let pd1 = active_sorted::<Pd1>(&board, Color::White);
        let pd2 = active_sorted::<Pd2>(&board, Color::White);
        // The pairs of one line, as `index % 144`.
        let on = |v: &[u32], line: u32| -> Vec<u32> {
            v.iter()
                .copied()
                .filter(|i| i / 144 == line)
                .map(|i| i % 144)
                .collect()
        };
        // pd1 diagonal 0 is a1 alone; diagonal 1: a2 own pawn (code 1), b1 own knight (code 3):
        // 1*144 + 1*12 + 3 = 159, the smallest index.
        assert_eq!(on(&pd1, 1), [15]);
        assert_eq!(pd1[0], 159);
        // pd1 diagonal 7: a8 r (6), b7 p (0), g2 P (1), h1 R (7): (r,p) 72, (p,P) 1, (P,R) 19.
        assert_eq!(on(&pd1, 7), [1, 19, 72]);
        // pd2 diagonal 7: a1 R (7), b2 P (1), g7 p (0), h8 r (6): (R,P) 85, (P,p) 12, (p,r) 6.
        assert_eq!(on(&pd2, 7), [6, 12, 85]);
        // pd2 diagonal 1: a7 p (0), b8 n (2): 2. Diagonal 13: g1 N (3), h2 P (1): 37.
        assert_eq!(on(&pd2, 1), [2]);
        assert_eq!(on(&pd2, 13), [37]);
        assert!(on(&pd1, 0).is_empty() && on(&pd1, 14).is_empty());
        // pd1 diagonal 2 (a3 b2 c1): own P b2 (1), own B c1 (5): 1*12 + 5 = 17.
        // pd1 diagonal 3 (a4 b3 c2 d1): own P c2 (1), own Q d1 (9): 1*12 + 9 = 21.
        assert_eq!(on(&pd1, 2), [17]);
        assert_eq!(on(&pd1, 3), [21]);
        // The start position is its own mirror: Black sees the same.
        assert_eq!(active_sorted::<Pd1>(&board, Color::Black), pd1);
        assert_eq!(active_sorted::<Pd2>(&board, Color::Black), pd2);
    }

    #[test]
    fn perspectives_differ_on_an_asymmetric_board() {
        // White rook a1, black pawn a3, kings e1 / e8 (alone on the e-file pair).
        let mut b = empty_board();
        b.put(square(0, 0), Color::White, Role::Rook);
        b.put(square(0, 2), Color::Black, Role::Pawn);
        b.put(square(4, 0), Color::White, Role::King);
        b.put(square(4, 7), Color::Black, Role::King);
        // White: a-file (R own 7, p enemy 0) = 84; e-file (K own 11, k enemy 10) = 4*144 + 142.
        assert_eq!(active_sorted::<Ph>(&b, Color::White), [84, 4 * 144 + 142]);
        // Black: a-file mirrored, a6 own pawn (1) below a8 enemy rook (6): 18; e-file: e1 own
        // king (11) below e8 enemy king (10): 4*144 + 142.
        assert_eq!(active_sorted::<Ph>(&b, Color::Black), [18, 4 * 144 + 142]);
        // pv, White: rank 0 holds R a1 (7) and K e1 (11): 7*12 + 11 = 95. Black: that rank is
        // mirrored rank 7, both enemy: 7*144 + 6*12 + 10 = 1090.
        assert_eq!(active_sorted::<Pv>(&b, Color::White), [95]);
        assert_eq!(active_sorted::<Pv>(&b, Color::Black), [1090]);
        // pd1 (f + r), White: a1 0, a3 2, e1 4, e8 11: no two pieces share a diagonal.
        // pd2 (f + 7 - r), Black (mirrored a8, a6, e1, e8): 0, 2, 11, 4: none either.
        assert!(active_sorted::<Pd1>(&b, Color::White).is_empty());
        assert!(active_sorted::<Pd2>(&b, Color::Black).is_empty());
    }

    #[test]
    fn pawn_push_delta_is_tight() {
        let board = start_board();
        let e2e4 = Move {
            from: square(4, 1),
            to: square(4, 3),
            role: Role::Pawn,
            captured: NO_ROLE,
            promotion: NO_ROLE,
            kind: MoveKind::Normal,
        };
        for p in Color::ALL {
            // The e-file keeps its pairs: (K,P), (P,p), (p,k) before and after.
            assert_eq!(delta_sorted::<Ph>(&board, &e2e4, p), (vec![], vec![]));
        }
        // Rank 2 loses one (P,P) pair (d2-e2, e2-f2 become d2-f2); e4 is alone on its rank.
        assert_eq!(
            delta_sorted::<Pv>(&board, &e2e4, Color::White),
            (vec![157], vec![])
        );
        // Black sees rank 2 as rank 7 with enemy pawns: 6*144 + 0*12 + 0.
        assert_eq!(
            delta_sorted::<Pv>(&board, &e2e4, Color::Black),
            (vec![864], vec![])
        );
        // pd1, White: e2 is on diagonal 5 (a6 b5 c4 d3 e2 f1): pair (P e2, B f1) = 5*144 + 12 + 5
        // goes. e4 is on diagonal 7 between b7 and g2: (p b7, P g2) = 7*144 + 1 goes,
        // (p b7, P e4) = 7*144 + 1 and (P e4, P g2) = 7*144 + 13 come; the two 7*144 + 1 cancel.
        assert_eq!(
            delta_sorted::<Pd1>(&board, &e2e4, Color::White),
            (vec![5 * 144 + 17], vec![7 * 144 + 13])
        );
    }

    #[test]
    fn no_refresh_needed_in_random_games() {
        // The declared delta bounds hold: the kit never had to turn an overflow into a refresh.
        let blocks = [
            BlockDescriptor::of::<Ph>(),
            BlockDescriptor::of::<Pv>(),
            BlockDescriptor::of::<Pd1>(),
            BlockDescriptor::of::<Pd2>(),
        ];
        let report = check_blocks(
            &blocks,
            Settings {
                plies: 3000,
                max_game_plies: 120,
                seed: 7,
            },
        )
        .unwrap();
        assert_eq!(report.plies, 3000);
        assert_eq!(report.refreshes, 0);
    }
}
