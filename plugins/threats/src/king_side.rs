//! What both threat blocks share: their squares are mirrored by the side of the board the own
//! king stands on, so a perspective is refreshed when, and only when, its king changes side.

use plugin_api::{Board, Color, Move, MoveDelta, Square};

use crate::layout::orientation;

/// Whether `king` stands on files e–h.
#[inline(always)]
const fn on_king_side(king: Square) -> bool {
    king & 7 >= 4
}

/// The orientation of `perspective`'s squares on `board`, `None` without its king (then the
/// blocks emit nothing).
#[inline(always)]
pub fn orientation_on(board: &Board, perspective: Color) -> Option<u8> {
    board
        .king(perspective)
        .map(|king| orientation(perspective, king))
}

/// The orientation of each perspective after `mv` (legal on `board`), or `None` where the
/// perspective must be refreshed (its king changes side, or a king is missing); those refresh
/// flags are set in `out`, without playing the move ([`Board::king_after`]).
#[inline(always)]
pub fn orientations_after(board: &Board, mv: &Move, out: &mut MoveDelta<'_>) -> [Option<u8>; 2] {
    let mut orient = [None; 2];
    for p in Color::ALL {
        match (board.king(p), board.king_after(mv, p)) {
            (Some(k0), Some(k1)) if on_king_side(k0) == on_king_side(k1) => {
                orient[p.index()] = Some(orientation(p, k1));
            }
            _ => out.refresh[p.index()] = true,
        }
    }
    orient
}
