//! The ALL block: one index per piece, `(file * 8 + rank) * 12 + role * 2 + colour`, with the
//! square mirrored vertically for Black and colour 0 for the perspective's own pieces (the
//! thesis's layout, file-major; see `shared/reference/thesis-layouts.md`).

use plugin_api::{
    Board, Color, FeatureBlock, IndexList, Move, MoveDelta, RelativePiece, file_of,
    piece_block_active, piece_block_delta, rank_of,
};

/// The ALL block (768 indices). The thesis networks call it `hv`.
pub struct All;

/// Index of one piece as a perspective sees it.
#[inline(always)]
pub fn all_index(p: RelativePiece) -> u32 {
    let sq = (file_of(p.square) * 8 + rank_of(p.square)) as u32;
    sq * 12 + p.role as u32 * 2 + u32::from(!p.own)
}

impl FeatureBlock for All {
    const NAME: &'static str = "all";
    const DESCRIPTION: &'static str = "ALL: piece-square, (file*8+rank)*12 + role*2 + colour (768)";
    const SIZE: u32 = 768;
    const MAX_ACTIVE: u32 = 32;
    const MAX_DELTA: u32 = 2;

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        piece_block_active(board, perspective, out, all_index);
    }

    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        piece_block_delta(board, mv, out, all_index);
    }
}

plugin_api::export_plugin!(All);

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::{PieceOnSquare, Role};

    plugin_api::conformance_test!(All);

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
    }
}
