//! The thesis's axis blocks: every piece is counted on one line of the board.
//!
//! Each piece contributes exactly one index to each block. With `(f, r)` the piece's file and rank
//! after the perspective's mirror (Black sees the board mirrored **vertically only**: rank `r`
//! becomes `7 - r`, the file is unchanged), `role` its role (pawn 0 .. king 5) and `c` its colour
//! bit (**0 = the perspective's own piece**, 1 = the opponent's):
//!
//! | block | size | index |
//! | --- | --- | --- |
//! | `h` ([`H`]) | 96 | `f * 12 + role * 2 + c` |
//! | `v` ([`V`]) | 96 | `r * 12 + role * 2 + c` |
//! | `d1` ([`D1`]) | 180 | `(f + r) * 12 + role * 2 + c` |
//! | `d2` ([`D2`]) | 180 | `(f + 7 - r) * 12 + role * 2 + c` |
//!
//! `d1` numbers the 15 diagonals parallel to a8–h1 (`f + r` constant), `d2` those parallel to
//! a1–h8 (`f - r` constant). Several pieces of one kind on one line give the same index several
//! times (two own pawns on the a-file give index 0 twice in `h`); the host keeps a count per
//! index and the network input is binary. These are the layouts of the thesis reference
//! (`shared/reference/thesis-layouts.md`), so the published networks evaluate bit for bit.
//!
//! All four blocks depend only on the perspective-relative square, role and ownership of each
//! piece, so they are mirror-symmetric: Black's indices of a board equal White's indices of the
//! colour-flipped vertical mirror.
//!
//! **Pictures.** Each block is drawn as 12 sheets, one per piece kind `role * 2 + c`
//! ("own pawn", "their pawn", ...), each a strip of its lines: `h` a row of the 8 files, `v` a
//! column of the 8 ranks (rank 1 at the bottom), `d1` and `d2` a row of the 15 diagonals in
//! index order. The line of an index is `index / 12` and its sheet `index % 12`
//! ([`h_place`], [`v_place`], [`diagonal_place`]).

use plugin_api::{
    Axis, Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, PIECE_SHEETS, Place,
    RefreshTrigger, RelativePiece, file_of, piece_block_active, piece_block_delta, rank_of,
};

/// The `role * 2 + colour` part shared by all axis indices (colour 0 = own piece).
#[inline(always)]
fn piece_code(p: RelativePiece) -> u32 {
    p.role as u32 * 2 + u32::from(!p.own)
}

/// Index of one piece in the `h` block: `file * 12 + role * 2 + colour`.
#[inline(always)]
pub fn h_index(p: RelativePiece) -> u32 {
    u32::from(file_of(p.square)) * 12 + piece_code(p)
}

/// Index of one piece in the `v` block: `rank * 12 + role * 2 + colour` (mirrored rank).
#[inline(always)]
pub fn v_index(p: RelativePiece) -> u32 {
    u32::from(rank_of(p.square)) * 12 + piece_code(p)
}

/// Index of one piece in the `d1` block: `(file + rank) * 12 + role * 2 + colour`.
#[inline(always)]
pub fn d1_index(p: RelativePiece) -> u32 {
    u32::from(file_of(p.square) + rank_of(p.square)) * 12 + piece_code(p)
}

/// Index of one piece in the `d2` block: `(file + 7 - rank) * 12 + role * 2 + colour`.
#[inline(always)]
pub fn d2_index(p: RelativePiece) -> u32 {
    u32::from(file_of(p.square) + 7 - rank_of(p.square)) * 12 + piece_code(p)
}

/// Where an `h` index is drawn: sheet `index % 12` (the piece kind), cell (file, 0) of an 8 × 1
/// strip, `file = index / 12`.
#[inline]
pub fn h_place(index: u32) -> Place {
    Place::cell(index % 12, [(index / 12) as u8, 0])
}

