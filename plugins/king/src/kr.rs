//! The KR block: every piece's offset from the own king (the thesis code's `KingBlock`).

use plugin_api::{
    Board, Color, FeatureBlock, IndexList, Move, MoveDelta, PieceOnSquare, RefreshTrigger, Square,
    file_of, rank_of,
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
}
