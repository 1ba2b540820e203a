//! Test fixture for the picture tool's test: a plugin drawn without any change to the tool. Its
//! one block, `king_zone`, exists in no other plugin and declares a geometry of its own (3 × 3
//! grids around the own king), so a test that draws it shows that the tool draws any block from
//! its declared [`Grid`] and places alone. Its file name does not match the plugin pattern
//! (`*nnue_plugin_*`), so it is only ever loaded by tests that ask for it explicitly.

use plugin_api::{
    Axis, Board, Color, FeatureBlock, Grid, IndexList, PIECE_SHEETS, Place, RelativePiece, file_of,
    piece_block_active, rank_of,
};

/// `king_zone` (108 indices): the pieces on the 3 × 3 squares around the perspective's own
/// king (its own square included), by kind and offset:
///
/// ```text
/// index = kind · 9 + (dr + 1) · 3 + (df + 1)
/// ```
///
/// with `kind = role · 2 + c` (c = 0 for the perspective's own pieces) and `df`, `dr` in −1..=1
/// the piece's file and rank minus the king's, on the board mirrored vertically for Black.
/// Without an own king there are no indices. Every square holds one piece, so the block is
/// binary; it depends only on perspective-relative squares and ownership, so it is
/// mirror-symmetric.
///
/// Worked examples, start position, White's view (king e1): the own king itself is
/// 10 · 9 + 1 · 3 + 1 = 94, the own queen d1 (df −1, dr 0) is 8 · 9 + 3 + 0 = 75 and the own
/// pawn f2 (df 1, dr 1) is 0 · 9 + 6 + 2 = 8.
///
/// **Picture** ([`king_zone_place`]): 12 sheets, one per piece kind, of 3 × 3 cells drawn like
/// a diagram around the king: column `df + 1` (files left to right), row `1 − dr` counted from
/// the top (the rank ahead of the king on top), the king's own square in the centre [1, 1].
pub struct KingZone;

/// The index of `p` if it stands in the 3 × 3 zone around the own king `king` (both
/// perspective-relative squares).
#[inline]
pub fn king_zone_index(king: u8, p: RelativePiece) -> Option<u32> {
    let df = i32::from(file_of(p.square)) - i32::from(file_of(king));
    let dr = i32::from(rank_of(p.square)) - i32::from(rank_of(king));
    if df.abs() > 1 || dr.abs() > 1 {
        return None;
    }
    let kind = p.role as u32 * 2 + u32::from(!p.own);
    Some(kind * 9 + (dr + 1) as u32 * 3 + (df + 1) as u32)
}

/// Where `king_zone` index `index` is drawn: sheet `index / 9` (the kind), and with
/// `zone = index % 9 = (dr + 1) · 3 + (df + 1)` the cell (`zone % 3`, `2 − zone / 3`), i.e.
/// (df + 1, 1 − dr). Example: the own pawn f2 of the king e1 (8: df 1, dr 1) is sheet 0
/// "own pawn", cell [2, 0] (top right).
#[inline]
pub fn king_zone_place(index: u32) -> Place {
    let zone = index % 9;
    Place::cell(index / 9, [(zone % 3) as u8, (2 - zone / 3) as u8])
}

impl FeatureBlock for KingZone {
    const NAME: &'static str = "king_zone";
    const DESCRIPTION: &'static str =
        "test fixture: pieces on the 3x3 squares around the own king, kind*9 + zone (108)";
    const SIZE: u32 = 108;
    /// Nine squares, one piece each.
    const MAX_ACTIVE: u32 = 9;
    /// A king move can replace the whole zone.
    const MAX_DELTA: u32 = 9;
    const MIRROR_SYMMETRIC: bool = true;
    const BINARY: bool = true;
    /// 12 sheets (piece kinds) of the 3 × 3 zone.
    const GEOMETRY: Grid = Grid::cells(
        12,
        [3, 3],
        [Axis::Index, Axis::Index],
        "square around the own king (file offset, rank offset)",
    );

    const SHEET_NAMES: &'static [&'static str] = &PIECE_SHEETS;

    fn place(index: u32) -> Place {
        king_zone_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        let Some(king) = board.king(perspective) else {
            return;
        };
        let king = perspective.relative(king);
        piece_block_active(board, perspective, out, |p| king_zone_index(king, p));
    }
}

plugin_api::export_plugin!(KingZone);

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::testing::{active_sorted, start_board};
    use plugin_api::{Role, square};

    plugin_api::conformance_test!(KingZone);

    #[test]
    fn worked_examples() {
        let board = start_board();
        // King e1: d2 P (6), e2 P (7), f2 P (8), f1 B (4*9 + 3 + 2 = 41), d1 Q (8*9 + 3 = 75),
        // e1 K (10*9 + 3 + 1 = 94).
        assert_eq!(
            active_sorted::<KingZone>(&board, Color::White),
            [6, 7, 8, 41, 75, 94]
        );
        // The start position is its own mirror.
        assert_eq!(
            active_sorted::<KingZone>(&board, Color::Black),
            [6, 7, 8, 41, 75, 94]
        );
        let pawn_f2 = RelativePiece {
            square: square(5, 1),
            role: Role::Pawn,
            own: true,
        };
        assert_eq!(king_zone_index(square(4, 0), pawn_f2), Some(8));
        assert_eq!(king_zone_index(square(2, 0), pawn_f2), None);
        // Places: the pawn f2 top right, the king in the centre, the queen d1 middle left.
        assert_eq!(KingZone::place(8), Place::cell(0, [2, 0]));
        assert_eq!(KingZone::place(94), Place::cell(10, [1, 1]));
        assert_eq!(KingZone::place(75), Place::cell(8, [0, 1]));
        assert_eq!(KingZone::place(41), Place::cell(4, [2, 1]));
        assert_eq!(KingZone::sheet_name(8), "own queen");
        // An enemy piece below and left of the king (df -1, dr -1): kind 3, zone 0, bottom left.
        assert_eq!(KingZone::place(27), Place::cell(3, [0, 2]));
    }

    #[test]
    fn places_invert_the_indices() {
        for king in 0..64u8 {
            for sq in 0..64u8 {
                for role in Role::ALL {
                    for own in [true, false] {
                        let p = RelativePiece {
                            square: sq,
                            role,
                            own,
                        };
                        let Some(ix) = king_zone_index(king, p) else {
                            continue;
                        };
                        let kind = role as u32 * 2 + u32::from(!own);
                        let column = file_of(sq) + 1 - file_of(king);
                        let row = rank_of(king) + 1 - rank_of(sq);
                        assert_eq!(king_zone_place(ix), Place::cell(kind, [column, row]));
                    }
                }
            }
        }
    }
}