/// Where a `v` index is drawn: sheet `index % 12` (the piece kind), cell (0, rank) of a 1 × 8
/// strip, `rank = index / 12` (perspective-relative, rank 1 at the bottom).
#[inline]
pub fn v_place(index: u32) -> Place {
    Place::cell(index % 12, [0, (index / 12) as u8])
}

/// Where a `d1` or `d2` index is drawn: sheet `index % 12` (the piece kind), cell (diagonal, 0)
/// of a 15 × 1 strip, `diagonal = index / 12` (`file + rank` for `d1`, `file + 7 - rank` for
/// `d2`).
#[inline]
pub fn diagonal_place(index: u32) -> Place {
    Place::cell(index % 12, [(index / 12) as u8, 0])
}

/// 12 sheets (piece kinds) of a strip of the 8 files.
const H_GRID: Grid = Grid::cells(12, [8, 1], [Axis::File, Axis::Index], "file");
/// 12 sheets (piece kinds) of a column of the 8 ranks, rank 1 at the bottom.
const V_GRID: Grid = Grid::cells(12, [1, 8], [Axis::Index, Axis::Rank], "rank");
/// 12 sheets (piece kinds) of a strip of the 15 `file + rank` diagonals.
const D1_GRID: Grid = Grid::cells(
    12,
    [15, 1],
    [Axis::Index, Axis::Index],
    "diagonal (file + rank)",
);
/// 12 sheets (piece kinds) of a strip of the 15 `file + 7 - rank` diagonals.
const D2_GRID: Grid = Grid::cells(
    12,
    [15, 1],
    [Axis::Index, Axis::Index],
    "diagonal (file + 7 − rank)",
);

/// The `h` block (96 indices): pieces counted per file.
pub struct H;

/// The `v` block (96 indices): pieces counted per rank (mirrored for Black).
pub struct V;

/// The `d1` block (180 indices): pieces counted per diagonal with `file + rank` constant.
pub struct D1;

/// The `d2` block (180 indices): pieces counted per diagonal with `file - rank` constant.
pub struct D2;

/// Implements [`FeatureBlock`] for an axis block from its index function.
macro_rules! axis_block {
    (
        $block:ty,
        $name:literal,
        $description:literal,
        $size:literal,
        $index:path,
        $grid:expr,
        $place:path
    ) => {
        impl FeatureBlock for $block {
            const NAME: &'static str = $name;
            const DESCRIPTION: &'static str = $description;
            const SIZE: u32 = $size;
            /// One index per piece.
            const MAX_ACTIVE: u32 = 32;
            /// A move removes at most two pieces and adds at most two.
            const MAX_DELTA: u32 = 2;
            const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
            const GEOMETRY: Grid = $grid;

            const SHEET_NAMES: &'static [&'static str] = &PIECE_SHEETS;

            fn place(index: u32) -> Place {
                $place(index)
            }

            fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
                piece_block_active(board, perspective, out, $index);
            }

            fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
                piece_block_delta(board, mv, out, $index);
            }
        }
    };
}

axis_block!(
    H,
    "h",
    "H: pieces per file, file*12 + role*2 + colour (96)",
    96,
    h_index,
    H_GRID,
    h_place
);
axis_block!(
    V,
    "v",
    "V: pieces per rank, rank*12 + role*2 + colour (96)",
    96,
    v_index,
    V_GRID,
    v_place
);
axis_block!(
    D1,
    "d1",
    "D1: pieces per diagonal, (file+rank)*12 + role*2 + colour (180)",
    180,
    d1_index,
    D1_GRID,
    diagonal_place
);
axis_block!(
    D2,
    "d2",
    "D2: pieces per anti-diagonal, (file+7-rank)*12 + role*2 + colour (180)",
    180,
    d2_index,
    D2_GRID,
    diagonal_place
);

