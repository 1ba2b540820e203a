//! The K block: the perspective's own king square, oriented like ALL.

use plugin_api::{
    Board, Color, FeatureBlock, Grid, IndexList, Move, MoveDelta, Place, RefreshTrigger, Role,
    Square, file_of, rank_of,
};

/// K (64 indices): `file * 8 + rank` of the own king's square, mirrored vertically for Black
/// (ALL's square numbering, so `k*all` is the thesis's KA = SQUAREₖ × ALL).
///
/// Worked examples: White's king on e1 is 4·8 + 0 = 32; Black's king on g8 is seen from Black as
/// g1, 6·8 + 0 = 48. In `k*all` (striding `k·768 + all`) White's own rook on a1 with its king on
/// e1 is 32·768 + 6 = 24,582.
///
/// Drawn as one board, the own king's square ([`k_place`]); as the left factor of a product
/// (`k*all`) its squares become the tiles of the right factor's sheets.
pub struct K;

/// The index of a king on `king` (a board square) seen from `perspective`.
#[inline(always)]
pub fn k_index(perspective: Color, king: Square) -> u32 {
    let sq = perspective.relative(king);
    u32::from(file_of(sq) * 8 + rank_of(sq))
}

/// Where K index `index = file * 8 + rank` is drawn: the only sheet, cell (file, rank).
/// Example: White's king on e1 (32) is cell [4, 0].
#[inline]
pub fn k_place(index: u32) -> Place {
    Place::cell(0, [(index / 8) as u8, (index % 8) as u8])
}

impl FeatureBlock for K {
    const NAME: &'static str = "k";
    const DESCRIPTION: &'static str = "K: own king square, file*8+rank, mirrored for Black (64)";
    const SIZE: u32 = 64;
    const MAX_ACTIVE: u32 = 1;
    const MAX_DELTA: u32 = 1;
    const REFRESH_TRIGGER: RefreshTrigger = RefreshTrigger::OwnKingSquare;
    /// Only a king's move changes it.
    const CHANGED_BY: u8 = Role::King.bit();
    const BINARY: bool = true;
    const PIECEWISE: bool = true;
    /// One board of the own king's square.
    const GEOMETRY: Grid = Grid::boards(1, "own king square");

    const SHEET_NAMES: &'static [&'static str] = &["own king"];

    fn place(index: u32) -> Place {
        k_place(index)
    }

    fn active(board: &Board, perspective: Color, out: &mut IndexList<'_>) {
        if let Some(king) = board.king(perspective) {
            out.push(k_index(perspective, king));
        }
    }

    /// Only the mover's own perspective changes, and only when its king moves.
    fn delta(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) {
        for p in Color::ALL {
            if board.moves_king_of(mv, p)
                && let (Some(from), Some(to)) = (board.king(p), board.king_after(mv, p))
            {
                out.removed[p.index()].push(k_index(p, from));
                out.added[p.index()].push(k_index(p, to));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_api::square;

    #[test]
    fn worked_examples() {
        assert_eq!(k_index(Color::White, square(4, 0)), 32);
        assert_eq!(k_index(Color::Black, square(6, 7)), 48);
        assert_eq!(k_index(Color::White, square(7, 7)), 63);
    }

    #[test]
    fn geometry_worked_examples() {
        assert_eq!(K::place(32), Place::cell(0, [4, 0]));
        // Black's king on g8 is seen on g1.
        assert_eq!(
            K::place(k_index(Color::Black, square(6, 7))),
            Place::cell(0, [6, 0])
        );
        assert_eq!(K::place(63), Place::cell(0, [7, 7]));
        assert_eq!(K::sheet_name(0), "own king");
        for p in Color::ALL {
            for king in 0..64 {
                assert_eq!(
                    K::place(k_index(p, king)),
                    Place::square(0, p.relative(king))
                );
            }
        }
    }
}
