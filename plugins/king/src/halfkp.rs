//! Stockfish 12's HalfKP, index for index.

use plugin_api::{
    Board, Color, FeatureBlock, IndexList, Move, MoveDelta, PieceOnSquare, RefreshTrigger, Role,
    Square,
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
pub struct HalfKp;

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
}