plugin_api::export_plugin!(H, V, D1, D2);

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::testing::{active_sorted, start_board};
    use plugin_api::{PieceOnSquare, Role, square};

    plugin_api::conformance_test!(H, V, D1, D2);

    fn rel(perspective: Color, file: u8, rank: u8, color: Color, role: Role) -> RelativePiece {
        RelativePiece::new(
            perspective,
            PieceOnSquare {
                square: square(file, rank),
                color,
                role,
            },
        )
    }

    #[test]
    fn hand_computed_indices() {
        use Color::{Black, White};
        // Rook a1 seen by White: file 0, rank 0, rook 3, own 0.
        let rook_a1 = rel(White, 0, 0, White, Role::Rook);
        assert_eq!(h_index(rook_a1), 6);
        assert_eq!(v_index(rook_a1), 6);
        assert_eq!(d1_index(rook_a1), 6);
        assert_eq!(d2_index(rook_a1), 7 * 12 + 6);
        // King e1 seen by White: h = 4*12 + 10 = 58; d1 = (4+0)*12 + 10 = 58.
        let king_e1 = rel(White, 4, 0, White, Role::King);
        assert_eq!(h_index(king_e1), 58);
        assert_eq!(d1_index(king_e1), 58);
        assert_eq!(d2_index(king_e1), 11 * 12 + 10);
        // Black sees the white rook a1 as an enemy rook on a8: v = 7*12 + 6 + 1 = 91,
        // d1 = (0+7)*12 + 7 = 91, d2 = (0+7-7)*12 + 7 = 7, h unchanged but enemy: 7.
        let rook_a1_b = rel(Black, 0, 0, White, Role::Rook);
        assert_eq!(h_index(rook_a1_b), 7);
        assert_eq!(v_index(rook_a1_b), 91);
        assert_eq!(d1_index(rook_a1_b), 91);
        assert_eq!(d2_index(rook_a1_b), 7);
        // Black's own queen on d8 seen by Black: square d1, own: h = 3*12 + 8 = 44, v = 8,
        // d1 = 3*12 + 8 = 44, d2 = (3+7)*12 + 8 = 128.
        let queen_d8_b = rel(Black, 3, 7, Black, Role::Queen);
        assert_eq!(h_index(queen_d8_b), 44);
        assert_eq!(v_index(queen_d8_b), 8);
        assert_eq!(d1_index(queen_d8_b), 44);
        assert_eq!(d2_index(queen_d8_b), 128);
        // Pawn h7 of Black seen by White: file 7, rank 6, enemy pawn 1.
        let pawn_h7 = rel(White, 7, 6, Black, Role::Pawn);
        assert_eq!(h_index(pawn_h7), 85);
        assert_eq!(v_index(pawn_h7), 73);
        assert_eq!(d1_index(pawn_h7), 13 * 12 + 1);
        assert_eq!(d2_index(pawn_h7), 8 * 12 + 1);
    }

    #[test]
    fn geometry_worked_examples() {
        use Color::{Black, White};
        // White's own rook a1: sheet 6 "own rook"; file a, rank 1, diagonals 0 and 7.
        let rook_a1 = rel(White, 0, 0, White, Role::Rook);
        assert_eq!(H::place(h_index(rook_a1)), Place::cell(6, [0, 0]));
        assert_eq!(V::place(v_index(rook_a1)), Place::cell(6, [0, 0]));
        assert_eq!(D1::place(d1_index(rook_a1)), Place::cell(6, [0, 0]));
        assert_eq!(D2::place(d2_index(rook_a1)), Place::cell(6, [7, 0]));
        assert_eq!(H::sheet_name(6), "own rook");
        // Black sees the white rook a1 as an enemy rook on a8: sheet 7, rank 8, diagonals 7, 0.
        let rook_a1_b = rel(Black, 0, 0, White, Role::Rook);
        assert_eq!(V::place(91), Place::cell(7, [0, 7]));
        assert_eq!(V::place(v_index(rook_a1_b)), Place::cell(7, [0, 7]));
        assert_eq!(D1::place(d1_index(rook_a1_b)), Place::cell(7, [7, 0]));
        assert_eq!(D2::place(d2_index(rook_a1_b)), Place::cell(7, [0, 0]));
        // Black's pawn h7 seen by White: "their pawn", file h, rank 7, diagonals 13 and 8.
        let pawn_h7 = rel(White, 7, 6, Black, Role::Pawn);
        assert_eq!(H::place(h_index(pawn_h7)), Place::cell(1, [7, 0]));
        assert_eq!(V::place(v_index(pawn_h7)), Place::cell(1, [0, 6]));
        assert_eq!(D1::place(d1_index(pawn_h7)), Place::cell(1, [13, 0]));
        assert_eq!(D2::place(d2_index(pawn_h7)), Place::cell(1, [8, 0]));
        assert_eq!(D2::sheet_name(1), "their pawn");
    }

    #[test]
    fn places_invert_the_indices() {
        for sq in 0..64 {
            for color in Color::ALL {
                for role in Role::ALL {
                    for p in Color::ALL {
                        let r = rel(p, sq % 8, sq / 8, color, role);
                        let kind = role as u32 * 2 + u32::from(color != p);
                        let (f, k) = (file_of(r.square), rank_of(r.square));
                        assert_eq!(H::place(h_index(r)), Place::cell(kind, [f, 0]));
                        assert_eq!(V::place(v_index(r)), Place::cell(kind, [0, k]));
                        assert_eq!(D1::place(d1_index(r)), Place::cell(kind, [f + k, 0]));
                        assert_eq!(D2::place(d2_index(r)), Place::cell(kind, [f + 7 - k, 0]));
                    }
                }
            }
        }
    }

    #[test]
    fn start_position_h_and_v() {
        let board = start_board();
        let back = [3u32, 1, 2, 4, 5, 2, 1, 3];
        // h: every file holds an own and an enemy pawn and an own and an enemy back-rank piece.
        let mut expected: Vec<u32> = (0..8u32)
            .flat_map(|f| {
                let r = back[f as usize];
                [f * 12, f * 12 + 1, f * 12 + r * 2, f * 12 + r * 2 + 1]
            })
            .collect();
        expected.sort_unstable();
        for p in Color::ALL {
            assert_eq!(active_sorted::<H>(&board, p), expected);
        }
        // v, White: rank 0 = own back rank, 1 = own pawns (index 12, eight times),
        // 6 = enemy pawns (73), 7 = enemy back rank.
        let mut expected: Vec<u32> = back
            .iter()
            .flat_map(|&r| [r * 2, 12, 73, 84 + r * 2 + 1])
            .collect();
        expected.sort_unstable();
        assert_eq!(active_sorted::<V>(&board, Color::White), expected);
        // The start position is its own colour-flipped mirror.
        assert_eq!(active_sorted::<V>(&board, Color::Black), expected);
    }

    #[test]
    fn start_position_diagonals() {
        let board = start_board();
        let w1 = active_sorted::<D1>(&board, Color::White);
        let w2 = active_sorted::<D2>(&board, Color::White);
        assert_eq!(w1.len(), 32);
        assert_eq!(w2.len(), 32);
        // Diagonal 0 of d1 holds only a1 (own rook): index 6.
        assert_eq!(w1.iter().filter(|&&i| i < 12).collect::<Vec<_>>(), [&6]);
        // Diagonal 14 of d1 holds only h8 (enemy rook): 14*12 + 7 = 175.
        assert_eq!(w1.iter().filter(|&&i| i >= 168).collect::<Vec<_>>(), [&175]);
        // Diagonal 0 of d2 holds only a8 (enemy rook): 7. Diagonal 14 only h1 (own rook): 174.
        assert_eq!(w2.iter().filter(|&&i| i < 12).collect::<Vec<_>>(), [&7]);
        assert_eq!(w2.iter().filter(|&&i| i >= 168).collect::<Vec<_>>(), [&174]);
        // Diagonal 7 of d1 (a8..h1): a8 enemy rook 91, b7 enemy pawn 85, g2 own pawn 84,
        // h1 own rook 90.
        let diag7: Vec<u32> = w1
            .iter()
            .copied()
            .filter(|i| (84..96).contains(i))
            .collect();
        assert_eq!(diag7, [84, 85, 90, 91]);
    }
}
