//! The ALL block: one index per piece, `(file * 8 + rank) * 12 + role * 2 + colour`, with the
//! square mirrored vertically for Black and colour 0 for the perspective's own pieces (the
//! thesis's layout, file-major; see `shared/reference/thesis-layouts.md`); and P, the same
//! without the kings, the right operand of the thesis's KP = `k*p`.
//!
//! Both are drawn as one 8 × 8 board per piece kind (`role * 2 + colour`: "own pawn", "their
//! pawn", ...), in the perspective's own orientation (rank 1 its back rank): [`all_place`] and
//! [`p_place`] decode an index back to its sheet and square.

use plugin_api::{
    Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, PIECE_SHEETS, Place,
    RefreshTrigger, RelativePiece, Role, file_of, piece_block_active, piece_block_delta, rank_of,
};

/// The ALL block (768 indices). The thesis networks call it `hv`.
pub struct All;

/// Index of one piece as a perspective sees it.
#[inline(always)]
pub fn all_index(p: RelativePiece) -> u32 {
    let sq = (file_of(p.square) * 8 + rank_of(p.square)) as u32;
    sq * 12 + p.role as u32 * 2 + u32::from(!p.own)
}

/// Where ALL index `index` is drawn: sheet `role * 2 + colour` (the index modulo 12, see
/// [`PIECE_SHEETS`]), cell (file, rank) of the square `index / 12 = file * 8 + rank`. Example:
/// White's own rook on a1 (index 6) is sheet 6 "own rook", cell [0, 0].
#[inline]
pub fn all_place(index: u32) -> Place {
    let square = index / 12;
    Place::cell(index % 12, [(square / 8) as u8, (square % 8) as u8])
}

impl FeatureBlock for All {
    const NAME: &'static str = "all";
    const DESCRIPTION: &'static str = "ALL: piece-square, (file*8+rank)*12 + role*2 + colour (768)";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 2;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
    const BINARY: bool = true;
    const PIECEWISE: bool = true;
    /// Twelve boards, one per piece kind.
    const GEOMETRY: Grid = Grid::boards(12, "square");

    const SHEET_NAMES: &'static [&'static str] = &PIECE_SHEETS;

    fn place(index: u32) -> Place {
        all_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, all_index);
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        piece_block_delta(board, mv, out, all_index);
    }
}

/// The P block (640 indices): ALL without kings, `(file * 8 + rank) * 10 + role * 2 +
/// colour` (roles pawn 0 .. queen 4). With the `king` plugin's `k` it makes the thesis's
/// KP = `k*p` (§3.3.2). Example: White's own rook a1 is 6, a black queen on d8 seen by White is
/// (3·8 + 7)·10 + 8 + 1 = 319.
pub struct P;

/// Index of one piece other than a king as a perspective sees it (`None` for kings).
#[inline(always)]
pub fn p_index(p: RelativePiece) -> Option<u32> {
    if p.role == Role::King {
        return None;
    }
    let sq = (file_of(p.square) * 8 + rank_of(p.square)) as u32;
    Some(sq * 10 + p.role as u32 * 2 + u32::from(!p.own))
}

/// Where P index `index` is drawn: sheet `role * 2 + colour` (the index modulo 10: the first
/// ten of [`PIECE_SHEETS`], no kings), cell (file, rank) of the square `index / 10 = file * 8 +
/// rank`. Example: the black queen on d8 seen by White (index 319) is sheet 9 "their queen", cell
/// [3, 7].
#[inline]
pub fn p_place(index: u32) -> Place {
    let square = index / 10;
    Place::cell(index % 10, [(square / 8) as u8, (square % 8) as u8])
}

impl FeatureBlock for P {
    const NAME: &'static str = "p";
    const DESCRIPTION: &'static str =
        "P: ALL without kings, (file*8+rank)*10 + role*2 + colour (640)";
    const SIZE: u32 = 640;
    const MAX_ACTIVE: u32 = 30;
    const MAX_DELTA: u32 = 2;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::Never;
    /// Kings have no index: a king's move alone changes nothing (castling moves a rook).
    const CHANGED_BY: u8 = Role::ALL_BITS & !Role::King.bit();
    const BINARY: bool = true;
    const PIECEWISE: bool = true;
    /// Ten boards, one per piece kind other than the kings.
    const GEOMETRY: Grid = Grid::boards(10, "square");

    const SHEET_NAMES: &'static [&'static str] = PIECE_SHEETS.split_at(10).0;

    fn place(index: u32) -> Place {
        p_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, p_index);
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        piece_block_delta(board, mv, out, p_index);
    }
}

plugin_api::export_plugin!(All, P);

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::PieceOnSquare;

    plugin_api::conformance_test!(All, P);

    #[test]
    fn thesis_examples() {
        // White's perspective, start position: rook a1 is 6, king e1 is 394.
        let rook = PieceOnSquare {
            square: 0,
            color: Color::White,
            role: Role::Rook,
        };
        let king = PieceOnSquare {
            square: 4,
            color: Color::White,
            role: Role::King,
        };
        assert_eq!(all_index(RelativePiece::new(Color::White, rook)), 6);
        assert_eq!(all_index(RelativePiece::new(Color::White, king)), 394);
        // Black sees the white king on e1 as an enemy king on e8: (4*8+7)*12 + 10 + 1.
        assert_eq!(all_index(RelativePiece::new(Color::Black, king)), 479);
        // P: the rook keeps its square with 10 planes per square; kings have no index; a black
        // queen on d8 seen by White is (3*8+7)*10 + 8 + 1.
        assert_eq!(p_index(RelativePiece::new(Color::White, rook)), Some(6));
        assert_eq!(p_index(RelativePiece::new(Color::White, king)), None);
        let queen = PieceOnSquare {
            square: 59,
            color: Color::Black,
            role: Role::Queen,
        };
        assert_eq!(p_index(RelativePiece::new(Color::White, queen)), Some(319));
    }

    #[test]
    fn geometry_worked_examples() {
        // White's own rook a1: sheet 6 "own rook", cell [0, 0], in both blocks.
        assert_eq!(All::place(6), Place::cell(6, [0, 0]));
        assert_eq!(All::sheet_name(6), "own rook");
        assert_eq!(P::place(6), Place::cell(6, [0, 0]));
        // The white king e1 seen by Black is an enemy king on e8: sheet 11, cell [4, 7].
        assert_eq!(All::place(479), Place::cell(11, [4, 7]));
        assert_eq!(All::sheet_name(11), "their king");
        // P: the black queen d8 seen by White (319) is "their queen" on d8.
        assert_eq!(P::place(319), Place::cell(9, [3, 7]));
        assert_eq!(P::sheet_name(9), "their queen");
        assert_eq!(P::sheet_name(10), "");
    }

    #[test]
    fn places_invert_the_indices() {
        // Every piece on every square, from both perspectives: the index is drawn on the
        // piece's kind and on the square the perspective sees it on.
        for square in 0..64 {
            for color in Color::ALL {
                for role in Role::ALL {
                    let piece = PieceOnSquare {
                        square,
                        color,
                        role,
                    };
                    for p in Color::ALL {
                        let rel = RelativePiece::new(p, piece);
                        let kind = role as u32 * 2 + u32::from(color != p);
                        let want = Place::square(kind, rel.square);
                        assert_eq!(all_place(all_index(rel)), want);
                        if let Some(ix) = p_index(rel) {
                            assert_eq!(p_place(ix), want);
                        }
                    }
                }
            }
        }
    }
}
