//! Stockfish 12's HalfKP, index for index.

use plugin_api::{
    Axis, Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, PIECE_SHEETS,
    PieceOnSquare, Place, RefreshTrigger, Role, Square,
};

use crate::relative::KingRelative;

/// HalfKP (64 king squares × 641 = 41,024 indices), as Stockfish 12 defines it in
/// `src/nnue/features/half_kp.{h,cpp}` and `evaluate.h` (official-stockfish/Stockfish, tag
/// `sf_12`), the first NNUE layout:
///
/// ```text
/// index = orient(s) + 1 + (role · 2 + (1 if the piece is the opponent's)) · 64 + 641 · orient(king)
/// orient(s) = s for White, s ^ 63 for Black (a rotation by 180°, not a mirror)
/// ```
///
/// Kings are not pieces here (only the own king's square, as the bucket), and index 0 of every
/// bucket (`PS_NONE`) is never active. Because Black's view is rotated, the block is not
/// mirror-symmetric in the sense of the conformance kit.
///
/// Worked examples, start position: White's rook a1 is 0 + 1 + 6·64 + 641·4 = 2,949; Black's
/// own rook a8 is (56 ^ 63) + 1 + 384 + 641·(60 ^ 63) = 7 + 385 + 1,923 = 2,315.
///
/// **Picture** ([`halfkp_place`]): one sheet per piece plane (own and their pawn .. queen), each
/// an 8 × 8 grid of tiles, the own king's square, and each tile an 8 × 8 board of the piece's
/// square. Both squares are drawn in the index's own frame: as they are for White, rotated by
/// 180° for Black (so from Black's side the file labels a–h name the real files h–a).
pub struct HalfKp;

/// Where HalfKP index `index = s' + 1 + plane · 64 + 641 · k'` is drawn (see [`HalfKp`]): sheet
/// `plane`, tile (file, rank) of the oriented king square `k' = index / 641`, cell (file, rank) of
/// the oriented piece square `s'`; index 0 of each king square (`PS_NONE`, never active) is not
/// drawn. Example: White's rook a1 with its king on e1 (2,949) is sheet 6 "own rook", tile
/// [4, 0], cell [0, 0].
#[inline]
pub fn halfkp_place(index: u32) -> Place {
    let (king, rest) = (index / 641, index % 641);
    let Some(plane_square) = rest.checked_sub(1) else {
        return Place::NONE;
    };
    let square = plane_square % 64;
    Place {
        sheet: plane_square / 64,
        tile: [(king % 8) as u8, (king / 8) as u8],
        cell: [(square % 8) as u8, (square / 8) as u8],
    }
}

/// The index of `piece` for `perspective`, whose king stands on `king`; `None` for kings.
#[inline(always)]
pub fn halfkp_index(perspective: Color, king: Square, piece: PieceOnSquare) -> Option<u32> {
    if piece.role == Role::King {
        return None;
    }
    let rotate = if perspective == Color::Black { 63 } else { 0 };
    let ps = 1 + (piece.role as u32 * 2 + u32::from(piece.color != perspective)) * 64;
    Some(u32::from(piece.square ^ rotate) + ps + 641 * u32::from(king ^ rotate))
}

impl KingRelative for HalfKp {
    #[inline(always)]
    fn index(perspective: Color, king: Square, piece: PieceOnSquare) -> Option<u32> {
        halfkp_index(perspective, king, piece)
    }
}

impl FeatureBlock for HalfKp {
    const NAME: &'static str = "halfkp";
    const DESCRIPTION: &'static str =
        "HalfKP: Stockfish 12's own king square x 641 piece-squares, kings excluded (41024)";
    const SIZE: u32 = 41_024;
    const MAX_ACTIVE: u32 = 30;
    const MAX_DELTA: u32 = 2;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingMove;
    const BINARY: bool = true;
    const PIECEWISE: bool = true;
    const MIRROR_SYMMETRIC: bool = false;
    /// 10 piece planes of 64 own king squares (8 × 8) of boards.
    const GEOMETRY: Grid = Grid::boards(10, "piece square").with_tiles(
        [8, 8],
        [Axis::File, Axis::Rank],
        "own king square",
    );

    const SHEET_NAMES: &'static [&'static str] = PIECE_SHEETS.split_at(10).0;

    fn place(index: u32) -> Place {
        halfkp_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        <HalfKp as KingRelative>::active(board, perspective, out);
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        <HalfKp as KingRelative>::delta(board, mv, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::square;

    #[test]
    fn worked_examples() {
        let rook = |file, rank, color| PieceOnSquare {
            square: square(file, rank),
            color,
            role: Role::Rook,
        };
        assert_eq!(
            halfkp_index(Color::White, square(4, 0), rook(0, 0, Color::White)),
            Some(2949)
        );
        assert_eq!(
            halfkp_index(Color::Black, square(4, 7), rook(0, 7, Color::Black)),
            Some(2315)
        );
        let king = PieceOnSquare {
            square: square(4, 0),
            color: Color::White,
            role: Role::King,
        };
        assert_eq!(halfkp_index(Color::White, square(4, 0), king), None);
    }

    #[test]
    fn geometry_worked_examples() {
        // White's rook a1, king e1: "own rook", tile e1, cell a1.
        let p = HalfKp::place(2949);
        assert_eq!((p.sheet, p.tile, p.cell), (6, [4, 0], [0, 0]));
        assert_eq!(HalfKp::sheet_name(6), "own rook");
        // Black's rook a8, king e8, rotated: tile 60 ^ 63 = 3 (d1), cell 56 ^ 63 = 7 (h1).
        let p = HalfKp::place(2315);
        assert_eq!((p.sheet, p.tile, p.cell), (6, [3, 0], [7, 0]));
        // PS_NONE of every king square is not drawn.
        assert!(HalfKp::place(0).is_none());
        assert!(HalfKp::place(641 * 63).is_none());
        assert_eq!(HalfKp::sheet_name(10), "");
    }

    #[test]
    fn places_invert_the_indices() {
        for p in Color::ALL {
            let rotate = if p == Color::Black { 63 } else { 0 };
            for king in 0..64u8 {
                for sq in 0..64u8 {
                    for color in Color::ALL {
                        for role in Role::ALL {
                            let pc = PieceOnSquare {
                                square: sq,
                                color,
                                role,
                            };
                            let Some(ix) = halfkp_index(p, king, pc) else {
                                continue;
                            };
                            let (k, s) = (king ^ rotate, sq ^ rotate);
                            let want = Place {
                                sheet: role as u32 * 2 + u32::from(color != p),
                                tile: [k % 8, k / 8],
                                cell: [s % 8, s / 8],
                            };
                            assert_eq!(halfkp_place(ix), want);
                        }
                    }
                }
            }
        }
    }
}
