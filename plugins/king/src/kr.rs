//! The KR block: every piece's offset from the own king (the thesis code's `KingBlock`).

use plugin_api::{
    Axis, Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, PIECE_SHEETS,
    PieceOnSquare, Place, RefreshTrigger, Square, file_of, rank_of,
};

use crate::relative::KingRelative;

/// KR (15 × 15 × 12 = 2,700 indices): for each piece, the king's file and rank minus the
/// piece's, each shifted by 7 into 0..15, as `(df * 15 + dr) * 12 + role * 2 + colour` (colour 0
/// for the perspective's own pieces), squares mirrored vertically for Black. This is
/// `KingBlock` of the thesis's code (`nn/src/feature_set/blocks/king.rs` of
/// mlomb/cs-master-thesis), which it defined but never trained; kings count as pieces, so the
/// own king is always active at (7, 7): (7·15 + 7)·12 + 10 = 1,354.
///
/// Worked example: White's king on g1 and an enemy knight on f3: df = 6 − 5 + 7 = 8,
/// dr = 0 − 2 + 7 = 5, so (8·15 + 5)·12 + 1·2 + 1 = 1,503.
///
/// Drawn as one 15 × 15 grid of offsets per piece kind ([`kr_place`]), oriented like a diagram
/// centred on the own king: the king at cell [7, 7], pieces on higher files to its right and
/// pieces on higher ranks above it.
pub struct Kr;

/// The index of `piece` for `perspective`, whose king stands on `king` (board squares).
#[inline(always)]
pub fn kr_index(perspective: Color, king: Square, piece: PieceOnSquare) -> u32 {
    let k = perspective.relative(king);
    let s = perspective.relative(piece.square);
    let df = u32::from(file_of(k) + 7 - file_of(s));
    let dr = u32::from(rank_of(k) + 7 - rank_of(s));
    (df * 15 + dr) * 12 + piece.role as u32 * 2 + u32::from(piece.color != perspective)
}

/// Where KR index `index = (df * 15 + dr) * 12 + kind` is drawn: sheet `kind` (the piece kind
/// `role * 2 + colour`), cell (column, row) = (`14 − df`, `dr`), i.e. column = the piece's file
/// minus the king's + 7 and row = 7 − (the piece's rank minus the king's), counted from the top:
/// the king in the centre [7, 7], a piece one rank ahead of it on the cell above. Example:
/// White's king g1 and an enemy knight f3 (1,503: df 8, dr 5) are sheet 3 "their knight", cell
/// [6, 5] (one file left of the king, two ranks above).
#[inline]
pub fn kr_place(index: u32) -> Place {
    let offset = index / 12;
    let (df, dr) = (offset / 15, offset % 15);
    Place::cell(index % 12, [(14 - df) as u8, dr as u8])
}

impl KingRelative for Kr {
    #[inline(always)]
    fn index(perspective: Color, king: Square, piece: PieceOnSquare) -> Option<u32> {
        Some(kr_index(perspective, king, piece))
    }
}

impl FeatureBlock for Kr {
    const NAME: &'static str = "kr";
    const DESCRIPTION: &'static str =
        "KR: piece offset from the own king, (df*15+dr)*12 + role*2 + colour (2700)";
    const SIZE: u32 = 2700;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 2;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingMove;
    const BINARY: bool = true;
    const PIECEWISE: bool = true;
    /// One 15 × 15 offset grid per piece kind, the own king in the centre.
    const GEOMETRY: Grid = Grid::cells(
        12,
        [15, 15],
        [Axis::Index, Axis::Index],
        "offset from own king (king at the centre)",
    );

    const SHEET_NAMES: &'static [&'static str] = &PIECE_SHEETS;

    fn place(index: u32) -> Place {
        kr_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        <Kr as KingRelative>::active(board, perspective, out);
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        <Kr as KingRelative>::delta(board, mv, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::{Role, square};

    #[test]
    fn worked_examples() {
        let knight = PieceOnSquare {
            square: square(5, 2),
            color: Color::Black,
            role: Role::Knight,
        };
        assert_eq!(kr_index(Color::White, square(6, 0), knight), 1503);
        let own_king = PieceOnSquare {
            square: square(4, 7),
            color: Color::Black,
            role: Role::King,
        };
        assert_eq!(kr_index(Color::Black, square(4, 7), own_king), 1354);
    }

    #[test]
    fn geometry_worked_examples() {
        // The enemy knight f3 of White's king g1: one file left, two ranks above the centre.
        assert_eq!(Kr::place(1503), Place::cell(3, [6, 5]));
        assert_eq!(Kr::sheet_name(3), "their knight");
        // The own king is always in the centre of "own king".
        assert_eq!(Kr::place(1354), Place::cell(10, [7, 7]));
        // Every piece around every king, both perspectives.
        for p in Color::ALL {
            for king in 0..64 {
                for sq in 0..64 {
                    for color in Color::ALL {
                        for role in Role::ALL {
                            let piece = PieceOnSquare {
                                square: sq,
                                color,
                                role,
                            };
                            let (k, s) = (p.relative(king), p.relative(sq));
                            let kind = role as u32 * 2 + u32::from(color != p);
                            let column = file_of(s) + 7 - file_of(k);
                            let row = rank_of(k) + 7 - rank_of(s);
                            assert_eq!(
                                kr_place(kr_index(p, king, piece)),
                                Place::cell(kind, [column, row])
                            );
                        }
                    }
                }
            }
        }
    }
}
